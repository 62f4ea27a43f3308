import { TesseraError } from './errors.js';

/**
 * The one rule for session ids, everywhere they may become part of a path (stores, logs,
 * payload folders, server routes): 1–128 letters, digits, `.`, `_` or `-`, starting with a
 * letter or digit, and no `..`. That rules out separators, absolute paths, NUL bytes and
 * hidden files; UUIDs and pi's ids qualify.
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Thrown for a session id that breaks {@link SESSION_ID_PATTERN}; `details.id` holds the value given. */
export class InvalidSessionIdError extends TesseraError {
  constructor(id: unknown) {
    super(
      `Invalid session id ${JSON.stringify(id)}: use 1–128 letters, digits, ".", "_" or "-", starting with a letter or digit (UUIDs qualify).`,
      { code: 'invalid_session_id', category: 'validation', recoverable: false, details: { id } },
    );
  }
}

/** True when `id` is a string that may be used as a session id. */
export function isValidSessionId(id: unknown): id is string {
  return typeof id === 'string' && SESSION_ID_PATTERN.test(id) && !id.includes('..');
}

/** Throws {@link InvalidSessionIdError} unless `id` is a valid session id. */
export function assertValidSessionId(id: unknown): asserts id is string {
  if (!isValidSessionId(id)) throw new InvalidSessionIdError(id);
}
