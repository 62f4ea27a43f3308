import { systemClock, type Clock, type DiagnosticsReporter } from '@tessera/contracts';
import { BackgroundTaskError, toBackgroundTaskError } from './background-task-error.js';
import { BackgroundTaskWatchdog, watchdogLimits } from './background-task-watchdog.js';
import { createBackgroundTaskLogPage } from './log-pages.js';
import {
  isTerminalBackgroundTaskStatus,
  transitionBackgroundTaskStatus,
  type TBackgroundTaskTransitionEvent,
} from './state-machine.js';
import {
  assertSafeTaskId,
  cloneTaskMetadata,
  cloneTaskState,
  freezeTaskState,
  initialTaskState,
  projectWorktreeFields,
  positiveInteger,
  recordTaskFailure,
  validateTaskRequest,
} from './task-state.js';
import { applyRunnerEvent, type RunnerEventTarget, type TaskRecord } from './runner-events.js';
import { TaskEventHub, type TTaskSnapshotEventType } from './task-event-hub.js';
import { TaskQueue } from './task-queue.js';
import type {
  IBackgroundTaskHandle,
  IBackgroundTaskListFilter,
  IBackgroundTaskLogCursor,
  IBackgroundTaskLogPage,
  IBackgroundTaskManager,
  IBackgroundTaskRequest,
  IBackgroundTaskResult,
  IBackgroundTaskRunner,
  IBackgroundTaskState,
  IBackgroundTaskWatchdogOptions,
  TBackgroundTaskEvent,
  TBackgroundTaskEventListener,
  TBackgroundTaskIdFactory,
  TBackgroundTaskKind,
  TBackgroundTaskRunnerEvent,
  TBackgroundTaskTimeoutReason,
} from './types.js';

export interface BackgroundTaskManagerOptions {
  /** One runner per task kind. */
  runners: readonly IBackgroundTaskRunner[];
  /** Tasks holding a slot at once, over all kinds (default 4). */
  maxConcurrent?: number;
  /** Deepest allowed `request.depth` (default 1). */
  maxDepth?: number;
  /** Queued tasks allowed before `spawn` fails with `capacity` (default unlimited). */
  maxQueued?: number;
  idFactory?: TBackgroundTaskIdFactory;
  clock?: Clock;
  /** Receives every event, before subscribers. */
  eventSink?: TBackgroundTaskEventListener;
  /** Manager-wide watchdog defaults for agent tasks; requests may override. */
  watchdog?: IBackgroundTaskWatchdogOptions;
  isProcessAlive?: (pid: number) => boolean;
  /** Errors that must not escape: throwing listeners, invalid runner events, failed cancels. */
  onError?: (error: unknown, context: { taskId?: string; phase: string }) => void;
  /**
   * Where those errors are reported (code `TESSERA_BACKGROUND_TASK`) when there is no `onError`.
   * Default: Node process warnings. The `backgroundRuntime()` plugin passes the kernel's `Diagnostics`.
   */
  diagnostics?: DiagnosticsReporter;
}


/**
 * In-memory registry and scheduler of background tasks. It owns ids, the FIFO queue, bounded
 * concurrency, lifecycle transitions, watchdogs and events; runners own the actual work.
 */
export class BackgroundTaskManager implements IBackgroundTaskManager {
  private readonly runners = new Map<TBackgroundTaskKind, IBackgroundTaskRunner>();
  private readonly records = new Map<string, TaskRecord>();
  private readonly queue = new TaskQueue<TaskRecord>();
  private readonly events: TaskEventHub;
  private readonly clock: Clock;
  private readonly maxConcurrent: number;
  private readonly maxDepth: number;
  private readonly maxQueued: number;
  private readonly idFactory: TBackgroundTaskIdFactory;
  private sequence = 0;
  private active = 0;
  private pumping = false;
  private closing: Promise<void> | undefined;
  private readonly eventTarget: RunnerEventTarget = {
    now: () => this.clock.now(),
    listening: () => this.events.active,
    transition: (record, event) => this.transition(record, event),
    takeSlot: (record) => this.takeSlot(record),
    releaseSlot: (record) => this.releaseSlot(record),
    pump: () => this.pump(),
    emitTask: (type, record) => this.emitTask(type, record),
    dispatch: (event) => this.events.dispatch(event),
    trip: (record, reason, message) => this.onWatchdogTrip(record, reason, message),
  };

  constructor(private readonly options: BackgroundTaskManagerOptions) {
    for (const runner of options.runners) {
      if (this.runners.has(runner.kind)) {
        throw new BackgroundTaskError('validation', `Two background runners handle kind "${runner.kind}"; register one runner per kind.`, {
          code: 'background_duplicate_runner',
          details: { kind: runner.kind },
        });
      }
      this.runners.set(runner.kind, runner);
    }
    this.events = new TaskEventHub(options.eventSink, options.onError, options.diagnostics);
    this.clock = options.clock ?? systemClock;
    this.maxConcurrent = positiveInteger('maxConcurrent', options.maxConcurrent ?? 4);
    this.maxDepth = options.maxDepth ?? 1;
    this.maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
    this.idFactory = options.idFactory ?? ((_request, sequence) => `task_${sequence}`);
  }

  /** Tasks currently holding a concurrency slot. */
  get activeCount(): number {
    return this.active;
  }

  spawn(request: IBackgroundTaskRequest): Promise<IBackgroundTaskState> {
    try {
      return Promise.resolve(this.spawnNow(request));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  wait(taskId: string): Promise<IBackgroundTaskState> {
    const record = this.records.get(taskId);
    if (!record) return Promise.reject(this.notFound(taskId));
    if (isTerminalBackgroundTaskStatus(record.state.status)) return Promise.resolve(cloneTaskState(record.state));
    return this.terminal(record).then(() => cloneTaskState(record.state));
  }

  list(filter: IBackgroundTaskListFilter = {}): IBackgroundTaskState[] {
    const statuses = filter.status === undefined ? undefined : ([] as string[]).concat(filter.status);
    const out: IBackgroundTaskState[] = [];
    for (const { state } of this.records.values()) {
      if (statuses && !statuses.includes(state.status)) continue;
      if (filter.kind !== undefined && state.kind !== filter.kind) continue;
      if (filter.mode !== undefined && state.mode !== filter.mode) continue;
      if (filter.parentSessionId !== undefined && state.parentSessionId !== filter.parentSessionId) continue;
      out.push(cloneTaskState(state));
    }
    return out;
  }

  get(taskId: string): IBackgroundTaskState | undefined {
    const record = this.records.get(taskId);
    return record ? cloneTaskState(record.state) : undefined;
  }

  async cancel(taskId: string, reason = 'cancelled'): Promise<IBackgroundTaskState> {
    const record = this.records.get(taskId);
    if (!record) throw this.notFound(taskId);
    await this.requestCancel(record, reason);
    return cloneTaskState(record.state);
  }

  close(taskId: string): IBackgroundTaskState {
    const record = this.records.get(taskId);
    if (!record) throw this.notFound(taskId);
    if (!isTerminalBackgroundTaskStatus(record.state.status)) {
      throw new BackgroundTaskError('validation', `Cannot close background task ${taskId} while it is ${record.state.status}; cancel it or wait for it first.`, {
        code: 'background_task_not_terminal',
        taskId,
        details: { status: record.state.status },
      });
    }
    this.records.delete(taskId);
    this.emitTask('background_task_closed', record);
    return cloneTaskState(record.state);
  }

  shutdown(reason = 'shutdown'): Promise<void> {
    this.closing ??= (async () => {
      const open = [...this.records.values()].filter((record) => !isTerminalBackgroundTaskStatus(record.state.status));
      // Queued tasks first, so no slot freed by a cancel starts one of them.
      const queuedFirst = [...open.filter((r) => r.state.status === 'queued'), ...open.filter((r) => r.state.status !== 'queued')];
      await Promise.all(queuedFirst.map((record) => this.requestCancel(record, reason)));
    })();
    return this.closing;
  }

  async send(taskId: string, input: string): Promise<void> {
    const record = this.records.get(taskId);
    if (!record) throw this.notFound(taskId);
    if (isTerminalBackgroundTaskStatus(record.state.status)) {
      throw new BackgroundTaskError('validation', `Background task ${taskId} already ${record.state.status}; it cannot take input.`, {
        code: 'background_task_not_running',
        taskId,
      });
    }
    const send = record.handle?.send;
    if (!send) {
      throw new BackgroundTaskError('runner', `Background task ${taskId} (${record.state.kind}) does not accept input${record.handle ? '' : ' until it starts'}.`, {
        code: 'background_send_unsupported',
        taskId,
      });
    }
    try {
      await send.call(record.handle, input);
    } catch (error) {
      throw toBackgroundTaskError(error, 'runner', taskId);
    }
  }

  async readLog(taskId: string, cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage> {
    const record = this.records.get(taskId);
    if (!record) throw this.notFound(taskId);
    if (!record.handle) return createBackgroundTaskLogPage([], cursor);
    const readLog = record.handle.readLog;
    if (!readLog) {
      throw new BackgroundTaskError('runner', `Background task ${taskId} (${record.state.kind}) keeps no readable log.`, {
        code: 'background_log_unsupported',
        taskId,
      });
    }
    try {
      return await readLog.call(record.handle, cursor);
    } catch (error) {
      throw toBackgroundTaskError(error, 'runner', taskId);
    }
  }

  subscribe(listener: TBackgroundTaskEventListener): () => void {
    return this.events.subscribe(listener);
  }

  // ------------------------------------------------------------------ spawning

  private spawnNow(request: IBackgroundTaskRequest): IBackgroundTaskState {
    if (this.closing) {
      throw new BackgroundTaskError('capacity', 'The background task manager is shut down; it takes no new tasks.', {
        code: 'background_manager_shut_down',
      });
    }
    const depth = validateTaskRequest(request, this.runners, this.maxDepth);
    const metadata = cloneTaskMetadata(request.metadata);
    if (this.queue.size >= this.maxQueued) {
      throw new BackgroundTaskError('capacity', `The background queue is full (${this.maxQueued} tasks); wait for tasks to finish or raise maxQueued.`, {
        code: 'background_queue_full',
      });
    }
    this.sequence += 1;
    const id = this.idFactory(request, this.sequence);
    assertSafeTaskId(id);
    if (this.records.has(id)) {
      throw new BackgroundTaskError('validation', `The id factory returned ${id}, which is already in use.`, { code: 'background_duplicate_task_id' });
    }
    const record: TaskRecord = {
      state: initialTaskState(id, request, depth, metadata, this.clock.now()),
      request,
      holdsSlot: false,
      cancelRequested: false,
      permissionRequests: new Set(),
    };
    this.records.set(id, record);
    this.emitTask('background_task_created', record);
    this.queue.push(record);
    this.pump();
    return cloneTaskState(record.state);
  }

  private pump(): void {
    // A task that fails synchronously in start() finishes and pumps again; the guard keeps
    // that a loop instead of a recursion as deep as the queue.
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.active < this.maxConcurrent && !this.closing) {
        const record = this.queue.shift();
        if (!record) return;
        if (record.state.status === 'queued') this.start(record);
      }
    } finally {
      this.pumping = false;
    }
  }

  private start(record: TaskRecord): void {
    const { state, request } = record;
    this.transition(record, 'START');
    const now = this.clock.now();
    state.startedAt = now;
    state.lastActivityAt = now;
    this.takeSlot(record);
    if (request.kind === 'agent') record.watchdog = this.createWatchdog(record);
    let handle: IBackgroundTaskHandle;
    try {
      handle = this.runners.get(request.kind)!.start({
        taskId: state.id,
        request,
        emit: (event) => this.onRunnerEvent(record, event),
      });
    } catch (error) {
      this.fail(record, toBackgroundTaskError(error, 'runner', state.id));
      return;
    }
    record.handle = handle;
    this.projectHandle(record);
    handle.result.then(
      (result) => this.settle(record, result),
      (error: unknown) => this.settleError(record, error),
    );
    if (isTerminalBackgroundTaskStatus(state.status) || record.cancelRequested) {
      // A watchdog or cancel got in while the runner was starting: stop the work now.
      void this.cancelHandle(record, state.cancelReason ?? 'cancelled');
      return;
    }
    record.watchdog?.start(handle.pid);
    this.emitTask('background_task_started', record);
  }

  /** Paths a handle knows only later (a decorator that prepares asynchronously) are picked up at the end too. */
  private projectHandle(record: TaskRecord): void {
    const { handle, state } = record;
    if (!handle) return;
    if (handle.pid !== undefined) state.pid = handle.pid;
    if (handle.logPath !== undefined) state.logPath = handle.logPath;
    if (handle.transcriptPath !== undefined) state.transcriptPath = handle.transcriptPath;
  }

  private createWatchdog(record: TaskRecord): BackgroundTaskWatchdog {
    const limits = watchdogLimits(record.request as Extract<IBackgroundTaskRequest, { kind: 'agent' }>, this.options.watchdog);
    return new BackgroundTaskWatchdog({
      limits,
      clock: this.clock,
      onTrip: (reason, message) => this.onWatchdogTrip(record, reason, message),
      ...(this.options.isProcessAlive ? { isProcessAlive: this.options.isProcessAlive } : {}),
    });
  }

  // ------------------------------------------------------------------ runner progress

  private onRunnerEvent(record: TaskRecord, event: TBackgroundTaskRunnerEvent): void {
    const { state } = record;
    // Progress after the end (a late delta, a second exit report) is expected and dropped.
    if (isTerminalBackgroundTaskStatus(state.status) || record.cancelRequested) return;
    try {
      applyRunnerEvent(this.eventTarget, record, event);
    } catch (error) {
      // An impossible edge from a runner is reported, never thrown into the runner's callback.
      this.events.report(error, state.id, `runner event ${event?.type}`);
    }
  }

  // ------------------------------------------------------------------ endings

  private settle(record: TaskRecord, result: IBackgroundTaskResult): void {
    const { state } = record;
    if (isTerminalBackgroundTaskStatus(state.status)) return;
    this.projectHandle(record);
    if (record.cancelRequested) return this.finish(record, 'CANCEL');
    state.output = typeof result?.output === 'string' ? result.output : '';
    if (result?.exitCode !== undefined) state.exitCode = result.exitCode;
    if (result?.signal !== undefined) state.signal = result.signal;
    if (result?.metadata !== undefined) {
      try {
        state.resultMetadata = cloneTaskMetadata(result.metadata, 'result.metadata');
        projectWorktreeFields(state, state.resultMetadata);
      } catch (error) {
        this.events.report(error, state.id, 'result metadata');
      }
    }
    if (state.mode === 'background') state.unread = true;
    this.finish(record, 'COMPLETE');
  }

  private settleError(record: TaskRecord, error: unknown): void {
    if (isTerminalBackgroundTaskStatus(record.state.status)) return;
    this.projectHandle(record);
    if (record.cancelRequested) return this.finish(record, 'CANCEL');
    this.fail(record, toBackgroundTaskError(error, record.state.kind === 'process' ? 'process' : 'runner', record.state.id));
  }

  private fail(record: TaskRecord, error: BackgroundTaskError): void {
    recordTaskFailure(record.state, error);
    this.finish(record, 'FAIL');
  }

  private onWatchdogTrip(record: TaskRecord, reason: TBackgroundTaskTimeoutReason, message: string): void {
    if (isTerminalBackgroundTaskStatus(record.state.status)) return;
    const taskId = record.state.id;
    this.fail(record, new BackgroundTaskError('timeout', `Background task ${taskId} ${message}`, { code: 'background_task_timeout', taskId, timeoutReason: reason }));
    if (record.handle) void this.stopHandle(record, `watchdog: ${reason}`);
  }

  private finish(record: TaskRecord, event: TBackgroundTaskTransitionEvent): void {
    const { state } = record;
    this.transition(record, event);
    record.watchdog?.stop();
    record.permissionRequests.clear();
    state.pendingPermissions = 0;
    delete state.nextRunAt;
    if (event === 'COMPLETE' || event === 'CANCEL') delete state.currentAction;
    state.completedAt = state.updatedAt;
    this.releaseSlot(record);
    const type = state.status === 'completed' ? 'background_task_completed' : state.status === 'failed' ? 'background_task_failed' : 'background_task_cancelled';
    this.emitTask(type, record);
    record.done?.resolve();
    this.pump();
  }

  private requestCancel(record: TaskRecord, reason: string): Promise<void> {
    const { state } = record;
    if (isTerminalBackgroundTaskStatus(state.status)) return record.cancelling ?? Promise.resolve();
    if (record.cancelRequested) return this.terminal(record);
    record.cancelRequested = true;
    state.cancelReason = reason;
    record.watchdog?.stop();
    if (state.status === 'queued') {
      this.finish(record, 'CANCEL');
      return Promise.resolve();
    }
    // No handle yet means the runner is inside start(); start() cancels it when it returns.
    if (!record.handle) return this.terminal(record);
    return this.cancelHandle(record, reason);
  }

  private cancelHandle(record: TaskRecord, reason: string): Promise<void> {
    record.cancelling ??= this.stopHandle(record, reason).then(() => {
      if (!isTerminalBackgroundTaskStatus(record.state.status)) this.finish(record, 'CANCEL');
    });
    return record.cancelling;
  }

  private async stopHandle(record: TaskRecord, reason: string): Promise<void> {
    try {
      await record.handle?.cancel(reason);
    } catch (error) {
      this.events.report(toBackgroundTaskError(error, 'runner', record.state.id), record.state.id, 'cancel');
    }
  }

  // ------------------------------------------------------------------ plumbing

  private transition(record: TaskRecord, event: TBackgroundTaskTransitionEvent): void {
    record.state.status = transitionBackgroundTaskStatus(record.state.status, event);
    record.state.updatedAt = this.clock.now();
  }

  private takeSlot(record: TaskRecord): void {
    if (record.holdsSlot) return;
    record.holdsSlot = true;
    this.active += 1;
  }

  private releaseSlot(record: TaskRecord): void {
    if (!record.holdsSlot) return;
    record.holdsSlot = false;
    this.active -= 1;
  }

  private terminal(record: TaskRecord): Promise<void> {
    if (!record.done) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      record.done = { promise, resolve };
      if (isTerminalBackgroundTaskStatus(record.state.status)) resolve();
    }
    return record.done.promise;
  }

  private emitTask(type: TTaskSnapshotEventType, record: TaskRecord): void {
    if (!this.events.active) return;
    this.events.dispatch({ type, taskId: record.state.id, task: freezeTaskState(record.state) } as TBackgroundTaskEvent);
  }

  private notFound(taskId: string): BackgroundTaskError {
    return new BackgroundTaskError('validation', `No background task ${JSON.stringify(taskId)}; list() shows the known ids (closed tasks are gone).`, {
      code: 'background_task_not_found',
      taskId,
    });
  }
}
