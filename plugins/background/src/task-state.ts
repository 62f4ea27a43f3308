import { BackgroundTaskError } from './background-task-error.js';
import type {
  IBackgroundTaskRequest,
  IBackgroundTaskState,
  IBackgroundTaskWorktreeState,
  TBackgroundTaskMetadata,
} from './types.js';

/** Ids become file names (logs, transcripts, worktrees), so they are kept to a safe alphabet. */
export const SAFE_TASK_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function assertSafeTaskId(id: string, what = 'task id'): void {
  if (typeof id !== 'string' || !SAFE_TASK_ID.test(id)) {
    throw new BackgroundTaskError('validation', `Invalid ${what} ${JSON.stringify(id)}: use 1-128 letters, digits, "_" or "-", starting with a letter or digit.`, {
      code: 'background_invalid_task_id',
      details: { id },
    });
  }
}

/** Copies metadata, rejecting anything but primitives so state stays plain, cloneable data. */
export function cloneTaskMetadata(metadata: unknown, field = 'metadata'): TBackgroundTaskMetadata {
  if (metadata === undefined) return {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw new BackgroundTaskError('validation', `Background task ${field} must be an object of primitive values.`, {
      code: 'background_invalid_metadata',
      details: { field },
    });
  }
  const copy: TBackgroundTaskMetadata = {};
  for (const [key, value] of Object.entries(metadata)) {
    const ok =
      value === null ||
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value));
    if (!ok) {
      throw new BackgroundTaskError('validation', `Background task ${field}.${key} must be a string, finite number, boolean or null.`, {
        code: 'background_invalid_metadata',
        details: { field: `${field}.${key}` },
      });
    }
    copy[key] = value as TBackgroundTaskMetadata[string];
  }
  return copy;
}

/** A copy that shares nothing mutable with `state`. */
export function cloneTaskState(state: IBackgroundTaskState): IBackgroundTaskState {
  const copy: IBackgroundTaskState = { ...state, metadata: { ...state.metadata } };
  if (state.error) copy.error = { ...state.error };
  if (state.resultMetadata) copy.resultMetadata = { ...state.resultMetadata };
  return copy;
}

/** A clone that is frozen, for events shared by every listener. */
export function freezeTaskState(state: IBackgroundTaskState): Readonly<IBackgroundTaskState> {
  const copy = cloneTaskState(state);
  Object.freeze(copy.metadata);
  if (copy.error) Object.freeze(copy.error);
  if (copy.resultMetadata) Object.freeze(copy.resultMetadata);
  return Object.freeze(copy);
}

const WORKTREE_FIELDS: ReadonlyArray<keyof IBackgroundTaskWorktreeState> = [
  'worktreePath',
  'branchName',
  'worktreeStatus',
  'worktreeNextAction',
  'worktreeBaseRevision',
  'parentWorktreeStatus',
];

/** Result metadata keys that have a matching state field (the worktree handoff). */
export function projectWorktreeFields(state: IBackgroundTaskState, metadata: Readonly<Record<string, unknown>> | undefined): void {
  if (!metadata) return;
  for (const field of WORKTREE_FIELDS) {
    const value = metadata[field];
    if (typeof value === 'string') state[field] = value;
  }
}

export function initialTaskState(
  id: string,
  request: IBackgroundTaskRequest,
  depth: number,
  metadata: TBackgroundTaskMetadata,
  now: number,
): IBackgroundTaskState {
  const state: IBackgroundTaskState = {
    id,
    kind: request.kind,
    mode: request.mode ?? 'background',
    status: 'queued',
    depth,
    cwd: request.cwd,
    createdAt: now,
    updatedAt: now,
    pendingPermissions: 0,
    metadata,
  };
  if (request.label !== undefined) state.label = request.label;
  if (request.description !== undefined) state.description = request.description;
  if (request.parentSessionId !== undefined) state.parentSessionId = request.parentSessionId;
  if (request.kind === 'agent') state.agentType = request.agentType;
  if (request.kind === 'process') state.command = request.command;
  if (request.kind === 'scheduled' && request.task.kind === 'process') state.command = request.task.command;
  return state;
}

/** Checks a spawn request; returns its depth. Throws a located `validation` error. */
export function validateTaskRequest(
  request: IBackgroundTaskRequest,
  runners: ReadonlyMap<string, unknown>,
  maxDepth: number,
): number {
    if (typeof request !== 'object' || request === null) {
      throw new BackgroundTaskError('validation', 'spawn() needs a request object with a kind.', { code: 'background_invalid_request' });
    }
    if (!runners.has(request.kind)) {
      throw new BackgroundTaskError('validation', `No runner handles background task kind "${String(request.kind)}"; registered kinds: ${[...runners.keys()].join(', ') || 'none'}.`, {
        code: 'background_unknown_kind',
        details: { field: 'kind' },
      });
    }
    if (typeof request.cwd !== 'string' || request.cwd === '') {
      throw new BackgroundTaskError('validation', 'Background task request needs a non-empty cwd.', {
        code: 'background_invalid_request',
        details: { field: 'cwd' },
      });
    }
    const depth = request.depth ?? 1;
    if (!Number.isInteger(depth) || depth < 0 || depth > maxDepth) {
      throw new BackgroundTaskError('validation', `Background task depth ${depth} is outside 0..${maxDepth} (maxDepth); nested tasks may not spawn further tasks.`, {
        code: 'background_invalid_depth',
        details: { field: 'depth', depth, maxDepth: maxDepth },
      });
    }
  return depth;
}

/** A manager option that must be a positive integer. */
export const positiveInteger = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 1) {
    throw new BackgroundTaskError('validation', `BackgroundTaskManager option ${name} must be a positive integer, got ${value}.`, {
      code: 'background_invalid_option',
      details: { field: name },
    });
  }
  return value;
};

/**
 * Projects a failure into the task's state, as plain data (never the error object): the error,
 * a timeout reason, exit code, signal and output from its details, a worktree a failed job still
 * handed over; a background task is marked unread. The caller then finishes it with `FAIL`.
 */
export function recordTaskFailure(state: IBackgroundTaskState, error: BackgroundTaskError): void {
  state.error = { code: error.code, category: error.taskCategory, recoverable: error.recoverable, message: error.message };
  if (error.timeoutReason) state.timeoutReason = error.timeoutReason;
  const details = error.details ?? {};
  if (typeof details.exitCode === 'number' || details.exitCode === null) state.exitCode = details.exitCode as number | null;
  if (typeof details.signal === 'string' || details.signal === null) state.signal = details.signal as string | null;
  if (typeof details.output === 'string') state.output = details.output;
  projectWorktreeFields(state, details as TBackgroundTaskMetadata);
  if (state.mode === 'background') state.unread = true;
}
