/** Token counts reported by a provider for one model call. */
export interface ProviderUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Anything else the provider reported, kept verbatim for diagnostics. */
  raw?: Record<string, unknown>;
}

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ImageBlock {
  type: 'image';
  /** Base64-encoded bytes. */
  data: string;
  mediaType: string;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  /** Provider signature that must be sent back unchanged (Anthropic extended thinking). */
  signature?: string;
  redacted?: boolean;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResultBlock {
  type: 'tool_result';
  toolUseId: string;
  toolName: string;
  content: string | Array<TextBlock | ImageBlock>;
  isError: boolean;
}

export type ContentBlock = TextBlock | ImageBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock;

/** `interrupted` marks an assistant reply cut short by abort; its partial text is kept. */
export type MessageState = 'complete' | 'interrupted';

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'aborted'
  | 'error';

export interface MessageMetadata {
  [key: string]: unknown;
}

export interface SystemMessage {
  role: 'system';
  content: string;
  metadata?: MessageMetadata;
}

export interface UserMessage {
  role: 'user';
  content: string | Array<TextBlock | ImageBlock>;
  metadata?: MessageMetadata;
}

export interface AssistantMessage {
  role: 'assistant';
  content: Array<TextBlock | ThinkingBlock | ToolUseBlock>;
  state: MessageState;
  stopReason?: StopReason;
  usage?: ProviderUsage;
  provider?: string;
  model?: string;
  metadata?: MessageMetadata;
}

/** The results of one batch of tool calls, one block per `tool_use` of the preceding assistant message. */
export interface ToolMessage {
  role: 'tool';
  content: ToolResultBlock[];
  metadata?: MessageMetadata;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
export type MessageRole = Message['role'];

/** The concatenated text blocks of a message. */
export function messageText(message: Message): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  let text = '';
  for (const block of content) if (block.type === 'text') text += block.text;
  return text;
}

/** The tool calls an assistant message asks for (empty for other roles). */
export function toolUses(message: Message): ToolUseBlock[] {
  if (message.role !== 'assistant') return [];
  const calls: ToolUseBlock[] = [];
  for (const block of message.content) if (block.type === 'tool_use') calls.push(block);
  return calls;
}

/**
 * Orders strings by UTF-16 code units, as `Array.prototype.sort` does by default. For ids,
 * ISO timestamps and command names; unlike `localeCompare` it does not load ICU collation,
 * which costs milliseconds on its first call.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
