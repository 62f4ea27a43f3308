import type { AssistantMessage, ProviderError, ProviderRetry } from '@tessera/contracts';
import type { Sleep } from './sleep.js';

/** How a provider retries transient failures that happen before anything reached the caller. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 2). */
  maxRetries: number;
  /** First backoff step in ms, doubled per retry, with jitter (default 500). */
  baseDelayMs: number;
  /** Upper bound for any wait, including a server's `retry-after` (default 60 000). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 60_000 };

/** Anything response headers can be read from by name (a fetch `Headers`, or a plain reader). */
export interface HeaderSource {
  get(name: string): string | null;
}

/**
 * The server's requested wait: `retry-after-ms`, else `retry-after` as seconds or an HTTP date.
 * Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: HeaderSource | undefined, now = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const millis = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(millis) && millis >= 0) return millis;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The wait before retry number `retry` (1-based): the server's `retry-after` if given, else backoff. */
export function retryDelay(policy: RetryPolicy, retry: number, serverAskedMs: number | undefined): number {
  if (serverAskedMs !== undefined) return Math.min(serverAskedMs, policy.maxDelayMs);
  const backoff = policy.baseDelayMs * 2 ** (retry - 1);
  const jitter = 1 - Math.random() * 0.25;
  return Math.min(backoff * jitter, policy.maxDelayMs);
}

/** What one attempt of a streamed provider call exposes to `streamWithRetries`. */
export interface StreamAttemptReader {
  /** True once any text, thinking or server-tool output reached the caller. */
  readonly delivered: boolean;
  toMessage(state: 'interrupted', requestId?: string): AssistantMessage;
}

export interface StreamWithRetriesOptions<R extends StreamAttemptReader> {
  policy: RetryPolicy;
  sleep: Sleep;
  signal: AbortSignal;
  /** A fresh reader for each attempt. */
  newReader(): R;
  /** Runs one HTTP attempt; `setRequestId` records the response's request id as soon as known. */
  attempt(reader: R, setRequestId: (id: string) => void): Promise<AssistantMessage>;
  /** Turns whatever an attempt threw into the provider's typed error, tagged with the request id. */
  toError(thrown: unknown, requestId: string | undefined): ProviderError;
  /** Called before each attempt (e.g. to report the native request payload). */
  beforeAttempt?(): void;
  /** Called before each retry's wait. */
  onRetry?(retry: ProviderRetry): void;
}

/**
 * The retry loop every streaming provider shares: retry a retryable failure with backoff (the
 * server's `retry-after` wins) only while nothing has been delivered; once output reached the
 * caller, fail at once with `partialMessage` set. Abort at any point resolves with the
 * interrupted reply, as the Provider contract requires.
 */
export async function streamWithRetries<R extends StreamAttemptReader>(options: StreamWithRetriesOptions<R>): Promise<AssistantMessage> {
  const { policy, signal } = options;
  for (let attempt = 1; ; attempt += 1) {
    const reader = options.newReader();
    if (signal.aborted) return reader.toMessage('interrupted');
    options.beforeAttempt?.();
    let requestId: string | undefined;
    try {
      return await options.attempt(reader, (id) => (requestId = id));
    } catch (thrown) {
      if (signal.aborted) return reader.toMessage('interrupted', requestId);
      const error = options.toError(thrown, requestId);
      if (reader.delivered || !error.retryable || attempt > policy.maxRetries) {
        if (reader.delivered) error.partialMessage = reader.toMessage('interrupted', requestId);
        (error.details as Record<string, unknown>).attempts = attempt;
        throw error;
      }
      const delayMs = retryDelay(policy, attempt, error.retryAfterMs);
      try {
        options.onRetry?.({ attempt, maxRetries: policy.maxRetries, delayMs, code: error.code, ...(error.status === undefined ? {} : { status: error.status }), message: error.message });
      } catch {
        // A failing observer does not change the retry.
      }
      try {
        await options.sleep(delayMs, signal);
      } catch {
        return reader.toMessage('interrupted');
      }
    }
  }
}
