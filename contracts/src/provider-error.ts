import { TesseraError } from './errors.js';
import type { AssistantMessage } from './message.js';

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

/** Codes a later attempt can cure by itself: providers retry these while nothing has streamed. */
export const RETRYABLE_CODES: ReadonlySet<ProviderErrorCode> = new Set(['rate_limit', 'overloaded', 'network', 'timeout', 'server']);

/** Constructor options of {@link ProviderError}. `auth`, `invalid_request` and `context_length` make it not recoverable. */
export interface ProviderErrorOptions {
  code: ProviderErrorCode;
  /** Provider name for messages and details (`anthropic`, `openai`, `lmstudio`…). */
  provider: string;
  status?: number;
  requestId?: string;
  /** The API's own error type or code (`overloaded_error`, `context_length_exceeded`…). */
  apiErrorType?: string;
  /** Milliseconds the server asked us to wait (`retry-after`). */
  retryAfterMs?: number;
  attempts?: number;
  cause?: unknown;
}

/**
 * A failed model call, the same shape for every provider. `status` and `requestId` come from
 * the HTTP response when there was one. `partialMessage` holds what had already streamed to
 * the caller when the failure came mid-answer (such a call is never retried).
 */
export class ProviderError extends TesseraError {
  declare readonly code: ProviderErrorCode;
  readonly provider: string;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  partialMessage: AssistantMessage | undefined;

  constructor(message: string, options: ProviderErrorOptions) {
    super(message, {
      code: options.code,
      category: 'provider',
      recoverable: options.code !== 'auth' && options.code !== 'invalid_request' && options.code !== 'context_length',
      cause: options.cause,
      details: {
        provider: options.provider,
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
        ...(options.apiErrorType === undefined ? {} : { apiErrorType: options.apiErrorType }),
        ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
      },
    });
    this.provider = options.provider;
    this.status = options.status;
    this.requestId = options.requestId;
    this.retryAfterMs = options.retryAfterMs;
  }

  get retryable(): boolean {
    return RETRYABLE_CODES.has(this.code);
  }
}

/**
 * True for the errors fetch (undici) raises when a streamed response body is cut off:
 * `TypeError: terminated` with an `UND_ERR_SOCKET` cause, or a connection reset.
 */
export function isStreamTermination(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  const cause = (error as { cause?: { code?: string } }).cause;
  return (
    error.message === 'terminated' ||
    (error as { code?: string }).code === 'ECONNRESET' ||
    cause?.code === 'UND_ERR_SOCKET' ||
    cause?.code === 'ECONNRESET'
  );
}

/** `message: cause message`, for network errors whose useful detail sits in `cause`. */
export function describeErrorWithCause(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}
