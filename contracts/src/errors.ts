/** What kind of failure an error is; callers branch on this, not on message text. */
export type ErrorCategory =
  | 'configuration'
  | 'validation'
  | 'state'
  | 'provider'
  | 'tool'
  | 'permission'
  | 'timeout'
  | 'aborted'
  | 'io'
  | 'internal';

/** Constructor options of {@link TesseraError}. `cause` is passed on to `Error`. */
export interface TesseraErrorOptions {
  code: string;
  category: ErrorCategory;
  /** True when retrying the same operation (or continuing the session) can succeed. */
  recoverable: boolean;
  cause?: unknown;
  /** Located detail: file, field, line, token, plugin… */
  details?: Record<string, unknown>;
}

/**
 * Base of every error Tessera throws on purpose. `code` is stable and machine-readable,
 * the message says what happened and what to do next.
 */
export class TesseraError extends Error {
  readonly code: string;
  readonly category: ErrorCategory;
  readonly recoverable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: TesseraErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.category = options.category;
    this.recoverable = options.recoverable;
    this.details = options.details;
  }

  /** A plain object with name, code, category, recoverable, message and details, for logs and wire formats. The cause is left out. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      category: this.category,
      recoverable: this.recoverable,
      message: this.message,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

/** True for any {@link TesseraError}, subclasses included. */
export function isTesseraError(value: unknown): value is TesseraError {
  return value instanceof TesseraError;
}

/** The `AbortError` that `Session.run()` rejects with after `abort()`. */
export function createAbortError(): DOMException {
  return new DOMException('Aborted', 'AbortError');
}

/** True for any error named `AbortError`, whichever realm or library created it. */
export function isAbortError(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'AbortError'
  );
}

/** A plain description of any thrown value, for logs and tool results. */
export function describeError(value: unknown): string {
  if (value instanceof Error) return value.message || value.name;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
