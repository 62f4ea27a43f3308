import { FakeApiServer } from './fake-api-server.js';
import type { FakeFault, FakeReply } from './sse-server.js';

/** A tool call the fake model makes; `chunks` splits the input JSON across that many `input_json_delta`s. */
export interface FakeToolCall {
  id?: string;
  name: string;
  input: unknown;
  chunks?: number;
}

/** A hosted web search the fake model runs (a `server_tool_use` + `web_search_tool_result` pair). */
export interface FakeWebSearch {
  query: string;
  results: Array<{ title: string; url: string }>;
}

/**
 * One scripted Messages API turn. Text and thinking given as arrays are sent one element per
 * delta. Blocks are emitted in the order thinking → web search → text → tool calls.
 */
export interface AnthropicTurn {
  text?: string | string[];
  thinking?: string | string[];
  signature?: string;
  redactedThinking?: string;
  webSearch?: FakeWebSearch;
  toolCalls?: FakeToolCall[];
  stopReason?: string;
  model?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  /** Send `ping` events between blocks (the real API does). */
  pings?: boolean;
  /** Replace the final `message_stop` with an SSE `error` event of this type (e.g. `overloaded_error`). */
  errorEvent?: string;
  fault?: FakeFault;
  delayMs?: number;
}

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Turns a scripted turn into the SSE frames the Messages API sends, in order. */
export function anthropicFrames(turn: AnthropicTurn, id = 'msg_fake'): string[] {
  const usage = turn.usage ?? {};
  const frames: string[] = [
    frame('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: turn.model ?? 'claude-fake',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input_tokens ?? 10,
          output_tokens: 1,
          cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
          cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
        },
      },
    }),
  ];
  let index = 0;
  const ping = (): void => {
    if (turn.pings) frames.push(frame('ping', { type: 'ping' }));
  };
  const block = (start: unknown, deltas: unknown[]): void => {
    frames.push(frame('content_block_start', { type: 'content_block_start', index, content_block: start }));
    ping();
    for (const delta of deltas) frames.push(frame('content_block_delta', { type: 'content_block_delta', index, delta }));
    frames.push(frame('content_block_stop', { type: 'content_block_stop', index }));
    index += 1;
  };
  if (turn.thinking !== undefined) {
    const parts = typeof turn.thinking === 'string' ? [turn.thinking] : turn.thinking;
    block({ type: 'thinking', thinking: '', signature: '' }, [
      ...parts.map((thinking) => ({ type: 'thinking_delta', thinking })),
      { type: 'signature_delta', signature: turn.signature ?? 'sig_fake' },
    ]);
  }
  if (turn.redactedThinking !== undefined) block({ type: 'redacted_thinking', data: turn.redactedThinking }, []);
  if (turn.webSearch !== undefined) {
    const toolUseId = `srvtoolu_${id}`;
    block({ type: 'server_tool_use', id: toolUseId, name: 'web_search', input: {} }, [
      { type: 'input_json_delta', partial_json: JSON.stringify({ query: turn.webSearch.query }) },
    ]);
    block(
      {
        type: 'web_search_tool_result',
        tool_use_id: toolUseId,
        content: turn.webSearch.results.map((result) => ({
          type: 'web_search_result',
          title: result.title,
          url: result.url,
          encrypted_content: 'enc',
          page_age: null,
        })),
      },
      [],
    );
  }
  if (turn.text !== undefined) {
    const parts = typeof turn.text === 'string' ? [turn.text] : turn.text;
    block({ type: 'text', text: '' }, parts.map((text) => ({ type: 'text_delta', text })));
  }
  for (const [position, call] of (turn.toolCalls ?? []).entries()) {
    const json = JSON.stringify(call.input);
    const pieces = splitInto(json, call.chunks ?? 2);
    block(
      { type: 'tool_use', id: call.id ?? `toolu_${id}_${position}`, name: call.name, input: {} },
      pieces.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    );
  }
  const stopReason = turn.stopReason ?? ((turn.toolCalls?.length ?? 0) > 0 ? 'tool_use' : 'end_turn');
  frames.push(
    frame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens ?? 5 },
    }),
  );
  if (turn.errorEvent !== undefined) {
    frames.push(frame('error', { type: 'error', error: { type: turn.errorEvent, message: `Fake ${turn.errorEvent}` } }));
  } else {
    frames.push(frame('message_stop', { type: 'message_stop' }));
  }
  return frames;
}

/** Splits a string into `count` pieces of near-equal length (fewer when it is shorter). */
export function splitInto(text: string, count: number): string[] {
  if (count <= 1 || text.length <= 1) return [text];
  const size = Math.ceil(text.length / count);
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** The error body the Messages API sends with an HTTP error status. */
export function anthropicErrorBody(status: number, message?: string): unknown {
  const type = ERROR_TYPES[status] ?? 'api_error';
  return { type: 'error', error: { type, message: message ?? `Fake ${type}` } };
}

/**
 * A fake Anthropic Messages API (`POST /v1/messages`, streaming). Queue turns with `reply()`;
 * inspect `requests` to see exactly what the client sent.
 */
export class FakeAnthropicServer extends FakeApiServer {
  constructor() {
    super({
      path: '/v1/messages',
      errorBody: (status) => anthropicErrorBody(status),
      malformedFrame: 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0,\n\n',
      requestIdHeader: 'request-id',
    });
  }

  private turns = 0;

  get baseURL(): string {
    return this.server.baseURL;
  }

  /** Queues scripted turns, one per request. */
  reply(...turns: AnthropicTurn[]): this {
    for (const turn of turns) this.server.enqueue(this.toReply(turn));
    return this;
  }

  /** Queues an HTTP error (e.g. 401, 429 with `retry-after`, 529, 500). */
  fail(status: number, options: { headers?: Record<string, string>; message?: string } = {}): this {
    return this.enqueueHttpError(status, anthropicErrorBody(status, options.message), options.headers);
  }

  private toReply(turn: AnthropicTurn): FakeReply {
    this.turns += 1;
    const reply: FakeReply = { frames: anthropicFrames(turn, `msg_fake_${this.turns}`) };
    if (turn.fault !== undefined) reply.fault = turn.fault;
    if (turn.delayMs !== undefined) reply.delayMs = turn.delayMs;
    return reply;
  }
}
