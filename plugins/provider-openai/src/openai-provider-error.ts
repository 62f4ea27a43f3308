import { TesseraError, type AssistantMessage } from '@tessera/contracts';

/** Why a provider call failed; callers branch on this, never on message text. */
export type ProviderErrorCode =
  | 'auth'
  | 'rate_limit'
  | 'overloaded'
  | 'invalid_request'
  | 'context_length'
  | 'network'
  | 'timeout'
  | 'aborted'
  | 'server';

/** Codes a later attempt can cure by itself: these are retried while nothing has been streamed. */
export const RETRYABLE_CODES: ReadonlySet<ProviderErrorCode> = new Set([
  'rate_limit',
  'overloaded',
  'network',
  'timeout',
  'server',
]);

export interface OpenAIProviderErrorOptions {
  code: ProviderErrorCode;
  /** The provider's name (`openai`, or the profile's label such as `lmstudio`). */
  provider?: string;
  status?: number;
  requestId?: string;
  /** The API's own error type (`server_error`…) or error code (`context_length_exceeded`…), when it sent one. */
  apiErrorType?: string;
  /** Milliseconds the server asked us to wait (`retry-after`). */
  retryAfterMs?: number;
  attempts?: number;
  cause?: unknown;
}

/**
 * A failed Chat Completions call. `code` is one of the provider error codes; `status` and `requestId`
 * come from the HTTP response when there was one. `partialMessage` holds what had already been
 * streamed to the caller when the failure came mid-answer (it is never retried then).
 */
export class OpenAIProviderError extends TesseraError {
  declare readonly code: ProviderErrorCode;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  partialMessage: AssistantMessage | undefined;

  constructor(message: string, options: OpenAIProviderErrorOptions) {
    super(message, {
      code: options.code,
      category: 'provider',
      recoverable: options.code !== 'auth' && options.code !== 'invalid_request' && options.code !== 'context_length',
      cause: options.cause,
      details: {
        provider: options.provider ?? 'openai',
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
        ...(options.apiErrorType === undefined ? {} : { apiErrorType: options.apiErrorType }),
        ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
      },
    });
    this.status = options.status;
    this.requestId = options.requestId;
    this.retryAfterMs = options.retryAfterMs;
  }

  get retryable(): boolean {
    return RETRYABLE_CODES.has(this.code);
  }
}
