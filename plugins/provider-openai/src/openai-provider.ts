import type OpenAI from 'openai';
import { systemClock, type AssistantMessage, type Clock, type ModelInfo, type Provider, type ProviderRequest, copyWith } from '@tessera/contracts';
import { toOpenAIProviderError, type ErrorContext } from './openai-error-mapping.js';
import { lookupOpenAIModel, type ModelCatalogue } from './openai-model-catalogue.js';
import { OpenAIProviderError } from './openai-provider-error.js';
import { buildOpenAIRequest, type RequestShape } from './openai-request.js';
import { OpenAIStreamReader } from './openai-stream-reader.js';
import { OpenAIHttpTransport, type OpenAITransport } from './openai-transport.js';
import { DEFAULT_RETRY_POLICY, defaultSleep, IdleWatchdog, sleepOn, streamWithRetries, type RetryPolicy, type Sleep } from '@tessera/provider-kit';

export interface OpenAIProviderOptions {
  /**
   * Default: `OPENAI_API_KEY`, read when the provider is constructed. Local servers (LM Studio,
   * Ollama, vLLM) take any value; when a `baseURL` is set and no key exists, a placeholder is
   * sent. Without either, the provider still constructs and its first call fails with an
   * `auth` error saying what to set.
   */
  apiKey?: string;
  /**
   * e.g. `http://localhost:1234/v1` (LM Studio), `http://localhost:11434/v1` (Ollama).
   * Default: `OPENAI_BASE_URL`, else `https://api.openai.com/v1`.
   */
  baseURL?: string;
  /**
   * Default model for calls that do not name one. A call with neither fails with an
   * `invalid_request` error asking for a model.
   */
  model?: string;
  /** Name reported in messages, raw payloads and errors (default `openai`; e.g. `lmstudio`). */
  name?: string;
  /** `max_tokens` per call; unset lets the server decide. */
  maxTokens?: number;
  /** Ask for a final usage chunk (default true); turn off for servers that reject `stream_options`. */
  streamUsage?: boolean;
  /** Extra body fields for provider-specific knobs (`reasoning_effort`, `top_k`…). */
  extraBody?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Idle timeout in ms for each attempt (headers, then every chunk, refresh it). 0/unset: only a 10-minute wait for the response headers. */
  timeout?: number;
  maxRetries?: number;
  retryBaseDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Context window of `model` when the catalogue does not know it (local models). */
  contextWindow?: number;
  models?: ModelCatalogue;
  /**
   * Send calls through this `openai` SDK client (a custom `fetch`, a proxy, a test double).
   * Without it, calls go straight over `node:http(s)`, and the SDK is never loaded.
   */
  client?: OpenAI;
  sleep?: Sleep;
  /** Time source of the idle watchdog and the retry backoff (default: the system clock). */
  clock?: Clock;
}

const LOCAL_PLACEHOLDER_KEY = 'not-needed';
/** The wait for response headers when no idle `timeout` is set (what the SDK waits by default). */
const RESPONSE_TIMEOUT_MS = 600_000;

/**
 * `Provider` for OpenAI-compatible Chat Completions endpoints (OpenAI, LM Studio, Ollama, vLLM,
 * DeepSeek, Qwen), streaming, sent over `node:http(s)` by `OpenAIHttpTransport` (or through an
 * `openai` SDK `client` when one is given). Retries are ours (an SDK client gets `maxRetries:
 * 0`) so that nothing is retried once output has reached the caller.
 */
export class OpenAIProvider implements Provider {
  readonly name: string;
  /** The default model; undefined when none was given (every call must then name one). */
  readonly model: string | undefined;
  /** The SDK client passed in `options.client`, if any. */
  readonly client: OpenAI | undefined;
  /** Where calls go: `<baseURL>/chat/completions`. */
  readonly url: string;
  /** How calls are sent; undefined when no API key was found (the first call then fails with `auth`). */
  readonly #transport: Promise<OpenAITransport> | OpenAITransport | undefined;
  private readonly shape: Omit<RequestShape, 'model'>;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly sleep: Sleep;
  private readonly clock: Clock;
  private readonly errorContext: Omit<ErrorContext, 'model'>;
  private readonly models: ModelCatalogue;

  constructor(options: OpenAIProviderOptions = {}) {
    checkOpenAIProviderOptions(options);
    this.name = options.name ?? 'openai';
    this.model = options.model === '' ? undefined : options.model;
    this.models = { ...options.models };
    if (options.contextWindow !== undefined && this.model !== undefined) this.models[this.model] ??= { contextWindow: options.contextWindow };
    this.shape = {
      maxTokens: options.maxTokens,
      streamUsage: options.streamUsage ?? true,
      extraBody: options.extraBody,
    };
    this.retry = {
      maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
      baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
      maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    };
    this.timeoutMs = options.timeout !== undefined && options.timeout > 0 ? options.timeout : 0;
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? (options.clock ? sleepOn(options.clock) : defaultSleep);

    const envKey = process.env.OPENAI_API_KEY;
    const apiKey = options.apiKey || envKey || (options.baseURL ? LOCAL_PLACEHOLDER_KEY : undefined);
    const baseURL = options.baseURL ?? (process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1');
    this.client = options.client;
    if (options.client !== undefined) {
      const client = options.client;
      this.url = `${client.baseURL.replace(/\/+$/, '')}/chat/completions`;
      this.#transport = import('./openai-sdk-transport.js').then(({ OpenAISdkTransport }) => new OpenAISdkTransport(client));
      // A failed import surfaces at the first call, not as an unhandled rejection.
      this.#transport.catch(() => undefined);
    } else if (apiKey === undefined) {
      // Constructing never fails for want of a key (a CLI must compose for `doctor` or first-run
      // setup); the first call reports what to set.
      this.url = `${baseURL.replace(/\/+$/, '')}/chat/completions`;
      this.#transport = undefined;
    } else {
      const transport = new OpenAIHttpTransport({
        name: this.name,
        apiKey,
        baseURL,
        ...(options.headers === undefined ? {} : { headers: options.headers }),
        responseTimeoutMs: this.timeoutMs > 0 ? this.timeoutMs : RESPONSE_TIMEOUT_MS,
      });
      this.url = transport.url;
      this.#transport = transport;
    }
    this.errorContext = {
      provider: this.name,
      baseURL: options.client?.baseURL ?? baseURL,
      keySource: options.apiKey ? 'option' : envKey ? 'environment' : 'none',
    };
  }

  getModelInfo(model: string | undefined = this.model): ModelInfo | undefined {
    return model === undefined ? undefined : lookupOpenAIModel(model, this.models);
  }

  async stream(request: ProviderRequest): Promise<AssistantMessage> {
    if (this.#transport === undefined) throw missingKeyError(this.name);
    const transport = this.#transport;
    const model = request.model || this.model;
    if (model === undefined || model === '') throw missingModelError(this.name);
    const params = buildOpenAIRequest(request, copyWith(this.shape, { model }));
    const context: ErrorContext = copyWith(this.errorContext, { model });
    return streamWithRetries({
      policy: this.retry,
      sleep: this.sleep,
      signal: request.signal,
      ...(request.onRetry ? { onRetry: request.onRetry } : {}),
      newReader: () => new OpenAIStreamReader(request, this.name),
      beforeAttempt: () =>
        request.onProviderNativeRawPayload?.({ provider: this.name, apiSurface: 'chat.completions', payloadKind: 'request', payload: params }),
      attempt: async (reader, setRequestId) => this.attempt(await transport, params, request, reader, setRequestId),
      toError: (thrown, requestId) => withRequestId(toOpenAIProviderError(thrown, context), requestId, this.name),
    });
  }

  private async attempt(
    transport: OpenAITransport,
    params: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming,
    request: ProviderRequest,
    reader: OpenAIStreamReader,
    onRequestId: (id: string) => void,
  ): Promise<AssistantMessage> {
    const controller = new AbortController();
    const forward = (): void => controller.abort();
    if (request.signal.aborted) controller.abort();
    else request.signal.addEventListener('abort', forward, { once: true });
    const watchdog = this.timeoutMs > 0 ? new IdleWatchdog(this.timeoutMs, controller, this.clock) : undefined;
    const onRaw = request.onProviderNativeRawPayload;
    const provider = this.name;
    let requestId: string | undefined;
    try {
      const { chunks, requestId: id } = await transport.open(params, controller.signal);
      requestId = id;
      if (requestId !== undefined) onRequestId(requestId);
      for await (const chunk of chunks) {
        if (watchdog !== undefined) watchdog.touch();
        onRaw?.({ provider, apiSurface: 'chat.completions', payloadKind: 'stream_event', payload: chunk });
        reader.handle(chunk);
      }
    } catch (error) {
      if (watchdog?.fired) throw idleTimeoutError(watchdog.timeoutMs, provider);
      throw error;
    } finally {
      watchdog?.stop();
      request.signal.removeEventListener('abort', forward);
    }
    // Iteration ends quietly when the signal aborts, so the cause is checked here.
    if (watchdog?.fired) throw idleTimeoutError(watchdog.timeoutMs, provider);
    if (request.signal.aborted) return reader.toMessage('interrupted', requestId);
    if (!reader.finished) {
      throw new OpenAIProviderError(`The ${provider} stream ended before a finish_reason (connection closed early). Retry the turn.`, {
        code: 'network',
        provider,
        ...(requestId === undefined ? {} : { requestId }),
      });
    }
    onRaw?.({ provider, apiSurface: 'chat.completions', payloadKind: 'response', payload: reader.nativeResponse() });
    return reader.toMessage('complete', requestId);
  }
}

/** Errors raised mid-stream (connection drops) carry the id of the response they cut short. */
function withRequestId(error: OpenAIProviderError, requestId: string | undefined, provider: string): OpenAIProviderError {
  if (requestId === undefined || error.requestId !== undefined) return error;
  return new OpenAIProviderError(`${error.message} (request ${requestId})`, {
    code: error.code,
    provider,
    requestId,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    cause: error.cause,
  });
}

function idleTimeoutError(timeoutMs: number, provider: string): OpenAIProviderError {
  return new OpenAIProviderError(
    `${provider} sent nothing for ${timeoutMs} ms and the attempt was stopped. Retry, or raise the provider timeout.`,
    { code: 'timeout', provider },
  );
}

/**
 * Checks the options a provider would be built from, without building it (no client, no
 * environment read): what `openaiProvider(options)` runs so a bad option fails when the plugin
 * is made. A missing model or key is not an error here: calls report them.
 */
export function checkOpenAIProviderOptions(options: OpenAIProviderOptions): void {
  const name = typeof options?.name === 'string' && options.name !== '' ? options.name : 'openai';
  const invalid = (field: string, problem: string): OpenAIProviderError =>
    new OpenAIProviderError(`Invalid ${name} provider option "${field}": ${problem}.`, { code: 'invalid_request', provider: name });
  if (typeof options !== 'object' || options === null) throw invalid('options', `expected an object, got ${String(options)}`);
  for (const field of ['model', 'name', 'apiKey', 'baseURL'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'string') throw invalid(field, `must be a string, got ${typeof options[field]}`);
  }
  for (const field of ['maxTokens', 'contextWindow'] as const) {
    const value = options[field];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw invalid(field, `must be a positive integer, got ${String(value)}`);
  }
}

/** The typed error for a provider built without a key, raised at first use. */
function missingKeyError(provider: string): OpenAIProviderError {
  return new OpenAIProviderError(
    `No API key for ${provider}: set OPENAI_API_KEY, or pass apiKey (in settings: the profile's "apiKey", e.g. "$ENV:OPENAI_API_KEY"). Local servers need a baseURL instead.`,
    { code: 'auth', provider },
  );
}

/** A call that names no model to a provider built without one. */
function missingModelError(provider: string): OpenAIProviderError {
  return new OpenAIProviderError(
    `The ${provider} provider needs a model: pass model (in settings: the profile's "model"), or name one for the session or call.`,
    { code: 'invalid_request', provider },
  );
}
