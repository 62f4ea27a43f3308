import type { AssistantMessage, Message, ProviderRequest } from '@tessera/contracts';
import { FakeOpenAIServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';
import { OpenAIProviderError } from './openai-provider-error.js';

let server: FakeOpenAIServer;
let delays: number[];

beforeEach(async () => {
  server = new FakeOpenAIServer();
  await server.listen();
  delays = [];
});
afterEach(() => server.close());

function provider(options: Partial<OpenAIProviderOptions> = {}): OpenAIProvider {
  return new OpenAIProvider({
    apiKey: 'sk-test',
    baseURL: server.baseURL,
    model: 'gpt-4o',
    sleep: async (ms) => void delays.push(ms),
    ...options,
  });
}

function run(openai: OpenAIProvider, extra: Partial<ProviderRequest> = {}): Promise<AssistantMessage> {
  const messages: Message[] = [{ role: 'user', content: 'hi' }];
  return openai.stream({ messages, tools: [], signal: new AbortController().signal, ...extra });
}

async function failure(promise: Promise<unknown>): Promise<OpenAIProviderError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OpenAIProviderError);
  return error as OpenAIProviderError;
}

describe('OpenAIProvider faults', () => {
  it('401 → auth error with status, request id and what to fix; never retried', async () => {
    server.fail(401, { message: 'Incorrect API key provided' });
    const error = await failure(run(provider()));
    expect(error).toMatchObject({ code: 'auth', category: 'provider', status: 401, requestId: 'req_fake_1', recoverable: false });
    expect(error.message).toMatch(/apiKey|OPENAI_API_KEY/);
    expect(server.requests).toHaveLength(1);
  });

  it('429 with retry-after → waits what the server asked, then succeeds', async () => {
    server.fail(429, { headers: { 'retry-after': '2' } }).reply({ text: 'ok' });
    expect((await run(provider())).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(delays).toEqual([2000]);
  });

  it('529 and 500 → retried; persistent 500 → server error after maxRetries', async () => {
    server.fail(529).fail(500).reply({ text: 'third time' });
    expect((await run(provider())).content).toEqual([{ type: 'text', text: 'third time' }]);
    expect(delays).toHaveLength(2);
    server.fail(500).fail(500).fail(500);
    const error = await failure(run(provider()));
    expect(error).toMatchObject({ code: 'server', status: 500 });
    expect(error.details).toMatchObject({ attempts: 3 });
  });

  it('503 → overloaded', async () => {
    server.fail(503);
    expect(await failure(run(provider({ maxRetries: 0 })))).toMatchObject({ code: 'overloaded', status: 503 });
  });

  it('connection reset before the first byte → retried; persistent → network error naming the URL', async () => {
    server.reset().reply({ text: 'back' });
    expect((await run(provider())).content).toEqual([{ type: 'text', text: 'back' }]);
    server.reset().reset().reset();
    const error = await failure(run(provider()));
    expect(error.code).toBe('network');
    expect(error.message).toContain(server.baseURL);
  });

  it('stream cut before output → retried; after output → typed error with the partial text', async () => {
    server.reply({ text: 'lost', fault: { type: 'cut', afterEvents: 1 } }, { text: 'second' });
    expect((await run(provider())).content).toEqual([{ type: 'text', text: 'second' }]);
    server.reply({ text: ['Hello', ' world'], fault: { type: 'cut', afterEvents: 2 } }, { text: 'never' });
    const deltas: string[] = [];
    const error = await failure(run(provider(), { onTextDelta: (delta) => deltas.push(delta) }));
    expect(error.code).toBe('network');
    expect(deltas).toEqual(['Hello']);
    expect(error.partialMessage).toMatchObject({ state: 'interrupted', content: [{ type: 'text', text: 'Hello' }] });
    expect(server.pending).toBe(1);
  });

  it('stream ending without a finish_reason → network error', async () => {
    server.reply({ text: 'a', fault: { type: 'end', afterEvents: 2 } });
    const error = await failure(run(provider({ maxRetries: 0 })));
    expect(error.code).toBe('network');
    expect(error.message).toContain('finish_reason');
  });

  it('malformed chunk after output → server error, partial kept', async () => {
    server.reply({ text: ['one', 'two'], fault: { type: 'malformed', afterEvents: 2 } });
    const error = await failure(run(provider()));
    expect(error.code).toBe('server');
    expect(error.partialMessage?.content).toEqual([{ type: 'text', text: 'one' }]);
    expect(server.requests).toHaveLength(1);
  });

  it('an error chunk mid-stream → typed error, partial kept, no retry', async () => {
    server.reply({ text: 'par', errorChunk: { message: 'The server had an error' } });
    const error = await failure(run(provider()));
    expect(error.code).toBe('server');
    expect(error.partialMessage?.content).toEqual([{ type: 'text', text: 'par' }]);
    expect(server.requests).toHaveLength(1);
  });

  it('context length and unknown model → context_length / invalid_request with what to do', async () => {
    server.fail(400, { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' });
    expect(await failure(run(provider()))).toMatchObject({ code: 'context_length', status: 400 });
    server.fail(404, { message: 'The model `gpt-nope` does not exist' });
    const missing = await failure(run(provider({ model: 'gpt-nope' })));
    expect(missing).toMatchObject({ code: 'invalid_request', status: 404 });
    expect(missing.message).toContain('model not found: gpt-nope');
  });

  it('stalled stream → timeout error; slow stream with steady chunks completes', async () => {
    server.reply({ text: ['a', 'b'], fault: { type: 'stall', afterEvents: 2 } });
    const stalled = await failure(run(provider({ timeout: 150 })));
    expect(stalled.code).toBe('timeout');
    expect(stalled.partialMessage?.content).toEqual([{ type: 'text', text: 'a' }]);
    server.reply({ text: ['s', 'l', 'o', 'w'], delayMs: 60 });
    expect((await run(provider({ timeout: 250 }))).content).toEqual([{ type: 'text', text: 'slow' }]);
  });

  it('abort mid-stream resolves with the partial text; tool calls in flight are dropped', async () => {
    server.reply({ text: ['a', 'b', 'c'], toolCalls: [{ name: 'read', input: { path: 'x' } }] });
    const controller = new AbortController();
    let count = 0;
    const message = await run(provider(), {
      signal: controller.signal,
      onProviderNativeRawPayload: (payload) => {
        if (payload.payloadKind === 'stream_event' && ++count === 6) controller.abort();
      },
    });
    expect(message).toMatchObject({ state: 'interrupted', stopReason: 'aborted', content: [{ type: 'text', text: 'abc' }] });
  });
});
