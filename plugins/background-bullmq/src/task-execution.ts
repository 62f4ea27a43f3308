import { rm } from 'node:fs/promises';
import type { Clock } from '@tessera/contracts';
import {
  cloneTaskState,
  BackgroundTaskError,
  BackgroundTaskWatchdog,
  watchdogLimits,
  toBackgroundTaskError,
  type IBackgroundTaskHandle,
  type IBackgroundTaskRequest,
  type IBackgroundTaskResult,
  type IBackgroundTaskRunner,
  type IBackgroundTaskWatchdogOptions,
  type TBackgroundTaskEvent,
  type TBackgroundTaskRunnerEvent,
  type TBackgroundTaskTimeoutReason,
} from '@tessera/plugin-background';
import { fail, isTerminal, snapshotEvent, transition } from './task-lifecycle.js';
import type { RedisTaskStore } from './task-store.js';

/** How one run ended, for the caller to commit (a plain task ends; a cron fire sleeps again). */
export type TExecutionOutcome =
  | { type: 'completed'; result: IBackgroundTaskResult }
  | { type: 'failed'; error: BackgroundTaskError }
  | { type: 'cancelled'; reason: string }
  /** A watchdog already failed the task in Redis. */
  | { type: 'tripped' }
  /** This worker lost the job's lock (another worker may run the job now): the run was stopped and must commit nothing. */
  | { type: 'lost'; reason: string };

export interface TaskExecutionOptions {
  store: RedisTaskStore;
  /** The task whose record, log and events this run updates. */
  taskId: string;
  /** The id the runner sees (a cron fire's `{taskId}-run-{n}`). */
  runId: string;
  request: Exclude<IBackgroundTaskRequest, { kind: 'scheduled' }>;
  runner: IBackgroundTaskRunner;
  clock: Clock;
  logFlushMs: number;
  /** Worker-wide watchdog defaults for agent runs; the request may override. */
  watchdog?: IBackgroundTaskWatchdogOptions;
  report: (error: unknown, phase: string) => void;
  /**
   * Runner progress is committed only after `startCommitted()`: the caller commits the run's
   * start itself (and may wait a moment first), and no runner event may reach the stream before it.
   */
  holdEventsUntilStarted?: boolean;
  /** The attempt this run is (a plain task's): its commits and log lines are refused once a later attempt began. */
  attempt?: number;
  /** Delete the handle's log file once the run ended and its log is in Redis (a worker's own temp log directory). */
  discardLogFile?: boolean;
}

/**
 * Waits for `settled` or `ms`, whichever comes first. The timer is cleared when the run settles
 * first (the usual case for short tasks): a worker running thousands of tasks a second would
 * otherwise keep one live timer, promise and closure per finished task for `ms`, long enough to
 * be promoted to the old generation and collected there.
 */
async function settledOrLater(settled: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const later = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([settled, later]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One run of a runner on a worker: starts the handle, turns runner progress into Redis
 * commits and stream events (in the order the runner reported them), copies the handle's
 * log into Redis, watches the cancel flag, and resolves with how the run ended.
 */
export class TaskExecution {
  private handle: IBackgroundTaskHandle | undefined;
  private watchdog: BackgroundTaskWatchdog | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private logCursor = 0;
  private cancelReason: string | undefined;
  private tripped = false;
  /** Set by `abandon()`: the run is no longer this worker's to record. */
  private lostReason: string | undefined;
  /** A log page could not be copied into Redis: the handle's log file is then kept. */
  private logCopyFailed = false;
  private readonly permissions = new Set<string>();
  /** Resolved by `startCommitted()`; runner commits wait for it (with `holdEventsUntilStarted`). */
  private startGate: Promise<void> | undefined;
  private openStartGate: (() => void) | undefined;

  constructor(private readonly options: TaskExecutionOptions) {
    if (options.holdEventsUntilStarted) this.startGate = new Promise<void>((resolve) => (this.openStartGate = resolve));
  }

  /** The run's start is in Redis: held runner progress may follow it now. Idempotent. */
  startCommitted(): void {
    this.openStartGate?.();
    this.openStartGate = undefined;
    this.startGate = undefined;
  }

  get cancelling(): boolean {
    return this.cancelReason !== undefined;
  }

  async run(): Promise<TExecutionOutcome> {
    const { runner, runId, request, taskId } = this.options;
    let handle: IBackgroundTaskHandle;
    try {
      handle = runner.start({ taskId: runId, request, emit: (event) => this.onRunnerEvent(event) });
    } catch (error) {
      return { type: 'failed', error: toBackgroundTaskError(error, 'runner', taskId) };
    }
    this.handle = handle;
    if (request.kind === 'agent') {
      this.watchdog = new BackgroundTaskWatchdog({ limits: watchdogLimits(request, this.options.watchdog), clock: this.options.clock, onTrip: (reason, message) => this.trip(reason, message) });
      this.watchdog.start(handle.pid);
    }
    if (this.cancelReason !== undefined) void this.stop(this.cancelReason);
    const settled = handle.result.then(
      (result): TExecutionOutcome => ({ type: 'completed', result }),
      (error: unknown): TExecutionOutcome => ({ type: 'failed', error: toBackgroundTaskError(error, request.kind === 'process' ? 'process' : 'runner', taskId) }),
    );
    let done = false;
    void settled.finally(() => (done = true));
    while (!done) {
      await settledOrLater(settled, this.options.logFlushMs);
      await this.flushLog();
      if (!done && this.cancelReason === undefined) await this.checkCancelFlag();
    }
    const outcome = await settled;
    this.watchdog?.stop();
    await this.flushLog();
    await this.chain;
    if (this.options.discardLogFile && handle.logPath !== undefined && !this.logCopyFailed) {
      void rm(handle.logPath, { force: true }).catch((error: unknown) => this.options.report(error, 'delete log file'));
    }
    if (this.lostReason !== undefined) return { type: 'lost', reason: this.lostReason };
    if (this.tripped) return { type: 'tripped' };
    if (this.cancelReason !== undefined && outcome.type === 'failed') return { type: 'cancelled', reason: this.cancelReason };
    return outcome;
  }

  get taskId(): string {
    return this.options.taskId;
  }

  /** Input for the running handle; refused when the runner takes none. */
  async send(input: string): Promise<void> {
    const handle = this.handle;
    if (!handle?.send) {
      throw new BackgroundTaskError('runner', `Background task ${this.options.taskId} (${this.options.request.kind}) does not accept input.`, { code: 'background_send_unsupported', taskId: this.options.taskId });
    }
    try {
      await handle.send(input);
    } catch (error) {
      throw toBackgroundTaskError(error, 'runner', this.options.taskId);
    }
  }

  /** Stops the run (its whole process group for shell tasks); `run()` then resolves `cancelled`. */
  cancel(reason: string): void {
    if (this.cancelReason !== undefined) return;
    this.cancelReason = reason;
    if (this.handle) void this.stop(reason);
  }

  /**
   * This worker lost the job's lock (taken for dead; another worker may run the job now): stops
   * the run's process like a cancel, but nothing more of the run reaches Redis (no progress, no
   * log line, no end), and `run()` resolves `lost`. Idempotent; wins over a cancel in progress.
   */
  abandon(reason: string): void {
    if (this.lostReason !== undefined) return;
    this.lostReason = reason;
    this.watchdog?.stop();
    const stopping = this.cancelReason !== undefined;
    this.cancelReason ??= reason;
    if (this.handle && !stopping) void this.stop(reason);
  }

  get lost(): boolean {
    return this.lostReason !== undefined;
  }

  /**
   * Commits pid / log path once the handle exists (`background_task_started` carries them). A
   * log file the worker deletes once its lines are in Redis (`discardLogFile`) is not named: every
   * process reads the log with `readLog`, and the path would only ever name a file that is gone,
   * on another host. A kept file (the deployment's `shell.logDir`) is named: a path on the
   * worker's host.
   */
  describeHandle(): { pid?: number; logPath?: string; transcriptPath?: string } {
    const handle = this.handle;
    if (!handle) return {};
    return {
      ...(handle.pid === undefined ? {} : { pid: handle.pid }),
      ...(handle.logPath === undefined || this.options.discardLogFile ? {} : { logPath: handle.logPath }),
      ...(handle.transcriptPath === undefined ? {} : { transcriptPath: handle.transcriptPath }),
    };
  }

  private async stop(reason: string): Promise<void> {
    try {
      await this.handle?.cancel(reason);
    } catch (error) {
      this.options.report(error, 'cancel');
    }
  }

  private async checkCancelFlag(): Promise<void> {
    try {
      const reason = await this.options.store.getField(this.options.taskId, 'cancel');
      if (reason !== null) this.cancel(reason);
    } catch (error) {
      this.options.report(error, 'read cancel flag');
    }
  }

  private async flushLog(): Promise<void> {
    const readLog = this.handle?.readLog;
    if (!readLog || this.lostReason !== undefined) return;
    try {
      for (;;) {
        const page = await readLog.call(this.handle, { offset: this.logCursor });
        if (this.lostReason !== undefined) return;
        if (page.lines.length > 0) await this.options.store.appendLog(this.options.taskId, page.lines, this.options.attempt);
        this.logCursor = page.nextCursor.offset;
        if (!page.hasMore || page.lines.length === 0) return;
      }
    } catch (error) {
      this.logCopyFailed = true;
      this.options.report(error, 'copy log to Redis');
    }
  }

  private trip(reason: TBackgroundTaskTimeoutReason, message: string): void {
    if (this.tripped || this.cancelReason !== undefined || this.lostReason !== undefined) return;
    this.tripped = true;
    const { taskId, clock } = this.options;
    const error = new BackgroundTaskError('timeout', `Background task ${taskId} ${message}`, { code: 'background_task_timeout', taskId, timeoutReason: reason });
    this.enqueue(async () => {
      await this.options.store.update(taskId, (state) => (isTerminal(state.status) ? undefined : [fail(state, error, clock.now())]), undefined, this.options.attempt);
    });
    void this.stop(`watchdog: ${reason}`);
  }

  /** Runner callbacks must not throw or block: work is chained so commits keep the runner's order. */
  private enqueue(work: () => Promise<void>): void {
    const gate = this.startGate;
    const after = gate ? this.chain.then(() => gate) : this.chain;
    this.chain = after.then(() => (this.lostReason === undefined ? work() : undefined)).catch((error: unknown) => this.options.report(error, 'runner event'));
  }

  private onRunnerEvent(event: TBackgroundTaskRunnerEvent): void {
    if (this.tripped || this.cancelReason !== undefined) return;
    const { store, taskId, clock } = this.options;
    switch (event.type) {
      case 'text_delta':
        this.watchdog?.textDelta(event.delta);
        this.enqueue(() => store.appendEvent({ type: 'background_task_text_delta', taskId, delta: event.delta }));
        return;
      case 'heartbeat':
        this.watchdog?.activity();
        return;
      case 'worker_stale':
        this.trip('stale_worker', `lost its worker${event.reason ? ` (${event.reason})` : ''}; restart the task.`);
        return;
      case 'sleep':
      case 'wake':
        return; // lifecycle of cron schedules belongs to BullMQ job schedulers here
      default:
        break;
    }
    this.watchdog?.activity();
    if (event.type === 'permission_request') this.watchdog?.setPaused(true);
    if (event.type === 'permission_decision') {
      this.permissions.delete(event.requestId);
      if (this.permissions.size === 0) this.watchdog?.setPaused(false);
    } else if (event.type === 'permission_request') this.permissions.add(event.requestId);
    const pending = this.permissions.size;
    this.enqueue(async () => {
      await store.update(taskId, (state) => {
        if (isTerminal(state.status)) return undefined;
        const now = clock.now();
        state.lastActivityAt = now;
        const events: TBackgroundTaskEvent[] = [];
        if (event.type === 'tool_start') {
          const action = event.action ?? event.toolName;
          state.currentAction = action;
          events.push({ type: 'background_task_tool_start', taskId, toolName: event.toolName, action, ...(event.toolCallId ? { toolCallId: event.toolCallId } : {}) });
        } else if (event.type === 'tool_end') {
          if (event.success) delete state.currentAction;
          else state.currentAction = `${event.toolName} failed${event.error ? `: ${event.error}` : ''}`;
          events.push({ type: 'background_task_tool_end', taskId, toolName: event.toolName, success: event.success, ...(event.toolCallId ? { toolCallId: event.toolCallId } : {}), ...(event.error ? { error: event.error } : {}) });
        } else if (event.type === 'permission_request') {
          transition(state, 'REQUEST_PERMISSION', now);
          state.pendingPermissions = pending;
          events.push({ type: 'background_task_permission_request', taskId, requestId: event.requestId, toolName: event.toolName, ...(event.description ? { description: event.description } : {}), task: cloneTaskState(state) });
          events.push(snapshotEvent('background_task_updated', state));
        } else if (event.type === 'permission_decision') {
          state.pendingPermissions = pending;
          if (pending === 0 && state.status === 'waiting_permission') transition(state, event.allowed ? 'PERMISSION_ALLOWED' : 'PERMISSION_DENIED', now);
          events.push(snapshotEvent('background_task_updated', state));
        }
        return events;
      }, undefined, this.options.attempt);
    });
  }
}
