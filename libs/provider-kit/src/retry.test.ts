import { describe, expect, it } from 'vitest';
import { ProviderError, type AssistantMessage } from '@tessera/contracts';
import { retryAfterMs, streamWithRetries, type StreamAttemptReader } from './retry.js';

class Reader implements StreamAttemptReader {
  delivered = false;
  toMessage(state: 'interrupted'): AssistantMessage {
    return { role: 'assistant', content: this.delivered ? [{ type: 'text', text: 'part' }] : [], state };
  }
}

const done: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'ok' }], state: 'complete' };
const error = (code: 'rate_limit' | 'auth', retryAfter?: number) => new ProviderError('x', { code, provider: 'p', ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }) });

describe('streamWithRetries', () => {
  it('retries a retryable failure with the server-requested wait, then succeeds', async () => {
    const waits: number[] = [];
    let calls = 0;
    const reply = await streamWithRetries({
      policy: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 1_000 },
      sleep: async (ms) => void waits.push(ms),
      signal: new AbortController().signal,
      newReader: () => new Reader(),
      attempt: async () => (++calls < 2 ? Promise.reject(error('rate_limit', 250)) : done),
      toError: (thrown) => thrown as ProviderError,
    });
    expect(reply).toBe(done);
    expect(waits).toEqual([250]);
  });

  it('never retries once output was delivered, and keeps the partial reply on the error', async () => {
    let calls = 0;
    const failure = (await streamWithRetries({
      policy: { maxRetries: 5, baseDelayMs: 1, maxDelayMs: 1 },
      sleep: async () => {},
      signal: new AbortController().signal,
      newReader: () => new Reader(),
      attempt: async (reader) => {
        calls += 1;
        reader.delivered = true;
        throw error('rate_limit');
      },
      toError: (thrown) => thrown as ProviderError,
    }).catch((caught: unknown) => caught)) as ProviderError;
    expect(calls).toBe(1);
    expect(failure.partialMessage).toMatchObject({ state: 'interrupted', content: [{ text: 'part' }] });
    expect(failure.details).toMatchObject({ attempts: 1 });
  });

  it('does not retry a non-retryable code, and resolves interrupted when aborted during backoff', async () => {
    const base = { policy: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1 }, newReader: () => new Reader(), toError: (thrown: unknown) => thrown as ProviderError };
    await expect(streamWithRetries({ ...base, sleep: async () => {}, signal: new AbortController().signal, attempt: async () => Promise.reject(error('auth')) })).rejects.toMatchObject({ code: 'auth' });
    const controller = new AbortController();
    const reply = await streamWithRetries({
      ...base,
      signal: controller.signal,
      attempt: async () => Promise.reject(error('rate_limit')),
      sleep: async () => {
        controller.abort();
        throw new DOMException('Aborted', 'AbortError');
      },
    });
    expect(reply.state).toBe('interrupted');
  });

  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '120', 'retry-after': '9' }))).toBe(120);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2_000);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 4_000)).toBe(6_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
  });
});
