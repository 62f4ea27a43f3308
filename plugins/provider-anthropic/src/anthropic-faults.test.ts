import type { AssistantMessage, Message, ProviderRequest } from '@tessera/contracts';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
import { AnthropicProviderError } from './anthropic-provider-error.js';

let server: FakeAnthropicServer;
let delays: number[];

beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
  delays = [];
});
afterEach(() => server.close());

function provider(options: AnthropicProviderOptions = {}): AnthropicProvider {
  return new AnthropicProvider({
    apiKey: 'sk-test',
    baseURL: server.baseURL,
    model: 'claude-sonnet-4-6',
    // Backoff waits are recorded, not slept: no test depends on wall-clock time.
    sleep: async (ms) => void delays.push(ms),
    ...options,
  });
}

function run(anthropic: AnthropicProvider, extra: Partial<ProviderRequest> = {}): Promise<AssistantMessage> {
  const messages: Message[] = [{ role: 'user', content: 'hi' }];
  return anthropic.stream({ messages, tools: [], signal: new AbortController().signal, ...extra });
}

async function failure(promise: Promise<unknown>): Promise<AnthropicProviderError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AnthropicProviderError);
  return error as AnthropicProviderError;
}

describe('AnthropicProvider faults', () => {
  it('401 → auth error with status, request id and what to fix; never retried', async () => {
    server.fail(401, { message: 'invalid x-api-key' });
    const error = await failure(run(provider()));
    expect(error).toMatchObject({ code: 'auth', category: 'provider', status: 401, requestId: 'req_fake_1', recoverable: false });
    expect(error.message).toMatch(/apiKey|ANTHROPIC_API_KEY/);
    expect(error.details).toMatchObject({ status: 401, requestId: 'req_fake_1', attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('429 with retry-after → waits what the server asked, then succeeds', async () => {
    server.fail(429, { headers: { 'retry-after': '3' } }).reply({ text: 'ok' });
    const message = await run(provider());
    expect(message.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(delays).toEqual([3000]);
    expect(server.requests).toHaveLength(2);
  });

  it('retry-after-ms wins over retry-after, and waits are capped', async () => {
    server.fail(429, { headers: { 'retry-after-ms': '250', 'retry-after': '9' } }).fail(429, { headers: { 'retry-after': '500' } }).reply({ text: 'ok' });
    await run(provider({ maxRetryDelayMs: 10_000 }));
    expect(delays).toEqual([250, 10_000]);
  });

  it('529 → retried with exponential backoff; still overloaded after maxRetries → overloaded error', async () => {
    server.fail(529).fail(529).fail(529);
    const error = await failure(run(provider({ retryBaseDelayMs: 100 })));
    expect(error).toMatchObject({ code: 'overloaded', status: 529, recoverable: true });
    expect(error.details).toMatchObject({ attempts: 3 });
    expect(server.requests).toHaveLength(3);
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThan(70);
    expect(delays[0]).toBeLessThanOrEqual(100);
    expect(delays[1]).toBeGreaterThan(140);
    expect(delays[1]).toBeLessThanOrEqual(200);
  });

  it('500 → retried, then succeeds', async () => {
    server.fail(500).reply({ text: 'recovered' });
    expect((await run(provider())).content).toEqual([{ type: 'text', text: 'recovered' }]);
    expect(server.requests).toHaveLength(2);
  });

  it('maxRetries: 0 turns retries off', async () => {
    server.fail(500);
    const error = await failure(run(provider({ maxRetries: 0 })));
    expect(error).toMatchObject({ code: 'server', status: 500 });
    expect(server.requests).toHaveLength(1);
  });

  it('connection reset before the first byte → retried; persistent resets → network error', async () => {
    server.reset().reply({ text: 'after reset' });
    expect((await run(provider())).content).toEqual([{ type: 'text', text: 'after reset' }]);
    server.reset().reset().reset();
    const error = await failure(run(provider()));
    expect(error).toMatchObject({ code: 'network', recoverable: true });
    expect(error.message).toContain(server.baseURL);
  });

  it('stream cut before any output → retried transparently', async () => {
    // message_start and content_block_start only: nothing reached the caller yet.
    server.reply({ text: 'lost', fault: { type: 'cut', afterEvents: 2 } }, { text: 'second try' });
    const deltas: string[] = [];
    const message = await run(provider(), { onTextDelta: (delta) => deltas.push(delta) });
    expect(deltas).toEqual(['second try']);
    expect(message.content).toEqual([{ type: 'text', text: 'second try' }]);
    expect(server.requests).toHaveLength(2);
  });

  it('stream cut after output → typed network error with the partial text, no retry', async () => {
    server.reply({ text: ['Hello', ' there', ' friend'], fault: { type: 'cut', afterEvents: 4 } }, { text: 'never sent' });
    const deltas: string[] = [];
    const error = await failure(run(provider(), { onTextDelta: (delta) => deltas.push(delta) }));
    expect(error).toMatchObject({ code: 'network', requestId: 'req_fake_1' });
    expect(deltas).toEqual(['Hello', ' there']);
    expect(error.partialMessage).toMatchObject({ state: 'interrupted', stopReason: 'aborted', content: [{ type: 'text', text: 'Hello there' }] });
    expect(server.requests).toHaveLength(1);
  });

  it('stream ending cleanly without message_stop → network error', async () => {
    server.reply({ text: 'a', fault: { type: 'end', afterEvents: 4 } });
    const error = await failure(run(provider({ maxRetries: 0 })));
    expect(error.code).toBe('network');
    expect(error.message).toContain('message_stop');
  });

  it('malformed SSE event after output → server error, partial kept, no retry', async () => {
    server.reply({ text: ['one', 'two'], fault: { type: 'malformed', afterEvents: 3 } });
    const error = await failure(run(provider()));
    expect(error.code).toBe('server');
    expect(error.message).toMatch(/not valid JSON/);
    expect(error.partialMessage?.content).toEqual([{ type: 'text', text: 'one' }]);
    expect(server.requests).toHaveLength(1);
  });

  it('malformed SSE event before output → retried', async () => {
    server.reply({ text: 'x', fault: { type: 'malformed', afterEvents: 1 } }, { text: 'clean' });
    expect((await run(provider())).content).toEqual([{ type: 'text', text: 'clean' }]);
  });

  it('an SSE error event mid-answer → typed error named by its type, partial kept', async () => {
    server.reply({ text: ['partial'], errorEvent: 'overloaded_error' });
    const error = await failure(run(provider()));
    expect(error).toMatchObject({ code: 'overloaded', requestId: 'req_fake_1' });
    expect(error.partialMessage?.content).toEqual([{ type: 'text', text: 'partial' }]);
    expect(server.requests).toHaveLength(1);
  });

  it('prompt too long → context_length; unknown model → invalid_request naming the model', async () => {
    server.fail(400, { message: 'prompt is too long: 250000 tokens > 200000 maximum' });
    const tooLong = await failure(run(provider()));
    expect(tooLong).toMatchObject({ code: 'context_length', status: 400, recoverable: false });
    expect(tooLong.message).toMatch(/Compact/);
    server.fail(404, { message: 'model: claude-nope not found' });
    const missing = await failure(run(provider({ model: 'claude-nope' })));
    expect(missing).toMatchObject({ code: 'invalid_request', status: 404 });
    expect(missing.message).toContain('model not found: claude-nope');
    expect(server.requests).toHaveLength(2);
  });

  it('stalled stream → timeout error after the idle timeout (not retried once output arrived)', async () => {
    server.reply({ text: ['tick', 'tock'], fault: { type: 'stall', afterEvents: 3 } });
    const error = await failure(run(provider({ timeout: 150 })));
    expect(error).toMatchObject({ code: 'timeout' });
    expect(error.partialMessage?.content).toEqual([{ type: 'text', text: 'tick' }]);
  });

  it('slow stream → every event refreshes the idle timeout, so a long answer completes', async () => {
    // 9 frames × 60 ms ≈ 540 ms in total, far beyond the 250 ms idle limit.
    server.reply({ text: ['a', 'b', 'c', 'd'], delayMs: 60 });
    const message = await run(provider({ timeout: 250 }));
    expect(message.content).toEqual([{ type: 'text', text: 'abcd' }]);
  });

  it('abort during a retry wait resolves with an empty interrupted reply', async () => {
    const controller = new AbortController();
    server.fail(529);
    const anthropic = provider({
      sleep: (_ms, signal) => {
        controller.abort();
        return signal.aborted ? Promise.reject(new DOMException('Aborted', 'AbortError')) : Promise.resolve();
      },
    });
    const message = await run(anthropic, { signal: controller.signal });
    expect(message).toMatchObject({ state: 'interrupted', stopReason: 'aborted', content: [] });
    expect(server.requests).toHaveLength(1);
  });

  it('abort before the call starts resolves interrupted without a request', async () => {
    const controller = new AbortController();
    controller.abort();
    const message = await run(provider(), { signal: controller.signal });
    expect(message).toMatchObject({ state: 'interrupted', content: [] });
    expect(server.requests).toHaveLength(0);
  });
});
