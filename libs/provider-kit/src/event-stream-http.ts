import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { HttpConnectionError } from './http-connection-error.js';
import { proxyFor, requestThroughProxy } from './proxy.js';
import type { HeaderSource } from './retry.js';

/**
 * A streaming provider's HTTP call without `fetch`: one POST over `node:http` / `node:https`
 * (Node's shared keep-alive agents), its answer read as server-sent events while they arrive.
 * Loading Node's `fetch` (undici) and a vendor SDK costs a CLI run tens of milliseconds and
 * ~20 MB before the first byte is sent; this costs neither (`node:https` is loaded only for an
 * `https:` URL).
 */

export { HttpConnectionError } from './http-connection-error.js';

/** One server-sent event: its `event:` name (undefined when it had none) and its `data:` lines joined. */
export interface ServerSentEvent {
  event: string | undefined;
  data: string;
}

/** An answer whose headers arrived. */
export interface EventStreamResponse {
  status: number;
  headers: HeaderSource;
  /** The body's events, in order. Ends quietly when the call's signal aborts; throws `HttpConnectionError` (`stream`) when the connection drops. */
  events(): AsyncGenerator<ServerSentEvent>;
  /** The whole body as text (at most `maxBytes`; the rest is read and dropped), for error answers. */
  text(maxBytes?: number): Promise<string>;
}

export interface EventStreamRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** No answer headers after this long: rejects with `HttpConnectionError` (`timeout`). */
  responseTimeoutMs: number;
}

/**
 * `<baseURL>/<path>`, keeping a path prefix the base URL has (`https://gw.example/v1` +
 * `chat/completions` → `https://gw.example/v1/chat/completions`); a string saying what is
 * wrong when the base URL is not an `http(s)` URL.
 */
export function endpointUrl(baseURL: string, path: string): URL | string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    return `The base URL ${JSON.stringify(baseURL)} is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `The base URL ${JSON.stringify(baseURL)} is not http: or https:`;
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return url;
}

/**
 * A transport's endpoint: `url` when the base URL is usable, else `invalid` saying why (a
 * transport keeps constructing and fails each call with it). `href` is the endpoint either way,
 * for display.
 */
export function resolveEndpoint(baseURL: string, path: string): { href: string; url?: URL; invalid?: string } {
  const url = endpointUrl(baseURL, path);
  if (typeof url !== 'string') return { href: url.href, url };
  return { href: `${baseURL.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`, invalid: url };
}

/** Reads response headers by name (lower-cased), as a fetch `Headers` would. */
export function headerSource(headers: IncomingHttpHeaders): HeaderSource {
  return { get: (name) => firstHeader(headers, name.toLowerCase()) ?? null };
}

function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Sends the POST; resolves once the answer's headers arrived, whatever its status. */
export async function postForEventStream(request: EventStreamRequest): Promise<EventStreamResponse> {
  const { url, signal } = request;
  if (signal.aborted) throw new HttpConnectionError('The request was aborted.', 'connect');
  const body = Buffer.from(request.body);
  const options = { method: 'POST', headers: { ...request.headers, 'content-length': String(body.length) } };
  // HTTPS_PROXY / HTTP_PROXY / NO_PROXY, read per call (see proxy.ts); none set costs nothing.
  const proxy = proxyFor(url);
  const outgoing =
    proxy !== undefined
      ? await requestThroughProxy(url, proxy, options)
      : (url.protocol === 'https:' ? (await import('node:https')).request : httpRequest)(url, options);
  if (signal.aborted) {
    outgoing.destroy();
    throw new HttpConnectionError('The request was aborted.', 'connect');
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      outgoing.destroy();
      reject(new HttpConnectionError('The request was aborted.', 'connect'));
    };
    const timer = setTimeout(
      () => outgoing.destroy(new HttpConnectionError(`No answer after ${request.responseTimeoutMs} ms.`, 'timeout')),
      request.responseTimeoutMs,
    );
    timer.unref();
    const settle = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Stays for the request's whole life: a late error (a reset while the body is read) is
    // reported through the body's reader, never as an unhandled event.
    outgoing.on('error', (error) => {
      settle();
      reject(error instanceof HttpConnectionError ? error : new HttpConnectionError('Connection error.', 'connect', { cause: error }));
    });
    outgoing.on('response', (response) => {
      settle();
      resolve({
        status: response.statusCode ?? 0,
        headers: headerSource(response.headers),
        events: () => readEvents(response, outgoing, signal),
        text: (maxBytes = 1 << 20) => readText(response, maxBytes),
      });
    });
    outgoing.end(body);
  });
}

async function readText(response: IncomingMessage, maxBytes: number): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  try {
    for await (const chunk of response as AsyncIterable<string>) if (text.length < maxBytes) text += chunk;
  } catch (error) {
    throw new HttpConnectionError('The connection closed while the answer was read.', 'stream', { cause: error });
  }
  return text.slice(0, maxBytes);
}

/**
 * The body as server-sent events: `event:` and `data:` fields (several `data:` lines joined
 * with newlines), an empty line ends an event, a line starting with `:` is a comment. LF or
 * CRLF line ends. An event left unfinished when the body ends is dropped, as the format says.
 */
async function* readEvents(response: IncomingMessage, outgoing: ClientRequest, signal: AbortSignal): AsyncGenerator<ServerSentEvent> {
  const onAbort = (): void => void outgoing.destroy();
  signal.addEventListener('abort', onAbort, { once: true });
  response.setEncoding('utf8');
  let pending = '';
  let event: string | undefined;
  let data: string[] = [];
  let finished = false;
  try {
    for await (const chunk of response as AsyncIterable<string>) {
      pending += chunk;
      let start = 0;
      for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n', start)) {
        const end = newline > start && pending.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
        const line = pending.slice(start, end);
        start = newline + 1;
        if (line === '') {
          if (event !== undefined || data.length > 0) {
            const dispatched: ServerSentEvent = { event, data: data.join('\n') };
            event = undefined;
            data = [];
            // Events already buffered when the call aborted are not delivered.
            if (signal.aborted) return;
            yield dispatched;
          }
          continue;
        }
        if (line.charCodeAt(0) === 58) continue; // ':' starts a comment (keep-alive)
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.charCodeAt(0) === 32) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      pending = start === 0 ? pending : pending.slice(start);
    }
    finished = true;
  } catch (error) {
    if (signal.aborted) return;
    throw new HttpConnectionError('The connection closed mid-stream.', 'stream', { cause: error });
  } finally {
    signal.removeEventListener('abort', onAbort);
    // A consumer that stops early (an error it raised, a break) closes the connection.
    if (!finished) outgoing.destroy();
  }
}

/** Header names lower-cased (HTTP header names are case-insensitive; later spellings win). */
export function lowerCasedHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

/**
 * Whether an answer to a streaming call is not a stream to read: an error status, a redirect
 * (never followed: a POST is not re-sent elsewhere), or JSON where an event stream was asked
 * for (a gateway or server that ignored `stream: true`).
 */
export function isUnusableAnswer(response: EventStreamResponse): boolean {
  return response.status < 200 || response.status > 299 || isJsonAnswer(response);
}

function isJsonAnswer(response: EventStreamResponse): boolean {
  return /^application\/json\b/i.test(response.headers.get('content-type') ?? '');
}

/**
 * The body of an unusable answer, and what is wrong with it when the body alone would not
 * say: a redirect (and where to), or JSON that is not an error (`isErrorBody` tells) sent
 * with a success status.
 */
export async function readUnusableAnswer(response: EventStreamResponse, isErrorBody: (text: string) => boolean): Promise<{ text: string; problem: string | undefined }> {
  const text = await response.text();
  const { status } = response;
  if (status >= 300 && status <= 399) {
    const location = response.headers.get('location');
    return { text, problem: `the server answered with a redirect${location ? ` to ${location}` : ''}, which is not followed; set the base URL to the address that answers` };
  }
  if (status <= 299 && isJsonAnswer(response) && !isErrorBody(text)) {
    return { text, problem: `the server answered with JSON instead of an event stream (${text.slice(0, 200).trim() || 'empty body'}); point the base URL at an endpoint that streams` };
  }
  return { text, problem: undefined };
}

/** `source`'s items; what its iteration throws goes through `map` first (an SDK's errors as a provider's own). */
export async function* mapIterationErrors<T>(source: AsyncIterable<T>, map: (error: unknown) => unknown): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    throw map(error);
  }
}

/**
 * The API answered with an error: an HTTP status (4xx/5xx, a redirect, or JSON where a stream
 * was asked for) before the stream, or an error event inside it (`status` undefined). Each
 * provider names its own subclass.
 */
export class HttpApiError extends Error {
  override readonly name: string = 'HttpApiError';
  readonly status: number | undefined;
  /** The error's `code`, when the body named one (`context_length_exceeded`, …). */
  readonly code: string | undefined;
  /** The error's `type`, when the body named one (`overloaded_error`, …). */
  readonly type: string | undefined;
  /** The API's own message (or the raw body when it was not the API's JSON). */
  readonly apiMessage: string;
  readonly requestId: string | undefined;
  readonly headers: HeaderSource | undefined;

  constructor(fields: { status?: number; code?: string; type?: string; apiMessage: string; requestId?: string; headers?: HeaderSource }) {
    super(fields.status === undefined ? fields.apiMessage : `${fields.status} ${fields.apiMessage}`);
    this.status = fields.status;
    this.code = fields.code;
    this.type = fields.type;
    this.apiMessage = fields.apiMessage;
    this.requestId = fields.requestId;
    this.headers = fields.headers;
  }
}

/**
 * A stream opened through a vendor SDK (`client.….create(params).withResponse()`), with the
 * SDK's errors turned into the provider's by `mapError`, whether they come while opening
 * (`connect`) or while iterating (`stream`).
 */
export async function openThroughSdk<T>(
  start: () => Promise<{ data: AsyncIterable<T>; request_id?: string | null }>,
  mapError: (error: unknown, phase: 'connect' | 'stream') => unknown,
): Promise<{ requestId: string | undefined; items: AsyncIterable<T> }> {
  try {
    const { data, request_id } = await start();
    return { requestId: request_id ?? undefined, items: mapIterationErrors(data, (error) => mapError(error, 'stream')) };
  } catch (error) {
    throw mapError(error, 'connect');
  }
}
