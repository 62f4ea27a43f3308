import type Anthropic from '@anthropic-ai/sdk';
import { HttpApiError, resolveEndpoint, isUnusableAnswer, lowerCasedHeaders, postForEventStream, readUnusableAnswer, type HeaderSource, type ServerSentEvent } from '@tessera/provider-kit';
import { AnthropicProviderError } from './anthropic-provider-error.js';

/** One opened Messages API stream: the response's request id and its events, in order. */
export interface OpenedMessageStream {
  requestId: string | undefined;
  /** Ends quietly when the call's signal aborts; throws the transport errors otherwise. */
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>;
}

/** How the provider sends one streaming Messages call. */
export interface AnthropicTransport {
  open(params: Anthropic.MessageCreateParamsStreaming, signal: AbortSignal): Promise<OpenedMessageStream>;
}

/** An error answer of the Messages API (an HTTP status, or an SSE `error` event: `status` undefined). */
export class AnthropicApiError extends HttpApiError {
  override readonly name = 'AnthropicApiError';
}

export interface AnthropicHttpTransportOptions {
  /** Sent as `x-api-key`. At least one of `apiKey` and `authToken` is given. */
  apiKey?: string;
  /** Sent as `authorization: Bearer <token>` (what LLM gateways such as LiteLLM expect). */
  authToken?: string;
  /** The API root (`https://api.anthropic.com`, or a gateway with a path prefix). */
  baseURL: string;
  /** Extra headers on every request; they win over the defaults. */
  headers?: Record<string, string>;
  /** No response headers after this long: the attempt fails with `phase: 'timeout'`. */
  responseTimeoutMs: number;
}

const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The Messages API without the SDK: `postForEventStream` (`@tessera/provider-kit`) sends the
 * POST with `stream: true`, and the events are read here: `ping` skipped, an `error` event
 * raised as `AnthropicApiError`, data that is not JSON raised as the `SyntaxError`.
 */
export class AnthropicHttpTransport implements AnthropicTransport {
  readonly url: string;
  readonly #url: URL | undefined;
  /** Why the base URL cannot be used; every call fails with it (construction never throws). */
  readonly #invalid: string | undefined;
  readonly #headers: Record<string, string>;
  readonly #responseTimeoutMs: number;

  constructor(options: AnthropicHttpTransportOptions) {
    const endpoint = resolveEndpoint(options.baseURL, 'v1/messages');
    this.url = endpoint.href;
    this.#url = endpoint.url;
    this.#invalid = endpoint.invalid;
    this.#headers = {
      accept: 'application/json',
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      'user-agent': 'tessera-provider-anthropic',
      ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
      ...(options.authToken ? { authorization: `Bearer ${options.authToken}` } : {}),
      ...lowerCasedHeaders(options.headers ?? {}),
    };
    this.#responseTimeoutMs = options.responseTimeoutMs;
  }

  async open(params: Anthropic.MessageCreateParamsStreaming, signal: AbortSignal): Promise<OpenedMessageStream> {
    const url = this.#url;
    if (url === undefined) {
      throw new AnthropicProviderError(`${this.#invalid} (e.g. https://api.anthropic.com). Fix the provider's baseURL (or ANTHROPIC_BASE_URL).`, { code: 'invalid_request' });
    }
    const response = await postForEventStream({ url, headers: this.#headers, body: JSON.stringify(params), signal, responseTimeoutMs: this.#responseTimeoutMs });
    const requestId = response.headers.get('request-id') ?? undefined;
    if (isUnusableAnswer(response)) {
      const { text, problem } = await readUnusableAnswer(response, isApiErrorBody);
      throw apiError(response.status, problem ?? text, response.headers);
    }
    return { requestId, events: messageEvents(response.events(), response.headers) };
  }
}

interface ErrorBody {
  error?: { type?: unknown; message?: unknown };
  message?: unknown;
}

function isApiErrorBody(text: string): boolean {
  try {
    return typeof (JSON.parse(text) as ErrorBody | null)?.error === 'object';
  } catch {
    return false;
  }
}

function apiError(status: number | undefined, text: string, headers: HeaderSource): AnthropicApiError {
  let parsed: ErrorBody | undefined;
  try {
    parsed = JSON.parse(text) as ErrorBody;
  } catch {
    parsed = undefined;
  }
  const type = typeof parsed?.error?.type === 'string' ? parsed.error.type : undefined;
  const message =
    typeof parsed?.error?.message === 'string'
      ? parsed.error.message
      : typeof parsed?.message === 'string'
        ? parsed.message
        : text.trim() || (status === undefined ? 'error event without a body' : 'status code (no body)');
  const requestId = headers.get('request-id') ?? undefined;
  return new AnthropicApiError({
    ...(status === undefined ? {} : { status }),
    ...(type === undefined ? {} : { type }),
    apiMessage: message,
    ...(requestId === undefined ? {} : { requestId }),
    headers,
  });
}

/** The Messages API's events: `ping` and unnamed events skipped, `error` raised, the rest parsed. */
async function* messageEvents(events: AsyncGenerator<ServerSentEvent>, headers: HeaderSource): AsyncGenerator<Anthropic.RawMessageStreamEvent> {
  for await (const { event, data } of events) {
    if (event === undefined || event === 'ping') continue;
    if (event === 'error') throw apiError(undefined, data, headers);
    if (data === '') continue;
    yield JSON.parse(data) as Anthropic.RawMessageStreamEvent;
  }
}
