import { randomUUID } from 'node:crypto';
import { modelPrice, usageCostUsd, type AssistantMessage, type ProviderUsage, type ToolMessage } from '@tessera/contracts';

/**
 * Claude Code's stream-json message shapes (the Agent SDK's `SDKMessage`), built from
 * Tessera's messages. Field names are the wire's (snake_case), as Claude Code writes them.
 */

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface ModelUsageEntry {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  webSearchRequests: number;
  costUSD: number;
  contextWindow: number;
  maxOutputTokens: number;
}

export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: unknown;
}

export type ResultSubtype = 'success' | 'error_max_turns' | 'error_during_execution' | 'error_max_budget_usd' | 'error_max_structured_output_retries';

export interface ResultMessage {
  type: 'result';
  subtype: ResultSubtype;
  uuid: string;
  session_id: string;
  is_error: boolean;
  duration_ms: number;
  duration_api_ms: number;
  num_turns: number;
  result?: string;
  /** `--json-schema`: the accepted answer (success only). */
  structured_output?: unknown;
  stop_reason: string | null;
  terminal_reason: string;
  total_cost_usd: number;
  usage: AnthropicUsage;
  modelUsage: Record<string, ModelUsageEntry>;
  permission_denials: PermissionDenial[];
  errors?: string[];
}

export function emptyUsage(): AnthropicUsage {
  return { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
}

export function toAnthropicUsage(usage: ProviderUsage | undefined): AnthropicUsage {
  return {
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cache_read_input_tokens: usage?.cacheReadTokens ?? 0,
    cache_creation_input_tokens: usage?.cacheWriteTokens ?? 0,
  };
}

export function addUsage(total: AnthropicUsage, usage: AnthropicUsage): void {
  total.input_tokens += usage.input_tokens;
  total.output_tokens += usage.output_tokens;
  total.cache_read_input_tokens += usage.cache_read_input_tokens;
  total.cache_creation_input_tokens += usage.cache_creation_input_tokens;
}

/** Whether the price of `model` is known (`modelPrice` in @tessera/contracts). */
export function hasPrice(model: string): boolean {
  return modelPrice(model) !== undefined;
}

/** Cost of `usage` on `model` in USD; 0 when the model's price is not known. */
export function costUsd(model: string, usage: AnthropicUsage): number {
  return (
    usageCostUsd(model, {
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cacheReadTokens: usage.cache_read_input_tokens,
      cacheWriteTokens: usage.cache_creation_input_tokens,
    }) ?? 0
  );
}

const STOP_REASONS: Record<string, string> = { aborted: 'end_turn', error: 'end_turn' };

/** An assistant reply as Claude Code prints it: the Messages API's message inside. */
export function assistantMessage(message: AssistantMessage, sessionId: string, messageId: string, fallbackModel: string): Record<string, unknown> {
  const content = message.content.map((block) => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    if (block.type === 'thinking') {
      return block.redacted ? { type: 'redacted_thinking', data: block.signature ?? '' } : { type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' };
    }
    return { type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} };
  });
  const stop = message.stopReason === undefined ? null : (STOP_REASONS[message.stopReason] ?? message.stopReason);
  return {
    type: 'assistant',
    message: {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model: message.model ?? fallbackModel,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: toAnthropicUsage(message.usage),
    },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
  };
}

/** One batch of tool results as the `user` message Claude Code prints for it. */
export function toolResultMessage(message: ToolMessage, sessionId: string, data: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const content = message.content.map((block) => ({
    type: 'tool_result',
    tool_use_id: block.toolUseId,
    content: typeof block.content === 'string' ? block.content : block.content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image', source: { type: 'base64', media_type: part.mediaType, data: part.data } })),
    is_error: block.isError,
  }));
  const out: Record<string, unknown> = { type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: sessionId, uuid: randomUUID() };
  // Claude Code adds the tool's structured output for single-call batches.
  const single = message.content.length === 1 ? data.get(message.content[0]!.toolUseId) : undefined;
  if (single !== undefined) out.tool_use_result = single;
  return out;
}

export function userMessage(content: unknown, sessionId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: sessionId, uuid: randomUUID(), ...extra };
}

/** `stream_event` lines: the raw Messages API stream events, rebuilt from the provider's deltas. */
export class PartialMessageStream {
  private index = -1;
  private kind: 'text' | 'thinking' | undefined;
  private started = false;

  constructor(
    private readonly emit: (event: Record<string, unknown>) => void,
    private readonly messageId: () => string,
    private readonly model: string,
  ) {}

  delta(kind: 'text' | 'thinking', text: string): void {
    if (!this.started) {
      this.started = true;
      this.emit({
        type: 'message_start',
        message: { id: this.messageId(), type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: emptyUsage() },
      });
    }
    if (this.kind !== kind) {
      if (this.kind !== undefined) this.emit({ type: 'content_block_stop', index: this.index });
      this.index += 1;
      this.kind = kind;
      this.emit({ type: 'content_block_start', index: this.index, content_block: kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' } });
    }
    this.emit({ type: 'content_block_delta', index: this.index, delta: kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text } });
  }

  /** The reply is complete: closes the open block, adds its tool calls, and ends the message. */
  finish(message: AssistantMessage): void {
    if (!this.started) this.delta('text', '');
    if (this.kind !== undefined) this.emit({ type: 'content_block_stop', index: this.index });
    for (const block of message.content) {
      if (block.type !== 'tool_use') continue;
      this.index += 1;
      this.emit({ type: 'content_block_start', index: this.index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      this.emit({ type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } });
      this.emit({ type: 'content_block_stop', index: this.index });
    }
    const usage = toAnthropicUsage(message.usage);
    this.emit({ type: 'message_delta', delta: { stop_reason: message.stopReason ?? 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    this.emit({ type: 'message_stop' });
    this.index = -1;
    this.kind = undefined;
    this.started = false;
  }
}
