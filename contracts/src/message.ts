/** Token counts reported by a provider for one model call. */
export interface ProviderUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Anything else the provider reported, kept verbatim for diagnostics. */
  raw?: Record<string, unknown>;
}

/** Plain text in a message. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** An inline image, as base64 data with its media type (`image/png`, …). */
export interface ImageBlock {
  type: 'image';
  /** Base64-encoded bytes. */
  data: string;
  mediaType: string;
}

/** The model's reasoning, when the provider exposes it. Kept in history so it can be sent back. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  /** Provider signature that must be sent back unchanged (Anthropic extended thinking). */
  signature?: string;
  redacted?: boolean;
}

/** A tool call requested by the model; `id` pairs it with its {@link ToolResultBlock}. */
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** The outcome of one tool call, matched to its call by `toolUseId`. */
export interface ToolResultBlock {
  type: 'tool_result';
  toolUseId: string;
  toolName: string;
  content: string | Array<TextBlock | ImageBlock>;
  isError: boolean;
}

/** Any block that can appear in a message's content. */
export type ContentBlock = TextBlock | ImageBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock;

/** `interrupted` marks an assistant reply cut short by abort; its partial text is kept. */
export type MessageState = 'complete' | 'interrupted';

/**
 * Why the model stopped, mapped from the provider's own reasons. `tool_use` means the reply ends
 * in tool calls to run; `aborted` marks a reply cut short by abort.
 */
export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'aborted'
  | 'error';

/** Free-form data kept with a message (a provider's message and request ids, a plugin's notes). Never sent to the model. */
export interface MessageMetadata {
  [key: string]: unknown;
}

/** A system instruction. */
export interface SystemMessage {
  role: 'system';
  content: string;
  metadata?: MessageMetadata;
}

/** A message from the user: text, or text and images. */
export interface UserMessage {
  role: 'user';
  content: string | Array<TextBlock | ImageBlock>;
  metadata?: MessageMetadata;
}

/** One reply from the model, with the provider and model that produced it and their token usage. */
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

/** A message of the conversation, told apart by `role`. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
/** The role of a {@link Message}. */
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
