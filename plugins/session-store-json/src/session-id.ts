import { TesseraError } from '@tessera/contracts';

/**
 * Session ids become file names, so only a conservative alphabet is accepted: letters,
 * digits, `.`, `_` and `-`, starting with a letter or digit, at most 128 characters. That
 * rules out separators, `..`, absolute paths, NUL bytes and hidden files.
 */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export class InvalidSessionIdError extends TesseraError {
  constructor(id: unknown) {
    super(
      `Invalid session id ${JSON.stringify(id)}: use 1–128 letters, digits, ".", "_" or "-", starting with a letter or digit (UUIDs qualify).`,
      { code: 'invalid_session_id', category: 'validation', recoverable: false, details: { id } },
    );
  }
}

export function isValidSessionId(id: unknown): id is string {
  return typeof id === 'string' && SESSION_ID.test(id) && !id.includes('..');
}

export function assertValidSessionId(id: unknown): asserts id is string {
  if (!isValidSessionId(id)) throw new InvalidSessionIdError(id);
}
