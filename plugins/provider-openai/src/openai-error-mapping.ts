import { describeErrorWithCause, type ProviderErrorCode } from '@tessera/contracts';
import { HttpConnectionError, retryAfterMs } from '@tessera/provider-kit';
import { OpenAIProviderError } from './openai-provider-error.js';
import { OpenAIApiError } from './openai-transport.js';

export interface ErrorContext {
  provider: string;
  model: string;
  baseURL: string;
  keySource: 'option' | 'environment' | 'none';
}

/** Turns anything an attempt threw (a transport error, a bad chunk) into an `OpenAIProviderError`. */
export function toOpenAIProviderError(error: unknown, context: ErrorContext): OpenAIProviderError {
  if (error instanceof OpenAIProviderError) return error;
  const provider = context.provider;
  if (error instanceof HttpConnectionError) {
    if (error.phase === 'timeout') {
      return new OpenAIProviderError(`${provider} did not answer in time (${context.baseURL}). Retry, or raise the provider timeout.`, {
        code: 'timeout',
        provider,
        cause: error,
      });
    }
    if (error.phase === 'stream') {
      return new OpenAIProviderError(`The connection to ${provider} dropped mid-stream (${describeErrorWithCause(error)}). Retry the turn.`, {
        code: 'network',
        provider,
        cause: error,
      });
    }
    return new OpenAIProviderError(
      `Could not reach ${provider} at ${context.baseURL}: ${describeErrorWithCause(error)}. Check that the server is running and the baseURL is right, then retry.`,
      { code: 'network', provider, cause: error },
    );
  }
  if (error instanceof OpenAIApiError) return fromApiError(error, context);
  if (error instanceof SyntaxError) {
    return new OpenAIProviderError(
      `${provider} sent a stream chunk that is not valid JSON (${error.message}). Retry; report it to the server's maintainers if it persists.`,
      { code: 'server', provider, cause: error },
    );
  }
  const text = error instanceof Error ? error.message : String(error);
  return new OpenAIProviderError(`${provider} call failed: ${text}`, { code: 'server', provider, cause: error });
}

function fromApiError(error: OpenAIApiError, context: ErrorContext): OpenAIProviderError {
  const { status, apiMessage, requestId } = error;
  const apiErrorType = error.code ?? error.type;
  const code = codeFor(status, error.code, apiMessage);
  const where = `${status === undefined ? 'stream error' : `HTTP ${status}`}${requestId ? `, request ${requestId}` : ''}`;
  return new OpenAIProviderError(`${messageFor(code, apiMessage, context, status)} (${where})`, {
    code,
    provider: context.provider,
    ...(status === undefined ? {} : { status }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(apiErrorType === undefined ? {} : { apiErrorType }),
    ...(error.headers === undefined ? {} : { retryAfterMs: retryAfterMs(error.headers) }),
    cause: error,
  });
}

function codeFor(status: number | undefined, apiCode: string | undefined, message: string): ProviderErrorCode {
  if (apiCode === 'context_length_exceeded' || /maximum context length|context (window|length)|too many tokens/i.test(message)) {
    return 'context_length';
  }
  if (status === 401 || status === 403 || apiCode === 'invalid_api_key') return 'auth';
  if (status === 429) return 'rate_limit';
  if (status === 503 || status === 529) return 'overloaded';
  if (status === 408 || status === 504) return 'timeout';
  if (status !== undefined && status >= 500) return 'server';
  // 4xx; also a redirect, or a JSON answer to a streaming call: the endpoint is wrong, and stays wrong.
  if (status !== undefined) return 'invalid_request';
  return 'server';
}

function messageFor(code: ProviderErrorCode, apiMessage: string, context: ErrorContext, status: number | undefined): string {
  const { provider } = context;
  switch (code) {
    case 'auth':
      return context.keySource === 'environment'
        ? `${provider} rejected the API key from OPENAI_API_KEY: ${apiMessage}. Set OPENAI_API_KEY to a valid key.`
        : `${provider} rejected the API key: ${apiMessage}. Fix the profile's apiKey (or set OPENAI_API_KEY).`;
    case 'rate_limit':
      return `${provider} rate limit reached: ${apiMessage}. Wait and retry, or lower the request rate.`;
    case 'overloaded':
      return `${provider} is overloaded: ${apiMessage}. Retry in a moment.`;
    case 'context_length':
      return `The conversation is too long for ${context.model}: ${apiMessage}. Compact the session or start a new one.`;
    case 'timeout':
      return `${provider} timed out: ${apiMessage}. Retry, or raise the provider timeout.`;
    case 'invalid_request':
      if (status !== undefined && status < 400) return `${provider}'s endpoint ${context.baseURL} cannot be used: ${apiMessage}.`;
      return /model/i.test(apiMessage) && /not.?found|does not exist|unknown/i.test(apiMessage)
        ? `model not found: ${context.model} (${apiMessage}). Pick a model the server serves.`
        : `${provider} rejected the request: ${apiMessage}. Check the model, tools and options sent.`;
    default:
      return `${provider} server error: ${apiMessage}. Retry; report it if it persists.`;
  }
}

