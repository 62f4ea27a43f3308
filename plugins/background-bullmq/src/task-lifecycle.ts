import {
  BackgroundTaskError,
  cloneTaskState,
  isTerminalBackgroundTaskStatus,
  projectWorktreeFields,
  recordTaskFailure,
  transitionBackgroundTaskStatus,
  type IBackgroundTaskResult,
  type IBackgroundTaskState,
  type TBackgroundTaskEvent,
  type TBackgroundTaskTransitionEvent,
} from '@tessera/plugin-background';

/**
 * Pure lifecycle steps shared by the client (`BullmqBackgroundTaskManager`) and the worker.
 * Every status change goes through `transitionBackgroundTaskStatus`, the same table the
 * in-process manager uses; these helpers only add the bookkeeping fields around it.
 */

type TSnapshotType = Extract<TBackgroundTaskEvent, { task: unknown }>['type'];

/** A snapshot event; the snapshot is a plain copy (it is serialised into the stream). */
export function snapshotEvent(type: TSnapshotType, state: IBackgroundTaskState): TBackgroundTaskEvent {
  return { type, taskId: state.id, task: cloneTaskState(state) } as TBackgroundTaskEvent;
}

export function transition(state: IBackgroundTaskState, event: TBackgroundTaskTransitionEvent, now: number): void {
  state.status = transitionBackgroundTaskStatus(state.status, event);
  state.updatedAt = now;
}

export { initialTaskState } from '@tessera/plugin-background';


/** The terminal step: transition, clear what only a live task has, and name the event. */
export function finish(state: IBackgroundTaskState, event: 'COMPLETE' | 'FAIL' | 'CANCEL', now: number): TBackgroundTaskEvent {
  transition(state, event, now);
  state.pendingPermissions = 0;
  delete state.nextRunAt;
  if (event !== 'FAIL') delete state.currentAction;
  state.completedAt = now;
  const type = state.status === 'completed' ? 'background_task_completed' : state.status === 'failed' ? 'background_task_failed' : 'background_task_cancelled';
  return snapshotEvent(type, state);
}

export function complete(state: IBackgroundTaskState, result: IBackgroundTaskResult, now: number): TBackgroundTaskEvent {
  state.output = result.output;
  if (result.exitCode !== undefined) state.exitCode = result.exitCode;
  if (result.signal !== undefined) state.signal = result.signal;
  if (result.metadata) {
    state.resultMetadata = { ...result.metadata };
    projectWorktreeFields(state, result.metadata);
  }
  if (state.mode === 'background') state.unread = true;
  return finish(state, 'COMPLETE', now);
}

/** Projects a `BackgroundTaskError` into plain state data (never the error object itself). */
export function fail(state: IBackgroundTaskState, error: BackgroundTaskError, now: number): TBackgroundTaskEvent {
  recordTaskFailure(state, error);
  return finish(state, 'FAIL', now);
}

export function cancel(state: IBackgroundTaskState, reason: string, now: number): TBackgroundTaskEvent {
  state.cancelReason ??= reason;
  return finish(state, 'CANCEL', now);
}

/** The error a task fails with when the worker that ran it disappeared (BullMQ stalled job). */
export function staleWorkerError(taskId: string, detail: string): BackgroundTaskError {
  return new BackgroundTaskError('timeout', `Background task ${taskId} lost its worker (${detail}); the worker process died or lost Redis. Spawn the task again, or allow retries for its kind.`, {
    code: 'background_task_timeout',
    taskId,
    timeoutReason: 'stale_worker',
  });
}

export const isTerminal = isTerminalBackgroundTaskStatus;
