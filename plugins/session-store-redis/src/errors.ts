import { describeError, TesseraError } from '@tessera/contracts';

/**
 * A save from a copy of the session that is no longer the newest: another process (a server
 * replica) saved it since this process loaded it, or may be changing it now (`reason`
 * `lease_lost`: this process's lock on the session was lost; `locked`: another process holds
 * the lock). Nothing was written; load it again, then redo the change.
 */
export class SessionConflictError extends TesseraError {
  constructor(sessionId: string, expected: number, stored: number, reason: 'stale' | 'lease_lost' | 'locked' = 'stale') {
    super(
      reason === 'lease_lost'
        ? `Session ${sessionId} was not saved: this process's lock on it was lost (it expired, and another replica may have taken the session), so the save was refused rather than overwrite that replica's entries. Load the session again and retry.`
        : reason === 'locked'
          ? `Session ${sessionId} was not saved: another replica holds its lock (it runs a turn or changes the session), so a save without the lock was refused. Wait for it to finish, load the session again and retry.`
          : expected === 0
        ? `Session ${sessionId} is already stored (revision ${stored}) but this process never loaded it; load it first so a save cannot overwrite what is stored.`
        : `Session ${sessionId} was saved elsewhere since this process loaded it (revision ${expected}, stored ${stored}); the save was refused so newer entries are not lost. Load the session again and retry.`,
      { code: 'session_conflict', category: 'state', recoverable: true, details: { sessionId, expectedRevision: expected, storedRevision: stored, reason } },
    );
  }
}

/** Redis did not answer (down, unreachable, timed out). The operation can be retried. */
export class SessionStoreUnavailableError extends TesseraError {
  constructor(operation: string, target: string, cause: unknown) {
    super(`Redis at ${target} failed to ${operation}: ${describeError(cause)}. Check that Redis is running and reachable; the operation can be retried.`, {
      code: 'session_store_unavailable',
      category: 'io',
      recoverable: true,
      cause,
      details: { operation, target },
    });
  }
}

/** A stored value that is not what this store writes (edited by hand, written by something else). */
export class SessionRecordCorruptError extends TesseraError {
  constructor(sessionId: string, key: string, problem: string) {
    super(`Session ${sessionId} cannot be read: ${key} ${problem}. Delete the session (or that key) or restore it from a backup.`, {
      code: 'session_record_corrupt',
      category: 'io',
      recoverable: false,
      details: { sessionId, key },
    });
  }
}
