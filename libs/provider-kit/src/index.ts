/**
 * The runtime every streaming provider shares, as a library a third-party provider can use
 * too: retry with backoff (the server's `retry-after` wins) while nothing was delivered, and
 * an idle watchdog, both on a `Clock`; and the HTTP call itself (`postForEventStream`: a POST
 * whose answer is read as server-sent events) without `fetch`.
 */
export { DEFAULT_RETRY_POLICY, retryAfterMs, retryDelay, streamWithRetries } from './retry.js';
export type { HeaderSource, RetryPolicy, StreamAttemptReader, StreamWithRetriesOptions } from './retry.js';
export { defaultSleep, sleepOn, type Sleep } from './sleep.js';
export { IdleWatchdog } from './idle-watchdog.js';
export { bypassesProxy, describeProxy, proxyFor, requestThroughProxy } from './proxy.js';
export { endpointUrl, resolveEndpoint, headerSource, HttpApiError, HttpConnectionError, isUnusableAnswer, lowerCasedHeaders, mapIterationErrors, openThroughSdk, postForEventStream, readUnusableAnswer } from './event-stream-http.js';
export type { EventStreamRequest, EventStreamResponse, ServerSentEvent } from './event-stream-http.js';
