/**
 * The runtime every streaming provider shares, as a library a third-party provider can use
 * too: retry with backoff (the server's `retry-after` wins) while nothing was delivered, and
 * an idle watchdog. Both run on a `Clock`.
 */
export { DEFAULT_RETRY_POLICY, retryAfterMs, retryDelay, streamWithRetries } from './retry.js';
export type { HeaderSource, RetryPolicy, StreamAttemptReader, StreamWithRetriesOptions } from './retry.js';
export { defaultSleep, sleepOn, type Sleep } from './sleep.js';
export { IdleWatchdog } from './idle-watchdog.js';
