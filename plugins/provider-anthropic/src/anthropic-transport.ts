import type Anthropic from '@anthropic-ai/sdk';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AnthropicProviderError } from './anthropic-provider-error.js';

/** What an error response carried that a caller reads headers from (`retry-after`, `request-id`). */
export interface HeaderReader {
  get(name: string): string | null;
}

/** One opened Messages API stream: the response's request id and its events, in order. */
export interface OpenedMessageStream {
  requestId: string | undefined;
  /** Ends quietly when the call's signal aborts; throws the transport errors below otherwise. */
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>;
}

/** How the provider sends one streaming Messages call. */
export interface AnthropicTransport {
  open(params: Anthropic.MessageCreateParamsStreaming, signal: AbortSignal): Promise<OpenedMessageStream>;
}

/**
 * The API answered with an error: an HTTP status (4xx/5xx) before the stream, or an SSE `error`
 * event inside it (`status` undefined).
 */
export class AnthropicApiError extends Error {
  override readonly name = 'AnthropicApiError';
  readonly status: number | undefined;
  /** The API's error type (`overloaded_error`, …), when the body named one. */
  readonly type: string | undefined;
  /** The API's own message (or the raw body when it was not the API's JSON). */
  readonly apiMessage: string;
  readonly requestId: string | undefined;
  readonly headers: HeaderReader | undefined;

  constructor(fields: { status?: number; type?: string; apiMessage: string; requestId?: string; headers?: HeaderReader }) {
    super(fields.status === undefined ? fields.apiMessage : `${fields.status} ${fields.apiMessage}`);
    this.status = fields.status;
    this.type = fields.type;
    this.apiMessage = fields.apiMessage;
    this.requestId = fields.requestId;
    this.headers = fields.headers;
  }
}

/**
 * The connection failed: before any response (`phase: 'connect'`, or `'timeout'` when no
 * response came in time) or while the stream was being read (`'stream'`).
 */
export class AnthropicConnectionError extends Error {
  override readonly name = 'AnthropicConnectionError';
  constructor(
    message: string,
    readonly phase: 'connect' | 'timeout' | 'stream',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface AnthropicHttpTransportOptions {
  apiKey: string;
  /** The API root (`https://api.anthropic.com`, or a gateway with a path prefix). */
  baseURL: string;
  /** Extra headers on every request; they win over the defaults. */
  headers?: Record<string, string>;
  /** No response headers after this long: the attempt fails with `phase: 'timeout'`. */
  responseTimeoutMs: number;
}

const ANTHROPIC_VERSION = '2023-06-01';
/** An error body larger than this is cut: only its message is wanted. */
const MAX_ERROR_BODY = 1 << 20;

/**
 * The Messages API over `node:http` / `node:https`: one POST with `stream: true`, its
 * server-sent events parsed as they arrive. It is what a provider built from an API key uses,
 * so a run never loads Node's `fetch` (undici) or the SDK: both cost a CLI run tens of
 * milliseconds and ~20 MB before the first byte is sent.
 */
export class AnthropicHttpTransport implements AnthropicTransport {
  readonly url: string;
  readonly #url: URL | undefined;
  /** Why the base URL cannot be used; every call fails with it (construction never throws). */
  readonly #invalid: string | undefined;
  readonly #headers: Record<string, string>;
  readonly #responseTimeoutMs: number;

  constructor(options: AnthropicHttpTransportOptions) {
    const url = messagesUrl(options.baseURL);
    if (typeof url === 'string') {
      this.#invalid = url;
      this.url = `${options.baseURL.replace(/\/+$/, '')}/v1/messages`;
    } else {
      this.#url = url;
      this.url = url.href;
    }
    this.#headers = {
      accept: 'application/json',
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      'user-agent': 'tessera-provider-anthropic',
      'x-api-key': options.apiKey,
      ...lowerCased(options.headers ?? {}),
    };
    this.#responseTimeoutMs = options.responseTimeoutMs;
  }

  open(params: Anthropic.MessageCreateParamsStreaming, signal: AbortSignal): Promise<OpenedMessageStream> {
    const url = this.#url;
    if (url === undefined) {
      return Promise.reject(new AnthropicProviderError(`${this.#invalid}. Fix the provider's baseURL (or ANTHROPIC_BASE_URL).`, { code: 'invalid_request' }));
    }
    if (signal.aborted) return Promise.reject(new AnthropicConnectionError('The request was aborted.', 'connect'));
    const body = Buffer.from(JSON.stringify(params));
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(url, { method: 'POST', headers: { ...this.#headers, 'content-length': String(body.length) } });
      const onAbort = (): void => {
        request.destroy();
        reject(new AnthropicConnectionError('The request was aborted.', 'connect'));
      };
      const timer = setTimeout(() => request.destroy(new AnthropicConnectionError(`No response after ${this.#responseTimeoutMs} ms.`, 'timeout')), this.#responseTimeoutMs);
      timer.unref();
      const settle = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error) => {
        settle();
        reject(error instanceof AnthropicConnectionError ? error : new AnthropicConnectionError('Connection error.', 'connect', { cause: error }));
      });
      request.on('response', (response) => {
        settle();
        const requestId = header(response.headers, 'request-id');
        const status = response.statusCode ?? 0;
        // An error status, a redirect (not followed: a POST is not re-sent elsewhere), or a JSON
        // answer where an event stream was asked for (a gateway that does not stream).
        const json = /^application\/json\b/i.test(header(response.headers, 'content-type') ?? '');
        if (status < 200 || status > 299 || json) {
          readErrorBody(response).then(
            (text) => reject(apiError(status, status >= 300 && status <= 399 ? redirectMessage(response.headers) : json && status <= 299 && !isApiErrorBody(text) ? notAStream(text) : text, response.headers)),
            (error: unknown) => reject(new AnthropicConnectionError('The connection closed while reading an error response.', 'stream', { cause: error })),
          );
          return;
        }
        resolve({ requestId, events: readEvents(response, request, signal) });
      });
      request.end(body);
    });
  }
}

/** `<baseURL>/v1/messages`, keeping a path prefix the base URL has; what is wrong when it cannot. */
export function messagesUrl(baseURL: string): URL | string {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    return `The Anthropic base URL ${JSON.stringify(baseURL)} is not a URL (e.g. https://api.anthropic.com)`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `The Anthropic base URL ${JSON.stringify(baseURL)} is not http: or https:`;
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/messages`;
  return url;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function headerReader(headers: IncomingHttpHeaders): HeaderReader {
  return { get: (name) => header(headers, name.toLowerCase()) ?? null };
}

async function readErrorBody(response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const chunk of response as AsyncIterable<string>) {
    if (text.length < MAX_ERROR_BODY) text += chunk;
  }
  return text.slice(0, MAX_ERROR_BODY);
}

function redirectMessage(headers: IncomingHttpHeaders): string {
  const location = header(headers, 'location');
  return `the server answered with a redirect${location ? ` to ${location}` : ''}, which is not followed; set the base URL to the address that answers`;
}

function isApiErrorBody(text: string): boolean {
  try {
    return typeof (JSON.parse(text) as ErrorBody | null)?.error === 'object';
  } catch {
    return false;
  }
}

function notAStream(text: string): string {
  return `the server answered with JSON instead of an event stream (${text.slice(0, 200).trim() || 'empty body'}); point the base URL at an endpoint that streams`;
}

interface ErrorBody {
  error?: { type?: unknown; message?: unknown };
  message?: unknown;
}

function apiError(status: number | undefined, text: string, headers: IncomingHttpHeaders | undefined): AnthropicApiError {
  let parsed: ErrorBody | undefined;
  try {
    parsed = JSON.parse(text) as ErrorBody;
  } catch {
    parsed = undefined;
  }
  const type = typeof parsed?.error?.type === 'string' ? parsed.error.type : undefined;
  const message = typeof parsed?.error?.message === 'string' ? parsed.error.message : typeof parsed?.message === 'string' ? parsed.message : text.trim() || (status === undefined ? 'error event without a body' : 'status code (no body)');
  const requestId = headers === undefined ? undefined : header(headers, 'request-id');
  return new AnthropicApiError({
    ...(status === undefined ? {} : { status }),
    ...(type === undefined ? {} : { type }),
    apiMessage: message,
    ...(requestId === undefined ? {} : { requestId }),
    ...(headers === undefined ? {} : { headers: headerReader(headers) }),
  });
}

/**
 * The stream's events as JSON objects, as the SSE format frames them: `event:` and `data:`
 * lines (several `data:` lines are joined with newlines), an empty line ends an event, `:`
 * starts a comment. `ping` events and events without a name are skipped; an `error` event
 * throws `AnthropicApiError`; data that is not JSON throws the `SyntaxError`.
 */
async function* readEvents(response: IncomingMessage, request: { destroy(): void }, signal: AbortSignal): AsyncGenerator<Anthropic.RawMessageStreamEvent> {
  const onAbort = (): void => request.destroy();
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
            const parsed = dispatch(event, data, response.headers);
            event = undefined;
            data = [];
            // Events already buffered when the call aborted are not delivered.
            if (signal.aborted) return;
            if (parsed !== undefined) yield parsed;
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
    if (error instanceof AnthropicApiError || error instanceof SyntaxError) throw error;
    throw new AnthropicConnectionError('The connection closed mid-stream.', 'stream', { cause: error });
  } finally {
    signal.removeEventListener('abort', onAbort);
    // A consumer that stops early (an error it raised, a break) closes the connection.
    if (!finished) request.destroy();
  }
}

function dispatch(event: string | undefined, data: string[], headers: IncomingHttpHeaders): Anthropic.RawMessageStreamEvent | undefined {
  if (event === undefined || event === 'ping') return undefined;
  const text = data.join('\n');
  if (event === 'error') throw apiError(undefined, text, headers);
  if (text === '') return undefined;
  return JSON.parse(text) as Anthropic.RawMessageStreamEvent;
}
