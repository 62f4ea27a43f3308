import { TesseraError } from '@tessera/contracts';
import { CURRENT_SESSION_VERSION } from './entries.js';

/** A session file written by a newer release; it is refused and left exactly as it was. */
export class SessionVersionTooNewError extends TesseraError {
  constructor(file: string | undefined, version: number) {
    super(
      `Session file ${file ?? '(in memory)'} has format version ${version}, newer than the supported version ${CURRENT_SESSION_VERSION}. ` +
        'The file was not changed; open it with a newer release.',
      {
        code: 'session_version_too_new',
        category: 'validation',
        recoverable: false,
        details: { file, field: 'version', line: 1, version, supported: CURRENT_SESSION_VERSION },
      },
    );
  }
}

/** An operation named an entry id the session does not contain. */
export class SessionEntryNotFoundError extends TesseraError {
  constructor(entryId: string, sessionId?: string) {
    super(`Entry ${entryId} not found${sessionId === undefined ? '' : ` in session ${sessionId}`}. Pick an id from getEntries() or getTree().`, {
      code: 'session_entry_not_found',
      category: 'validation',
      recoverable: true,
      details: { entryId, ...(sessionId === undefined ? {} : { sessionId }), hint: 'Pick an id from getEntries() or getTree().' },
    });
  }
}

/** An operation named a session the store has neither open nor on disk. */
export class SessionNotFoundError extends TesseraError {
  constructor(sessionId: string, agentDir: string) {
    super(`Session ${sessionId} not found under ${agentDir}/sessions. Pick an id from list(); a session is written once it has an assistant message.`, {
      code: 'session_not_found',
      category: 'validation',
      recoverable: true,
      details: { sessionId, agentDir },
    });
  }
}

/** A new session (a fork) was given an id that a stored or open session already has. */
export class SessionExistsError extends TesseraError {
  constructor(sessionId: string) {
    super(`Session ${sessionId} already exists; pass another newSessionId, or none to get a fresh UUID.`, {
      code: 'session_exists',
      category: 'validation',
      recoverable: true,
      details: { sessionId, field: 'newSessionId' },
    });
  }
}

/** A write to the session file failed. Latched: every later operation re-throws the first one. */
export class SessionPersistenceError extends TesseraError {
  constructor(file: string | undefined, operation: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Could not ${operation} session file ${file ?? '(unknown)'}: ${reason}. ` +
        'Entries after this point are kept in memory only; fix the cause (disk space, permissions) and reopen the session.',
      { code: 'session_persistence_failed', category: 'io', recoverable: false, cause, details: { file, operation } },
    );
  }
}

/** A value that would become part of a file path (session id, blob ref, terminal id) is not safe. */
export class InvalidSessionPathPartError extends TesseraError {
  constructor(field: string, value: string, expected: string) {
    super(`Invalid ${field} ${JSON.stringify(value.slice(0, 80))}: expected ${expected}.`, {
      code: 'invalid_session_path_part',
      category: 'validation',
      recoverable: false,
      details: { field, expected },
    });
  }
}

/** A source file that cannot be used (missing or without a valid header), e.g. for forkFrom. */
export class InvalidSessionFileError extends TesseraError {
  constructor(file: string, reason: string) {
    super(`Cannot use session file ${file}: ${reason}.`, {
      code: 'invalid_session_file',
      category: 'validation',
      recoverable: false,
      details: { file, line: 1 },
    });
  }
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Throws unless `id` is safe to embed in a file name (no separators, no dots, bounded length). */
export function assertSafeId(field: string, id: string): void {
  if (!SAFE_ID.test(id)) {
    throw new InvalidSessionPathPartError(field, id, 'letters, digits, "-" or "_" (1–128 characters, not starting with "-" or "_")');
  }
}
