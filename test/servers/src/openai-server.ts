import { FakeApiServer } from './fake-api-server.js';
import { splitInto, type FakeToolCall } from './anthropic-server.js';
import type { FakeFault, FakeReply } from './sse-server.js';

/**
 * One scripted Chat Completions turn. Text and reasoning given as arrays are sent one element per
 * chunk. `interleaveToolCalls` sends the argument pieces of parallel calls round-robin, the way
 * some servers do, so the client must assemble them by `index`.
 */
export interface OpenAITurn {
  text?: string | string[];
  reasoning?: string | string[];
  toolCalls?: FakeToolCall[];
  interleaveToolCalls?: boolean;
  finishReason?: string;
  model?: string;
  /** Sends a final usage chunk (`choices: []`) when set. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** Sends `data: {"error": …}` instead of the finish chunk. */
  errorChunk?: { message: string; type?: string; code?: string };
  /** Omit the `data: [DONE]` terminator (some servers do). */
  omitDone?: boolean;
  fault?: FakeFault;
  delayMs?: number;
}

/** Turns a scripted turn into the `data:` frames Chat Completions streams, in order. */
export function openaiFrames(turn: OpenAITurn, id = 'chatcmpl-fake'): string[] {
  const model = turn.model ?? 'gpt-fake';
  const chunk = (delta: unknown, finishReason: string | null = null): string =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    })}\n\n`;
  const frames: string[] = [chunk({ role: 'assistant', content: '' })];
  const parts = (value: string | string[] | undefined): string[] =>
    value === undefined ? [] : typeof value === 'string' ? [value] : value;
  for (const reasoning of parts(turn.reasoning)) frames.push(chunk({ reasoning_content: reasoning }));
  for (const content of parts(turn.text)) frames.push(chunk({ content }));

  const calls = (turn.toolCalls ?? []).map((call, index) => ({
    index,
    id: call.id ?? `call_${id}_${index}`,
    name: call.name,
    pieces: splitInto(JSON.stringify(call.input), call.chunks ?? 2),
  }));
  for (const call of calls) {
    frames.push(
      chunk({ tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    if (!turn.interleaveToolCalls) {
      for (const piece of call.pieces) frames.push(chunk({ tool_calls: [{ index: call.index, function: { arguments: piece } }] }));
    }
  }
  if (turn.interleaveToolCalls) {
    const longest = Math.max(0, ...calls.map((call) => call.pieces.length));
    for (let position = 0; position < longest; position += 1) {
      for (const call of calls) {
        const piece = call.pieces[position];
        if (piece !== undefined) frames.push(chunk({ tool_calls: [{ index: call.index, function: { arguments: piece } }] }));
      }
    }
  }
  if (turn.errorChunk !== undefined) {
    frames.push(`data: ${JSON.stringify({ error: { type: 'server_error', code: null, param: null, ...turn.errorChunk } })}\n\n`);
    return frames;
  }
  frames.push(chunk({}, turn.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop')));
  if (turn.usage !== undefined) {
    const { prompt_tokens, completion_tokens, cached_tokens } = turn.usage;
    frames.push(
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model,
        choices: [],
        usage: {
          prompt_tokens,
          completion_tokens,
          total_tokens: prompt_tokens + completion_tokens,
          ...(cached_tokens === undefined ? {} : { prompt_tokens_details: { cached_tokens } }),
        },
      })}\n\n`,
    );
  }
  if (!turn.omitDone) frames.push('data: [DONE]\n\n');
  return frames;
}

const ERROR_TYPES: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['rate_limit_exceeded', 'rate_limit_exceeded'],
  500: ['server_error', null],
  503: ['server_error', null],
};

/** The error body OpenAI-compatible servers send with an HTTP error status. */
export function openaiErrorBody(status: number, message?: string, code?: string): unknown {
  const [type, defaultCode] = ERROR_TYPES[status] ?? ['server_error', null];
  return { error: { message: message ?? `Fake ${type}`, type, param: null, code: code ?? defaultCode } };
}

/** A fake OpenAI-compatible Chat Completions API (`POST /v1/chat/completions`, streaming). */
export class FakeOpenAIServer extends FakeApiServer {
  constructor() {
    super({
      path: '/v1/chat/completions',
      errorBody: (status) => openaiErrorBody(status),
      malformedFrame: 'data: {"id": "chatcmpl-broken", "choices": [\n\n',
      requestIdHeader: 'x-request-id',
    });
  }

  private turns = 0;

  /** The base URL clients use (`…/v1`). */
  get baseURL(): string {
    return `${this.server.baseURL}/v1`;
  }

  reply(...turns: OpenAITurn[]): this {
    for (const turn of turns) {
      this.turns += 1;
      const reply: FakeReply = { frames: openaiFrames(turn, `chatcmpl-fake-${this.turns}`) };
      if (turn.fault !== undefined) reply.fault = turn.fault;
      if (turn.delayMs !== undefined) reply.delayMs = turn.delayMs;
      this.server.enqueue(reply);
    }
    return this;
  }

  fail(status: number, options: { headers?: Record<string, string>; message?: string; code?: string } = {}): this {
    return this.enqueueHttpError(status, openaiErrorBody(status, options.message, options.code), options.headers);
  }
}
