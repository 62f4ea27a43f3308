import { describeErrorWithCause, type ProviderErrorCode } from '@tessera/contracts';
import { HttpConnectionError, retryAfterMs } from '@tessera/provider-kit';
import { AnthropicProviderError } from './anthropic-provider-error.js';
import { AnthropicApiError } from './anthropic-transport.js';

/** What the mapper needs to word an actionable message. */
export interface ErrorContext {
  model: string;
  baseURL: string;
  /** Where the credential came from (the options, or the named variables), so the auth message names what to fix. */
  keySource: 'option' | 'ANTHROPIC_API_KEY' | 'ANTHROPIC_AUTH_TOKEN' | 'ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN';
}

const TYPE_CODES: Record<string, ProviderErrorCode> = {
  authentication_error: 'auth',
  permission_error: 'auth',
  rate_limit_error: 'rate_limit',
  overloaded_error: 'overloaded',
  invalid_request_error: 'invalid_request',
  not_found_error: 'invalid_request',
  request_too_large: 'invalid_request',
  timeout_error: 'timeout',
  api_error: 'server',
};

/** Turns anything an attempt threw (a transport error, a bad event) into an `AnthropicProviderError`. */
export function toAnthropicProviderError(error: unknown, context: ErrorContext): AnthropicProviderError {
  if (error instanceof AnthropicProviderError) return error;
  if (error instanceof HttpConnectionError) {
    if (error.phase === 'timeout') {
      return new AnthropicProviderError(
        `Anthropic did not answer in time (${context.baseURL}). Retry, or raise the provider timeout.`,
        { code: 'timeout', cause: error },
      );
    }
    if (error.phase === 'stream') {
      return new AnthropicProviderError(
        `The connection to Anthropic dropped mid-stream (${describeErrorWithCause(error)}). Retry the turn.`,
        { code: 'network', cause: error },
      );
    }
    return new AnthropicProviderError(
      `Could not reach Anthropic at ${context.baseURL}: ${describeErrorWithCause(error)}. Check the network and baseURL, then retry.`,
      { code: 'network', cause: error },
    );
  }
  if (error instanceof AnthropicApiError) return fromApiError(error, context);
  if (error instanceof SyntaxError) {
    return new AnthropicProviderError(
      `Anthropic sent a stream event that is not valid JSON (${error.message}). Retry; report it if it persists.`,
      { code: 'server', cause: error },
    );
  }
  const text = error instanceof Error ? error.message : String(error);
  return new AnthropicProviderError(`Anthropic call failed: ${text}`, { code: 'server', cause: error });
}

function fromApiError(error: AnthropicApiError, context: ErrorContext): AnthropicProviderError {
  const { status, type: apiErrorType, apiMessage, requestId } = error;
  const code = codeFor(status, apiErrorType, apiMessage);
  const base = {
    code,
    ...(status === undefined ? {} : { status }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(apiErrorType === undefined ? {} : { apiErrorType }),
    ...(error.headers === undefined ? {} : { retryAfterMs: retryAfterMs(error.headers) }),
    cause: error,
  };
  const where = `${status === undefined ? 'stream error' : `HTTP ${status}`}${requestId ? `, request ${requestId}` : ''}`;
  return new AnthropicProviderError(`${messageFor(code, apiMessage, context, status)} (${where})`, base);
}

function codeFor(status: number | undefined, type: string | undefined, message: string): ProviderErrorCode {
  if (isContextLength(message)) return 'context_length';
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (status === 529) return 'overloaded';
  if (status === 408 || status === 504) return 'timeout';
  if (status !== undefined && status >= 500) return type === 'overloaded_error' ? 'overloaded' : 'server';
  if (type !== undefined && TYPE_CODES[type] !== undefined) return TYPE_CODES[type];
  // A redirect, or a JSON answer to a streaming call: the endpoint is wrong, and stays wrong.
  if (status !== undefined) return 'invalid_request';
  return 'server';
}

function isContextLength(message: string): boolean {
  return /prompt is too long|context (window|length)|too many (input )?tokens|exceeds? the (model'?s )?context/i.test(message);
}

function messageFor(code: ProviderErrorCode, apiMessage: string, context: ErrorContext, status: number | undefined): string {
  switch (code) {
    case 'auth':
      return context.keySource === 'option'
        ? `Anthropic rejected the configured API key: ${apiMessage}. Fix the profile's apiKey (or set ANTHROPIC_API_KEY).`
        : `Anthropic rejected the credential from ${context.keySource}: ${apiMessage}. Set ${context.keySource} to a valid value.`;
    case 'rate_limit':
      return `Anthropic rate limit reached: ${apiMessage}. Wait and retry, or lower the request rate.`;
    case 'overloaded':
      return `Anthropic is overloaded: ${apiMessage}. Retry in a moment.`;
    case 'context_length':
      return `The conversation is too long for ${context.model}: ${apiMessage}. Compact the session or start a new one.`;
    case 'timeout':
      return `Anthropic timed out: ${apiMessage}. Retry, or raise the provider timeout.`;
    case 'invalid_request':
      if (status !== undefined && status < 400) return `Anthropic's endpoint ${context.baseURL} cannot be used: ${apiMessage}.`;
      return /model/i.test(apiMessage) && /not.?found|unknown|invalid/i.test(apiMessage)
        ? `model not found: ${context.model} (${apiMessage}). Pick a model id your key can use.`
        : `Anthropic rejected the request: ${apiMessage}. Check the model, tools and options sent.`;
    default:
      return `Anthropic server error: ${apiMessage}. Retry; report it if it persists.`;
  }
}


