import type {
  AssistantMessage,
  ImageBlock,
  Message,
  ProviderUsage,
  StopReason,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from '@tessera/contracts';
import { copyWith } from '@tessera/contracts';
import type { AgentMessage } from './entries.js';

// Session files hold pi's message shapes (`toolCall` blocks, `toolResult` messages,
// `mimeType` images, pi usage and stop reasons), so pi and oh-my-pi can read what Tessera
// writes. These functions convert between those shapes and the kernel's message model.
// Reading also accepts kernel-shaped messages, which early Tessera files contain.

/** customType of a `custom` message that carries a kernel `system` message. */
export const SYSTEM_MESSAGE_TYPE = 'tessera.system';

type Block = Record<string, unknown>;

const UNKNOWN = 'unknown';

const PI_STOP_REASON: Partial<Record<StopReason, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  refusal: 'stop',
  tool_use: 'toolUse',
  max_tokens: 'length',
  error: 'error',
  aborted: 'aborted',
};

const KERNEL_STOP_REASON: Record<string, StopReason> = {
  stop: 'end_turn',
  toolUse: 'tool_use',
  length: 'max_tokens',
  error: 'error',
  aborted: 'aborted',
};

function toPiContent(content: string | Array<TextBlock | ImageBlock>): string | Block[] {
  if (typeof content === 'string') return content;
  return content.map((block) => (block.type === 'image' ? { type: 'image', data: block.data, mimeType: block.mediaType } : { type: 'text', text: block.text }));
}

/** `String(value ?? '')`, without the call when it is a string already (the usual case). */
function text(value: unknown): string {
  return typeof value === 'string' ? value : String(value ?? '');
}

/**
 * True when every block is exactly `{ type: 'text', text: <string> }`: pi's text block and the
 * kernel's have that same shape, so the loaded array is used as the kernel content as it is.
 * Nothing mutates a loaded entry or a kernel message in place (saves copy, merges make new
 * arrays), so the two may share it; a resume then allocates no block per text message.
 */
function isPlainTextContent(content: readonly unknown[]): content is TextBlock[] {
  for (let index = 0; index < content.length; index += 1) {
    const block = content[index] as Block | null | undefined;
    if (typeof block !== 'object' || block === null || block.type !== 'text' || typeof block.text !== 'string') return false;
    let keys = 0;
    // Inherited enumerable keys (a polluted prototype) count too: such a block is then converted.
    for (const _key in block) keys += 1;
    if (keys !== 2) return false;
  }
  return true;
}

function fromPiContent(content: unknown): string | Array<TextBlock | ImageBlock> {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  if (isPlainTextContent(content)) return content;
  const blocks: Array<TextBlock | ImageBlock> = [];
  for (let index = 0; index < content.length; index += 1) {
    const block = content[index] as Block | null | undefined;
    const type = block?.type;
    if (type === 'text') blocks.push({ type: 'text', text: text(block!.text) });
    else if (type === 'image') blocks.push({ type: 'image', data: text(block!.data), mediaType: text(block!.mimeType ?? block!.mediaType ?? 'image/png') });
  }
  return blocks;
}

function piUsage(usage: ProviderUsage | undefined): Block {
  const input = usage?.inputTokens ?? 0;
  const output = usage?.outputTokens ?? 0;
  const cacheRead = usage?.cacheReadTokens ?? 0;
  const cacheWrite = usage?.cacheWriteTokens ?? 0;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

function kernelUsage(usage: unknown): ProviderUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const value = usage as Record<string, unknown>;
  if (typeof value.inputTokens === 'number') return value as unknown as ProviderUsage;
  const { input, output, cacheRead, cacheWrite } = value;
  const result: ProviderUsage = { inputTokens: typeof input === 'number' ? input : 0, outputTokens: typeof output === 'number' ? output : 0 };
  if (typeof cacheRead === 'number' && cacheRead) result.cacheReadTokens = cacheRead;
  if (typeof cacheWrite === 'number' && cacheWrite) result.cacheWriteTokens = cacheWrite;
  return result;
}

/** True when a pi usage object holds a token count: `kernelUsage` of it would not be all zero. */
function hasPiTokens(value: Record<string, unknown>): boolean {
  const { input, output, cacheRead, cacheWrite } = value;
  return (
    (typeof input === 'number' && input !== 0 && !Number.isNaN(input)) ||
    (typeof output === 'number' && output !== 0 && !Number.isNaN(output)) ||
    (typeof cacheRead === 'number' && cacheRead !== 0 && !Number.isNaN(cacheRead)) ||
    (typeof cacheWrite === 'number' && cacheWrite !== 0 && !Number.isNaN(cacheWrite))
  );
}

/** One kernel message as the pi messages stored for it (a tool batch becomes one `toolResult` each). */
export function toPiMessages(message: Message, timestamp: number): AgentMessage[] {
  switch (message.role) {
    case 'user':
      return [{ role: 'user', content: toPiContent(message.content), timestamp }];
    case 'system':
      return [{ role: 'custom', customType: SYSTEM_MESSAGE_TYPE, content: message.content, display: false, timestamp }];
    case 'tool':
      return message.content.map((result) => ({
        role: 'toolResult',
        toolCallId: result.toolUseId,
        toolName: result.toolName,
        content: typeof result.content === 'string' ? [{ type: 'text', text: result.content }] : toPiContent(result.content),
        isError: result.isError,
        timestamp,
      }));
    case 'assistant': {
      const content: Block[] = message.content.map((block) => {
        if (block.type === 'tool_use') return { type: 'toolCall', id: block.id, name: block.name, arguments: block.input ?? {} };
        if (block.type === 'thinking') {
          return {
            type: 'thinking',
            thinking: block.thinking,
            ...(block.signature === undefined ? {} : { thinkingSignature: block.signature }),
            ...(block.redacted ? { redacted: true } : {}),
          };
        }
        return { type: 'text', text: block.text };
      });
      const stopReason = message.state === 'interrupted' ? 'aborted' : (PI_STOP_REASON[message.stopReason ?? 'end_turn'] ?? 'stop');
      const piMessage: AgentMessage = {
        role: 'assistant',
        content,
        provider: message.provider ?? UNKNOWN,
        model: message.model ?? UNKNOWN,
        usage: piUsage(message.usage),
        stopReason,
        timestamp,
      };
      // Kernel detail pi has no field for, kept so a reload gives back the same message.
      if (message.stopReason !== undefined && KERNEL_STOP_REASON[stopReason] !== message.stopReason) piMessage.tesseraStopReason = message.stopReason;
      return [piMessage];
    }
  }
}

function assistantFromPi(message: AgentMessage): AssistantMessage {
  const blocks = Array.isArray(message.content) ? (message.content as Array<Block | null | undefined>) : [];
  // Text-only replies (most of them) keep the loaded array, as user messages do.
  const shared = isPlainTextContent(blocks);
  const content: Array<TextBlock | ThinkingBlock | ToolUseBlock> = shared ? (blocks as unknown as TextBlock[]) : [];
  for (let index = 0; !shared && index < blocks.length; index += 1) {
    const block = blocks[index];
    if (!block) continue;
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: text(block.text) });
        break;
      case 'thinking': {
        const thinking: ThinkingBlock = { type: 'thinking', thinking: text(block.thinking) };
        const signature = block.thinkingSignature ?? block.signature;
        if (typeof signature === 'string') thinking.signature = signature;
        if (block.redacted === true) thinking.redacted = true;
        content.push(thinking);
        break;
      }
      case 'toolCall':
        content.push({ type: 'tool_use', id: text(block.id), name: text(block.name), input: block.arguments ?? {} });
        break;
      case 'tool_use':
        content.push({ type: 'tool_use', id: text(block.id), name: text(block.name), input: block.input ?? {} });
        break;
    }
  }
  const rawStop = text(message.stopReason);
  const stopReason = (message.tesseraStopReason as StopReason | undefined) ?? KERNEL_STOP_REASON[rawStop] ?? (rawStop as StopReason);
  const state = message.state === 'interrupted' || rawStop === 'aborted' ? 'interrupted' : 'complete';
  const result: AssistantMessage = { role: 'assistant', content, state };
  if (rawStop !== '') result.stopReason = stopReason;
  // Tessera writes zero usage and `unknown` provider/model where a message had none (pi
  // expects the fields); read those back as absent so a save/load round trip is lossless.
  const raw = message.usage;
  if (typeof raw === 'object' && raw !== null) {
    const value = raw as Record<string, unknown>;
    // A pi usage of zeros (what Tessera writes for none) is skipped without building a kernel one.
    if (typeof value.inputTokens === 'number' || hasPiTokens(value)) {
      const usage = kernelUsage(value) as ProviderUsage;
      if (usage.inputTokens || usage.outputTokens || usage.cacheReadTokens || usage.cacheWriteTokens) result.usage = usage;
    }
  }
  if (typeof message.provider === 'string' && message.provider !== UNKNOWN) result.provider = message.provider;
  if (typeof message.model === 'string' && message.model !== UNKNOWN) result.model = message.model;
  return result;
}

function toolResultFromPi(message: AgentMessage): ToolResultBlock {
  const blocks = fromPiContent(message.content);
  // pi stores text results as one-element arrays; text-only results read back as a string.
  const content = typeof blocks === 'string' || blocks.some((block) => block.type !== 'text') ? blocks : blocks.map((block) => (block as TextBlock).text).join('');
  return {
    type: 'tool_result',
    toolUseId: String(message.toolCallId ?? ''),
    toolName: String(message.toolName ?? ''),
    content,
    isError: message.isError === true,
  };
}

function textOf(content: unknown): string {
  const converted = fromPiContent(content);
  if (typeof converted === 'string') return converted;
  return converted.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/**
 * A pi (or kernel-shaped) message as a kernel message. `toolResult` messages become a tool
 * message of one result; `appendKernelMessage` merges consecutive ones into one batch.
 */
export function fromPiMessage(message: AgentMessage): Message | undefined {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: fromPiContent(message.content) };
    case 'assistant':
      return assistantFromPi(message);
    case 'toolResult':
      return { role: 'tool', content: [toolResultFromPi(message)] };
    case 'tool':
    case 'system':
      return message as unknown as Message;
    case 'custom':
      if (message.customType === SYSTEM_MESSAGE_TYPE) return { role: 'system', content: textOf(message.content) };
      return { role: 'user', content: textOf(message.content) };
    case 'compactionSummary':
      return { role: 'user', content: `<summary>\n${String(message.summary ?? '')}\n</summary>` };
    case 'branchSummary':
      return { role: 'user', content: `<branch_summary>\n${String(message.summary ?? '')}\n</branch_summary>` };
    case 'bashExecution':
      return { role: 'user', content: `Ran \`${String(message.command ?? '')}\`\n\`\`\`\n${String(message.output ?? '')}\n\`\`\`` };
    default:
      return undefined;
  }
}

/**
 * Adds a converted message to `messages`, merging a one-result tool message into a tool
 * message that directly precedes it. Returns true when it merged.
 */
export function appendKernelMessage(messages: Message[], message: Message, fromToolResult: boolean): boolean {
  const last = messages[messages.length - 1];
  if (fromToolResult && last?.role === 'tool' && message.role === 'tool') {
    // copyWith: a spread copy gets new properties slowly on Node 20 (docs/adr/0003); a load merges every tool result.
    messages[messages.length - 1] = copyWith(last, { content: [...last.content, ...message.content] });
    return true;
  }
  messages.push(message);
  return false;
}
