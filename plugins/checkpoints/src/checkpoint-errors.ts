import { TesseraError } from '@tessera/contracts';

/** A checkpoint id that is not of this plugin's form (`0001-1a2b3c4d`). */
export class InvalidCheckpointIdError extends TesseraError {
  constructor(id: unknown) {
    super(`Invalid checkpoint id ${JSON.stringify(id)}: use an id from list(), such as "0001-1a2b3c4d".`, {
      code: 'invalid_checkpoint_id',
      category: 'validation',
      recoverable: false,
      details: { checkpointId: id },
    });
  }
}

/** A well-formed id that names no checkpoint of the session. */
export class CheckpointNotFoundError extends TesseraError {
  constructor(sessionId: string, checkpointId: string, known: readonly string[]) {
    const hint = known.length === 0 ? 'The session has no checkpoints.' : `Known checkpoints: ${known.join(', ')}.`;
    super(`Session ${sessionId} has no checkpoint ${checkpointId} (it may have been removed by a restore). ${hint}`, {
      code: 'checkpoint_not_found',
      category: 'validation',
      recoverable: false,
      details: { sessionId, checkpointId, known },
    });
  }
}

/** Restore was asked for while a prompt turn of the session is running. */
/** Kept here for importers of this package; the class lives in contracts. */
export { CheckpointRestoreBusyError } from '@tessera/contracts';

/** list/inspect/restore for a session whose workspace is not known. */
export class CheckpointSessionUnknownError extends TesseraError {
  constructor(sessionId: string) {
    super(
      `No workspace is known for session ${sessionId}: its checkpoints live under the session cwd. Create or resume the session in this kernel first, or give editCheckpoints() a root.`,
      { code: 'checkpoint_session_unknown', category: 'state', recoverable: true, details: { sessionId } },
    );
  }
}

/** A manifest that cannot be read or does not hold what restore needs. */
export class CheckpointManifestError extends TesseraError {
  constructor(file: string, problem: string, cause?: unknown) {
    super(`Checkpoint manifest ${file} ${problem}. Delete that checkpoint's directory to drop it (and every later one).`, {
      code: 'checkpoint_manifest_invalid',
      category: 'io',
      recoverable: false,
      cause,
      details: { file },
    });
  }
}

/** A pre-image restore needs is gone; nothing was changed. */
export class CheckpointSnapshotMissingError extends TesseraError {
  constructor(checkpointId: string, path: string, snapshot: string) {
    super(
      `Cannot restore: the saved copy of ${path} in checkpoint ${checkpointId} (${snapshot}) is missing or unreadable. No file was changed; restore to a later checkpoint instead.`,
      { code: 'checkpoint_snapshot_missing', category: 'io', recoverable: false, details: { checkpointId, path, snapshot } },
    );
  }
}

/** Writing a pre-image back or deleting a created file failed part-way; restoring again retries. */
export class CheckpointRestoreError extends TesseraError {
  constructor(checkpointId: string, path: string, cause: unknown) {
    super(
      `Restoring checkpoint ${checkpointId} failed at ${path}: ${(cause as Error)?.message ?? String(cause)}. Some files may already be restored; fix the cause and restore again (every checkpoint is still there).`,
      { code: 'checkpoint_restore_failed', category: 'io', recoverable: true, cause, details: { checkpointId, path } },
    );
  }
}

/** A checkpoint lists a file outside the session's workspace: restore refuses the whole range. */
export class CheckpointOutsideWorkspaceError extends TesseraError {
  constructor(checkpointId: string, path: string, roots: readonly string[]) {
    super(
      `Checkpoint ${checkpointId} lists ${path}, which is outside the session's workspace (${roots.join(', ')}). Tessera never captures such a file, so the checkpoint was changed by something else; nothing was restored. Delete that checkpoint's directory (and every later one) to drop it.`,
      { code: 'checkpoint_outside_workspace', category: 'validation', recoverable: false, details: { checkpointId, path, roots: [...roots] } },
    );
  }
}
