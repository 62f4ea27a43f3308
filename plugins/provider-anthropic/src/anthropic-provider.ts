import type Anthropic from '@anthropic-ai/sdk';
import { systemClock, type AssistantMessage, type Clock, type ModelInfo, type Provider, type ProviderRequest, copyWith } from '@tessera/contracts';
import { toAnthropicProviderError, type ErrorContext } from './anthropic-error-mapping.js';
import { lookupAnthropicModel, type ModelCatalogue } from './anthropic-model-catalogue.js';
import { AnthropicProviderError } from './anthropic-provider-error.js';
import { buildAnthropicRequest, type RequestShape } from './anthropic-request.js';
import { AnthropicStreamReader } from './anthropic-stream-reader.js';
import { AnthropicHttpTransport, type AnthropicTransport } from './anthropic-transport.js';
import { DEFAULT_RETRY_POLICY, defaultSleep, IdleWatchdog, sleepOn, streamWithRetries, type RetryPolicy, type Sleep } from '@tessera/provider-kit';

export interface AnthropicWebSearchOptions {
  maxUses?: number;
  allowedDomains?: string[];
  blockedDomains?: string[];
}

export interface AnthropicProviderOptions {
  /**
   * Sent as `x-api-key`. Default, when neither `apiKey` nor `authToken` is given:
   * `ANTHROPIC_API_KEY`, read when the provider is constructed. With no credential at all the
   * provider still constructs and its first call fails with an `auth` error saying what to set.
   */
  apiKey?: string;
  /**
   * Sent as `Authorization: Bearer <token>`, as Claude Code sends `ANTHROPIC_AUTH_TOKEN` (LLM
   * gateways such as LiteLLM expect it). Default, when neither `apiKey` nor `authToken` is given:
   * `ANTHROPIC_AUTH_TOKEN`. With both a key and a token, both headers are sent.
   */
  authToken?: string;
  /** Default: `ANTHROPIC_BASE_URL`, else the public API (`https://api.anthropic.com`). */
  baseURL?: string;
  /** Default model for calls that do not name one (default `claude-sonnet-4-6`). */
  model?: string;
  /** `max_tokens` per call (default 8192, or the thinking budget + 8192). */
  maxTokens?: number;
  /** Enables extended thinking with this token budget (at least 1024). */
  thinkingBudget?: number;
  /** Cache breakpoints on tools, system prompt and conversation tail (default on, 5-minute TTL). */
  promptCaching?: boolean | { ttl: '5m' | '1h' };
  /**
   * Hosted web search. `false`: never. `true` or options: on every call (unless the call says
   * `nativeTools: { webSearch: false }`). Unset: on for calls that ask for it with
   * `nativeTools: { webSearch: true }`, which a session does by default.
   */
  webSearch?: boolean | AnthropicWebSearchOptions;
  /** Extra HTTP headers on every request (e.g. `anthropic-beta`). */
  headers?: Record<string, string>;
  /**
   * Idle timeout in ms: an attempt that receives nothing (no headers, then no stream event) for
   * this long fails with a `timeout` error. 0 or unset: only a 10-minute wait for the response.
   */
  timeout?: number;
  /** Retries for transient failures before any output (default 2). */
  maxRetries?: number;
  retryBaseDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Extra or corrected context-window facts, by model id. */
  models?: ModelCatalogue;
  /**
   * Send calls through this `@anthropic-ai/sdk` client (a custom `fetch`, a proxy, a test
   * double). Without it, calls go straight over `node:http(s)`, and the SDK is never loaded.
   */
  client?: Anthropic;
  /** Replaces the backoff wait (tests record delays instead of sleeping). */
  sleep?: Sleep;
  /** Time source of the idle watchdog and the retry backoff (default: the system clock). */
  clock?: Clock;
}

const DEFAULT_MODEL = 'claude-sonnet-4-6';
const DEFAULT_MAX_TOKENS = 8192;

/** The wait for response headers when no idle `timeout` is set (what the SDK waits by default). */
const RESPONSE_TIMEOUT_MS = 600_000;

/**
 * `Provider` on the Anthropic Messages API (streaming). One `stream()` is one model round,
 * sent over `node:http(s)` by `AnthropicHttpTransport` (or through an SDK `client` when one is
 * given). Retries are ours (an SDK client gets `maxRetries: 0`), because only we know whether
 * output already reached the caller: a transient failure is retried with backoff (honouring
 * `retry-after`) only while nothing has been streamed.
 */
export class AnthropicProvider implements Provider {
  readonly name = 'anthropic';
  readonly model: string;
  /** The SDK client passed in `options.client`, if any. */
  readonly client: Anthropic | undefined;
  /** Where calls go: `<baseURL>/v1/messages`. */
  readonly url: string;
  /** How calls are sent; undefined when no API key was found (the first call then fails with `auth`). */
  readonly #transport: Promise<AnthropicTransport> | AnthropicTransport | undefined;
  private readonly webSearchMode: 'never' | 'always' | 'on-request';
  private readonly webSearchTool: Anthropic.WebSearchTool20250305;
  private readonly shape: Omit<RequestShape, 'model' | 'webSearch'>;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly sleep: Sleep;
  private readonly clock: Clock;
  private readonly errorContext: Omit<ErrorContext, 'model'>;
  private readonly models: ModelCatalogue;

  constructor(options: AnthropicProviderOptions = {}) {
    this.model = options.model ?? DEFAULT_MODEL;
    this.models = options.models ?? {};
    const budget = options.thinkingBudget;
    const maxTokens = checkAnthropicProviderOptions(options);
    const caching = options.promptCaching ?? true;
    this.shape = {
      maxTokens,
      thinkingBudget: budget,
      cacheControl: caching === false ? undefined : caching === true ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: caching.ttl },
    };
    this.webSearchMode = options.webSearch === undefined ? 'on-request' : options.webSearch === false ? 'never' : 'always';
    const { maxUses, allowedDomains, blockedDomains } = typeof options.webSearch === 'object' ? options.webSearch : {};
    this.webSearchTool = {
      type: 'web_search_20250305',
      name: 'web_search',
      ...(maxUses === undefined ? {} : { max_uses: maxUses }),
      ...(allowedDomains === undefined ? {} : { allowed_domains: allowedDomains }),
      ...(blockedDomains === undefined ? {} : { blocked_domains: blockedDomains }),
    };
    this.retry = {
      maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
      baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
      maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    };
    this.timeoutMs = options.timeout !== undefined && options.timeout > 0 ? options.timeout : 0;
    this.clock = options.clock ?? systemClock;
    this.sleep = options.sleep ?? (options.clock ? sleepOn(options.clock) : defaultSleep);

    // Credentials given in code are the only ones sent; without any, both variables are read.
    const explicit = options.apiKey !== undefined || options.authToken !== undefined;
    const apiKey = explicit ? options.apiKey : process.env.ANTHROPIC_API_KEY;
    const authToken = explicit ? options.authToken : process.env.ANTHROPIC_AUTH_TOKEN;
    const baseURL = options.baseURL ?? (process.env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com');
    this.client = options.client;
    if (options.client !== undefined) {
      const client = options.client;
      this.url = `${client.baseURL.replace(/\/+$/, '')}/v1/messages`;
      this.#transport = import('./anthropic-sdk-transport.js').then(({ AnthropicSdkTransport }) => new AnthropicSdkTransport(client));
      // A failed import surfaces at the first call, not as an unhandled rejection.
      this.#transport.catch(() => undefined);
    } else if (!apiKey && !authToken) {
      // Constructing never fails for want of a key (a CLI must compose for `doctor` or first-run
      // setup); the first call reports what to set.
      this.url = `${baseURL.replace(/\/+$/, '')}/v1/messages`;
      this.#transport = undefined;
    } else {
      const transport = new AnthropicHttpTransport({
        ...(apiKey ? { apiKey } : {}),
        ...(authToken ? { authToken } : {}),
        baseURL,
        ...(options.headers === undefined ? {} : { headers: options.headers }),
        responseTimeoutMs: this.timeoutMs > 0 ? this.timeoutMs : RESPONSE_TIMEOUT_MS,
      });
      this.url = transport.url;
      this.#transport = transport;
    }
    this.errorContext = {
      baseURL: options.client?.baseURL ?? baseURL,
      keySource: explicit ? 'option' : apiKey && authToken ? 'ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN' : authToken ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY',
    };
  }

  getModelInfo(model: string = this.model): ModelInfo | undefined {
    return lookupAnthropicModel(model, this.models);
  }

  async stream(request: ProviderRequest): Promise<AssistantMessage> {
    if (this.#transport === undefined) throw missingKeyError();
    const transport = this.#transport;
    const model = request.model ?? this.model;
    const asked = request.nativeTools?.webSearch;
    const webSearch = asked === false || this.webSearchMode === 'never' || (this.webSearchMode === 'on-request' && asked !== true) ? undefined : this.webSearchTool;
    const params = buildAnthropicRequest(request, copyWith(this.shape, { model, webSearch }));
    const context: ErrorContext = copyWith(this.errorContext, { model });
    return streamWithRetries({
      policy: this.retry,
      sleep: this.sleep,
      signal: request.signal,
      ...(request.onRetry ? { onRetry: request.onRetry } : {}),
      newReader: () => new AnthropicStreamReader(request),
      beforeAttempt: () =>
        request.onProviderNativeRawPayload?.({ provider: 'anthropic', apiSurface: 'messages', payloadKind: 'request', payload: params }),
      attempt: async (reader, setRequestId) => this.attempt(await transport, params, request, reader, setRequestId),
      toError: (thrown, requestId) => withRequestId(toAnthropicProviderError(thrown, context), requestId),
    });
  }

  /** One HTTP attempt: resolves with the reply (interrupted on abort), rejects with what failed. */
  private async attempt(
    transport: AnthropicTransport,
    params: Anthropic.MessageCreateParamsStreaming,
    request: ProviderRequest,
    reader: AnthropicStreamReader,
    onRequestId: (id: string) => void,
  ): Promise<AssistantMessage> {
    const controller = new AbortController();
    const forward = (): void => controller.abort();
    if (request.signal.aborted) controller.abort();
    else request.signal.addEventListener('abort', forward, { once: true });
    const watchdog = this.timeoutMs > 0 ? new IdleWatchdog(this.timeoutMs, controller, this.clock) : undefined;
    const onRaw = request.onProviderNativeRawPayload;
    let requestId: string | undefined;
    try {
      const { events, requestId: id } = await transport.open(params, controller.signal);
      requestId = id;
      if (requestId !== undefined) onRequestId(requestId);
      for await (const event of events) {
        if (watchdog !== undefined) watchdog.touch();
        onRaw?.({ provider: 'anthropic', apiSurface: 'messages', payloadKind: 'stream_event', payload: event });
        reader.handle(event);
      }
    } catch (error) {
      if (watchdog?.fired) throw idleTimeoutError(watchdog.timeoutMs);
      throw error;
    } finally {
      watchdog?.stop();
      request.signal.removeEventListener('abort', forward);
    }
    // Iteration ends quietly when the signal aborts, so the cause is checked here.
    if (watchdog?.fired) throw idleTimeoutError(watchdog.timeoutMs);
    if (request.signal.aborted) return reader.toMessage('interrupted', requestId);
    if (!reader.finished) {
      throw new AnthropicProviderError(
        'The Anthropic stream ended before message_stop (connection closed early). Retry the turn.',
        { code: 'network', ...(requestId === undefined ? {} : { requestId }) },
      );
    }
    onRaw?.({ provider: 'anthropic', apiSurface: 'messages', payloadKind: 'response', payload: reader.nativeResponse() });
    return reader.toMessage('complete', requestId);
  }
}

/** Errors raised mid-stream (connection drops) carry the id of the response they cut short. */
function withRequestId(error: AnthropicProviderError, requestId: string | undefined): AnthropicProviderError {
  if (requestId === undefined || error.requestId !== undefined) return error;
  const copy = new AnthropicProviderError(`${error.message} (request ${requestId})`, {
    code: error.code,
    requestId,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    cause: error.cause,
  });
  return copy;
}

/**
 * Checks the options a provider would be built from, without building it (no client, no
 * environment read): what `anthropicProvider(options)` runs so a bad option fails when the
 * plugin is made. Returns the effective `max_tokens`.
 */
export function checkAnthropicProviderOptions(options: AnthropicProviderOptions): number {
  const budget = options.thinkingBudget;
  if (budget !== undefined && (!Number.isInteger(budget) || budget < 1024)) {
    throw invalidOption('thinkingBudget', `must be an integer of at least 1024, got ${budget}`);
  }
  const maxTokens = options.maxTokens ?? (budget === undefined ? DEFAULT_MAX_TOKENS : budget + DEFAULT_MAX_TOKENS);
  if (budget !== undefined && maxTokens <= budget) {
    throw invalidOption('maxTokens', `must be greater than thinkingBudget (${budget}), got ${maxTokens}`);
  }
  return maxTokens;
}

function invalidOption(field: string, problem: string): AnthropicProviderError {
  return new AnthropicProviderError(`Invalid Anthropic provider option "${field}": ${problem}.`, { code: 'invalid_request' });
}

function idleTimeoutError(timeoutMs: number): AnthropicProviderError {
  return new AnthropicProviderError(
    `Anthropic sent nothing for ${timeoutMs} ms and the attempt was stopped. Retry, or raise the provider timeout.`,
    { code: 'timeout' },
  );
}

/** The typed error for a provider built without a key, raised at first use. */
function missingKeyError(): AnthropicProviderError {
  return new AnthropicProviderError(
    'No Anthropic API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway that takes a bearer token), or pass apiKey (in settings: the profile\'s "apiKey", e.g. "$ENV:ANTHROPIC_API_KEY").',
    { code: 'auth' },
  );
}
