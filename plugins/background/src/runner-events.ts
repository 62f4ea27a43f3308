import { BackgroundTaskError } from './background-task-error.js';
import type { BackgroundTaskWatchdog } from './background-task-watchdog.js';
import type { TBackgroundTaskTransitionEvent } from './state-machine.js';
import { freezeTaskState } from './task-state.js';
import type { TTaskSnapshotEventType } from './task-event-hub.js';
import type {
  IBackgroundTaskHandle,
  IBackgroundTaskRequest,
  IBackgroundTaskState,
  TBackgroundTaskEvent,
  TBackgroundTaskRunnerEvent,
  TBackgroundTaskTimeoutReason,
} from './types.js';

/** The manager's bookkeeping for one task. */
export interface TaskRecord {
  state: IBackgroundTaskState;
  request: IBackgroundTaskRequest;
  handle?: IBackgroundTaskHandle;
  watchdog?: BackgroundTaskWatchdog;
  holdsSlot: boolean;
  cancelRequested: boolean;
  cancelling?: Promise<void>;
  permissionRequests: Set<string>;
  done?: { promise: Promise<void>; resolve: () => void };
}

/** What runner progress may do to the manager. */
export interface RunnerEventTarget {
  now(): number;
  listening(): boolean;
  transition(record: TaskRecord, event: TBackgroundTaskTransitionEvent): void;
  takeSlot(record: TaskRecord): void;
  releaseSlot(record: TaskRecord): void;
  pump(): void;
  emitTask(type: TTaskSnapshotEventType, record: TaskRecord): void;
  dispatch(event: TBackgroundTaskEvent): void;
  trip(record: TaskRecord, reason: TBackgroundTaskTimeoutReason, message: string): void;
}

/**
 * Applies one runner event to a non-terminal task. Progress events (deltas, tool events,
 * heartbeats) never change the lifecycle; permission, sleep and wake events do, through the
 * transition table. Throws on an impossible edge; the manager reports it.
 */
export function applyRunnerEvent(target: RunnerEventTarget, record: TaskRecord, event: TBackgroundTaskRunnerEvent): void {
  const { state } = record;
  const taskId = state.id;
  const now = target.now();
  switch (event.type) {
    case 'text_delta':
      state.lastActivityAt = now;
      if (target.listening()) target.dispatch({ type: 'background_task_text_delta', taskId, delta: event.delta });
      record.watchdog?.textDelta(event.delta);
      return;
    case 'tool_start': {
      state.lastActivityAt = now;
      record.watchdog?.activity();
      const action = event.action ?? event.toolName;
      state.currentAction = action;
      target.dispatch({ type: 'background_task_tool_start', taskId, toolName: event.toolName, action, ...(event.toolCallId ? { toolCallId: event.toolCallId } : {}) });
      return;
    }
    case 'tool_end':
      state.lastActivityAt = now;
      record.watchdog?.activity();
      if (event.success) delete state.currentAction;
      else state.currentAction = `${event.toolName} failed${event.error ? `: ${event.error}` : ''}`;
      target.dispatch({
        type: 'background_task_tool_end',
        taskId,
        toolName: event.toolName,
        success: event.success,
        ...(event.toolCallId ? { toolCallId: event.toolCallId } : {}),
        ...(event.error ? { error: event.error } : {}),
      });
      return;
    case 'permission_request':
      target.transition(record, 'REQUEST_PERMISSION');
      record.permissionRequests.add(event.requestId);
      state.pendingPermissions = record.permissionRequests.size;
      state.lastActivityAt = now;
      record.watchdog?.setPaused(true);
      target.dispatch({
        type: 'background_task_permission_request',
        taskId,
        requestId: event.requestId,
        toolName: event.toolName,
        ...(event.description ? { description: event.description } : {}),
        task: freezeTaskState(state),
      });
      target.emitTask('background_task_updated', record);
      return;
    case 'permission_decision':
      if (!record.permissionRequests.delete(event.requestId)) {
        throw new BackgroundTaskError('validation', `Permission decision for unknown request ${event.requestId} on task ${taskId}.`, {
          code: 'background_unknown_permission_request',
          taskId,
        });
      }
      state.pendingPermissions = record.permissionRequests.size;
      state.lastActivityAt = now;
      if (record.permissionRequests.size === 0) {
        target.transition(record, event.allowed ? 'PERMISSION_ALLOWED' : 'PERMISSION_DENIED');
        record.watchdog?.setPaused(false);
      }
      target.emitTask('background_task_updated', record);
      return;
    case 'sleep':
      target.transition(record, 'SLEEP');
      if (event.nextRunAt !== undefined) state.nextRunAt = event.nextRunAt;
      // A sleeping scheduled task gives its slot back until the next fire.
      target.releaseSlot(record);
      target.emitTask('background_task_updated', record);
      target.pump();
      return;
    case 'wake':
      target.transition(record, 'WAKE');
      delete state.nextRunAt;
      state.lastActivityAt = now;
      // A fire cannot be postponed, so a woken task takes a slot even when all are busy;
      // queued tasks then wait until the count is back under maxConcurrent.
      target.takeSlot(record);
      target.emitTask('background_task_updated', record);
      return;
    case 'heartbeat':
      state.lastActivityAt = now;
      record.watchdog?.activity();
      return;
    case 'worker_stale':
      target.trip(record, 'stale_worker', `lost its worker${event.reason ? ` (${event.reason})` : ''}; restart the task.`);
      return;
    default:
      throw new BackgroundTaskError('validation', `Unknown runner event type ${JSON.stringify((event as { type?: unknown }).type)}.`, {
        code: 'background_unknown_runner_event',
        taskId,
      });
  }
}
