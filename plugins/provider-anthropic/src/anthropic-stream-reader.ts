import type Anthropic from '@anthropic-ai/sdk';
import type { AssistantMessage, ProviderRequest, ProviderUsage, StopReason } from '@tessera/contracts';
import { AnthropicProviderError } from './anthropic-provider-error.js';

type Block =
  | { kind: 'text'; text: string }
  | { kind: 'thinking'; thinking: string; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool_use'; id: string; name: string; json: string; input: unknown; done: boolean }
  | { kind: 'server_tool_use'; id: string; name: string; json: string; input: unknown }
  | { kind: 'native'; block: unknown };

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
  // The API ends a long server-tool loop with `pause_turn`; the turn is over for our loop.
  pause_turn: 'end_turn',
  model_context_window_exceeded: 'max_tokens',
};

/**
 * Folds one attempt's Messages API stream events into an assistant message, forwarding text,
 * thinking and server-tool use to the request's callbacks as they arrive. `delivered` turns
 * true with the first thing the caller saw; from then on the attempt must not be retried.
 */
export class AnthropicStreamReader {
  delivered = false;
  finished = false;
  private readonly blocks: Block[] = [];
  private messageId: string | undefined;
  private model: string | undefined;
  private nativeStopReason: string | undefined;
  private usage: ProviderUsage | undefined;
  private readonly onTextDelta: ((delta: string) => void) | undefined;
  private readonly onThinkingDelta: ((delta: string) => void) | undefined;
  private readonly onToolInputDelta: ProviderRequest['onToolInputDelta'];

  constructor(private readonly request: ProviderRequest) {
    this.onTextDelta = request.onTextDelta;
    this.onThinkingDelta = request.onThinkingDelta;
    this.onToolInputDelta = request.onToolInputDelta;
  }

  handle(event: Anthropic.RawMessageStreamEvent): void {
    switch (event.type) {
      case 'content_block_delta': {
        const block = this.blocks[event.index];
        const delta = event.delta;
        if (delta.type === 'text_delta') {
          if (block?.kind !== 'text') return;
          block.text += delta.text;
          this.delivered = true;
          this.onTextDelta?.(delta.text);
        } else if (delta.type === 'thinking_delta') {
          if (block?.kind !== 'thinking') return;
          block.thinking += delta.thinking;
          this.delivered = true;
          this.onThinkingDelta?.(delta.thinking);
        } else if (delta.type === 'signature_delta') {
          if (block?.kind === 'thinking') block.signature += delta.signature;
        } else if (delta.type === 'input_json_delta') {
          if (block?.kind === 'tool_use' || block?.kind === 'server_tool_use') block.json += delta.partial_json;
          if (block?.kind === 'tool_use' && delta.partial_json !== '') this.onToolInputDelta?.({ toolCallId: block.id, toolName: block.name, delta: delta.partial_json });
        }
        return;
      }
      case 'content_block_start':
        this.blocks[event.index] = this.startBlock(event.content_block);
        return;
      case 'content_block_stop':
        this.stopBlock(this.blocks[event.index]);
        return;
      case 'message_start': {
        const { message } = event;
        this.messageId = message.id;
        this.model = message.model;
        this.usage = {
          inputTokens: message.usage.input_tokens ?? 0,
          outputTokens: message.usage.output_tokens ?? 0,
          cacheReadTokens: message.usage.cache_read_input_tokens ?? 0,
          cacheWriteTokens: message.usage.cache_creation_input_tokens ?? 0,
        };
        return;
      }
      case 'message_delta': {
        if (event.delta.stop_reason) this.nativeStopReason = event.delta.stop_reason;
        const usage = (this.usage ??= { inputTokens: 0, outputTokens: 0 });
        const delta = event.usage;
        usage.outputTokens = delta.output_tokens;
        // Cumulative counts: a non-null value replaces what message_start said.
        if (delta.input_tokens != null) usage.inputTokens = delta.input_tokens;
        if (delta.cache_read_input_tokens != null) usage.cacheReadTokens = delta.cache_read_input_tokens;
        if (delta.cache_creation_input_tokens != null) usage.cacheWriteTokens = delta.cache_creation_input_tokens;
        return;
      }
      case 'message_stop':
        this.finished = true;
        return;
    }
  }

  /** The reply so far. Interrupted replies keep finished tool calls only (their input is whole). */
  toMessage(state: 'complete' | 'interrupted', requestId?: string): AssistantMessage {
    const content: AssistantMessage['content'] = [];
    for (const block of this.blocks) {
      if (block === undefined) continue;
      if (block.kind === 'text') {
        if (block.text !== '') content.push({ type: 'text', text: block.text });
      } else if (block.kind === 'thinking') {
        if (block.thinking === '' && block.signature === '') continue;
        content.push(
          block.signature === ''
            ? { type: 'thinking', thinking: block.thinking }
            : { type: 'thinking', thinking: block.thinking, signature: block.signature },
        );
      } else if (block.kind === 'redacted') {
        content.push({ type: 'thinking', thinking: '', signature: block.data, redacted: true });
      } else if (block.kind === 'tool_use' && block.done) {
        content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
      }
    }
    const message: AssistantMessage = {
      role: 'assistant',
      content,
      state,
      stopReason: state === 'interrupted' ? 'aborted' : (STOP_REASONS[this.nativeStopReason ?? ''] ?? 'end_turn'),
      provider: 'anthropic',
    };
    const model = this.model ?? this.request.model;
    if (model !== undefined) message.model = model;
    if (this.usage !== undefined) message.usage = { ...this.usage };
    const metadata: Record<string, unknown> = {};
    if (this.messageId !== undefined) metadata.messageId = this.messageId;
    if (requestId !== undefined) metadata.requestId = requestId;
    if (this.nativeStopReason !== undefined) metadata.nativeStopReason = this.nativeStopReason;
    const serverBlocks = this.blocks.filter((block) => block?.kind === 'server_tool_use' || block?.kind === 'native');
    if (serverBlocks.length > 0) metadata.serverToolBlocks = serverBlocks.map(nativeBlock);
    if (Object.keys(metadata).length > 0) message.metadata = metadata;
    return message;
  }

  /** The whole response in the API's own shape, for `onProviderNativeRawPayload`. */
  nativeResponse(): Record<string, unknown> {
    return {
      id: this.messageId,
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: this.blocks.filter((block) => block !== undefined).map(nativeBlock),
      stop_reason: this.nativeStopReason ?? null,
      usage: this.usage,
    };
  }

  private startBlock(start: Anthropic.RawContentBlockStartEvent['content_block']): Block {
    switch (start.type) {
      case 'text':
        if (start.text !== '') {
          this.delivered = true;
          this.onTextDelta?.(start.text);
        }
        return { kind: 'text', text: start.text };
      case 'thinking':
        return { kind: 'thinking', thinking: start.thinking, signature: start.signature ?? '' };
      case 'redacted_thinking':
        return { kind: 'redacted', data: start.data };
      case 'tool_use':
        return { kind: 'tool_use', id: start.id, name: start.name, json: '', input: start.input, done: false };
      case 'server_tool_use':
        return { kind: 'server_tool_use', id: start.id, name: start.name, json: '', input: start.input };
      default:
        return { kind: 'native', block: start };
    }
  }

  private stopBlock(block: Block | undefined): void {
    if (block?.kind === 'tool_use') {
      block.input = parseInput(block.json, block.input, block.name);
      block.done = true;
    } else if (block?.kind === 'server_tool_use') {
      block.input = parseInput(block.json, block.input, block.name);
      this.delivered = true;
      this.request.onServerToolUse?.({ name: block.name, input: block.input });
    }
  }
}

function parseInput(json: string, initial: unknown, name: string): unknown {
  if (json === '') return initial ?? {};
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new AnthropicProviderError(
      `Anthropic sent tool input for "${name}" that is not valid JSON. Retry the turn; report it if it persists.`,
      { code: 'server', cause: error },
    );
  }
}

function nativeBlock(block: Block | undefined): unknown {
  switch (block?.kind) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'redacted':
      return { type: 'redacted_thinking', data: block.data };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'server_tool_use':
      return { type: 'server_tool_use', id: block.id, name: block.name, input: block.input };
    case 'native':
      return block.block;
    default:
      return undefined;
  }
}
