import { TesseraError } from '@tessera/contracts';

/** `submit` was called while one prompt runs and another already waits; the queue holds one. */
export class PromptQueueFullError extends TesseraError {
  constructor() {
    super('A prompt is already queued behind the running one; wait for it, or cancel it with cancelQueue().', {
      code: 'prompt_queue_full',
      category: 'state',
      recoverable: true,
    });
  }
}

/** `submit` was called after `shutdown()`. */
export class InteractiveSessionClosedError extends TesseraError {
  constructor(sessionId: string) {
    super(`The interactive session ${sessionId} has been shut down; create a new one.`, { code: 'session_closed', category: 'state', recoverable: false, details: { sessionId } });
  }
}

/** `resumeSessionId` names no session in the store (or no store is bound). */
export class ResumeSessionNotFoundError extends TesseraError {
  constructor(sessionId: string) {
    super(`No stored session "${sessionId}" to resume; list the stored sessions (listResumableSessions) and pick one of their ids.`, {
      code: 'session_not_found',
      category: 'validation',
      recoverable: false,
      details: { sessionId },
    });
  }
}

/**
 * `resumeSessionId` names a session of another folder than the `cwd` given. As Claude Code does, a
 * stored session is resumed from its own folder: its files, context and permissions are that
 * folder's, and a host that serves several projects must not let one reach another's sessions.
 */
export class ResumeSessionCwdMismatchError extends TesseraError {
  constructor(sessionId: string, sessionCwd: string, cwd: string) {
    super(`Session "${sessionId}" belongs to ${sessionCwd}, not ${cwd}. Resume it from its own folder (cd ${sessionCwd}), or pass that folder as cwd.`, {
      code: 'resume_cwd_mismatch',
      category: 'validation',
      recoverable: false,
      details: { sessionId, sessionCwd, cwd },
    });
  }
}
