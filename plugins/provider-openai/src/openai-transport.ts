import type OpenAI from 'openai';
import { HttpApiError, resolveEndpoint, isUnusableAnswer, lowerCasedHeaders, postForEventStream, readUnusableAnswer, type HeaderSource, type ServerSentEvent } from '@tessera/provider-kit';
import { OpenAIProviderError } from './openai-provider-error.js';

type ChatParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type ChatChunk = OpenAI.Chat.Completions.ChatCompletionChunk;

/** One opened Chat Completions stream: the response's request id and its chunks, in order. */
export interface OpenedChatStream {
  requestId: string | undefined;
  /** Ends quietly when the call's signal aborts; throws the transport errors otherwise. */
  chunks: AsyncIterable<ChatChunk>;
}

/** How the provider sends one streaming Chat Completions call. */
export interface OpenAITransport {
  open(params: ChatParams, signal: AbortSignal): Promise<OpenedChatStream>;
}

/** An error answer of a Chat Completions server (an HTTP status, or a chunk carrying `error`: `status` undefined). */
export class OpenAIApiError extends HttpApiError {
  override readonly name = 'OpenAIApiError';
}

export interface OpenAIHttpTransportOptions {
  /** The provider's name, for messages. */
  name: string;
  apiKey: string;
  /** The API root, including its version path (`https://api.openai.com/v1`, `http://localhost:11434/v1`). */
  baseURL: string;
  /** Extra headers on every request; they win over the defaults. */
  headers?: Record<string, string>;
  /** No response headers after this long: the attempt fails with `phase: 'timeout'`. */
  responseTimeoutMs: number;
}

/**
 * Chat Completions without the SDK: `postForEventStream` (`@tessera/provider-kit`) sends the
 * POST with `stream: true`, and the chunks are read here as the SDK reads them: `data: [DONE]`
 * ends the stream, a chunk with `error` is raised as `OpenAIApiError`, data that is not JSON
 * as the `SyntaxError`. `OPENAI_ORG_ID` / `OPENAI_PROJECT_ID`, when set, are sent as the SDK
 * sends them.
 */
export class OpenAIHttpTransport implements OpenAITransport {
  readonly url: string;
  readonly #url: URL | undefined;
  /** Why the base URL cannot be used; every call fails with it (construction never throws). */
  readonly #invalid: string | undefined;
  readonly #name: string;
  readonly #headers: Record<string, string>;
  readonly #responseTimeoutMs: number;

  constructor(options: OpenAIHttpTransportOptions) {
    this.#name = options.name;
    const endpoint = resolveEndpoint(options.baseURL, 'chat/completions');
    this.url = endpoint.href;
    this.#url = endpoint.url;
    this.#invalid = endpoint.invalid;
    const organization = process.env.OPENAI_ORG_ID;
    const project = process.env.OPENAI_PROJECT_ID;
    this.#headers = {
      accept: 'application/json',
      'content-type': 'application/json',
      'user-agent': 'tessera-provider-openai',
      authorization: `Bearer ${options.apiKey}`,
      ...(organization ? { 'openai-organization': organization } : {}),
      ...(project ? { 'openai-project': project } : {}),
      ...lowerCasedHeaders(options.headers ?? {}),
    };
    this.#responseTimeoutMs = options.responseTimeoutMs;
  }

  async open(params: ChatParams, signal: AbortSignal): Promise<OpenedChatStream> {
    const url = this.#url;
    if (url === undefined) {
      throw new OpenAIProviderError(`${this.#invalid} (e.g. https://api.openai.com/v1). Fix the ${this.#name} provider's baseURL (or OPENAI_BASE_URL).`, {
        code: 'invalid_request',
        provider: this.#name,
      });
    }
    const response = await postForEventStream({ url, headers: this.#headers, body: JSON.stringify(params), signal, responseTimeoutMs: this.#responseTimeoutMs });
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (isUnusableAnswer(response)) {
      const { text, problem } = await readUnusableAnswer(response, (body) => errorOf(body) !== undefined);
      throw apiError(response.status, problem !== undefined ? { message: problem } : (errorOf(text) ?? (text.trim() || 'status code (no body)')), response.headers);
    }
    return { requestId, chunks: chatChunks(response.events(), response.headers) };
  }
}

/** The `error` member of a JSON body, if it has one. */
function errorOf(text: string): unknown {
  try {
    const body = JSON.parse(text) as { error?: unknown } | null;
    return typeof body === 'object' && body !== null ? body.error : undefined;
  } catch {
    return undefined;
  }
}

/** An error as servers send it: `{ message, type, code }`, or a bare string (Ollama and others). */
function apiError(status: number | undefined, error: unknown, headers: HeaderSource): OpenAIApiError {
  const fields = typeof error === 'object' && error !== null ? (error as { message?: unknown; type?: unknown; code?: unknown }) : {};
  const message = typeof error === 'string' ? error : typeof fields.message === 'string' ? fields.message : JSON.stringify(error);
  const requestId = headers.get('x-request-id') ?? undefined;
  return new OpenAIApiError({
    ...(status === undefined ? {} : { status }),
    ...(typeof fields.code === 'string' ? { code: fields.code } : {}),
    ...(typeof fields.type === 'string' ? { type: fields.type } : {}),
    apiMessage: message,
    ...(requestId === undefined ? {} : { requestId }),
    headers,
  });
}

/**
 * Chat Completions chunks: until `[DONE]` (the rest of the body is read and ignored, so the
 * connection can be reused); a chunk carrying `error` is raised.
 */
async function* chatChunks(events: AsyncGenerator<ServerSentEvent>, headers: HeaderSource): AsyncGenerator<ChatChunk> {
  let done = false;
  for await (const { data } of events) {
    if (done) continue;
    if (data.startsWith('[DONE]')) {
      done = true;
      continue;
    }
    const chunk = JSON.parse(data) as ChatChunk & { error?: unknown };
    if (chunk !== null && typeof chunk === 'object' && chunk.error) throw apiError(undefined, chunk.error, headers);
    yield chunk;
  }
}
