import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackgroundTasks,
  Clock,
  createToken,
  Diagnostics,
  processWarningDiagnostics,
  type DiagnosticsReporter,
  type BackgroundOutputRead,
  type BackgroundProcessRequest,
  type BackgroundTaskStatus,
  type BackgroundTaskSummary,
  type BackgroundTaskTicket,
  copyWith,
} from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin, type ServiceResolver } from '@tessera/kernel';
import { BackgroundTaskManager, type BackgroundTaskManagerOptions } from './background-task-manager.js';
import { createManagedShellProcessRunner, type ManagedShellProcessRunnerOptions } from './managed-shell-process-runner.js';
import { createScheduledTaskRunner, type TScheduleFactory } from './scheduled-task-runner.js';
import { BackgroundTaskError } from './background-task-error.js';
import type { IBackgroundTaskManager, IBackgroundTaskRequest, IBackgroundTaskRunner, IBackgroundTaskState } from './types.js';

/** Lines one `readOutput` gathers at most; the rest waits for the next read. */
const MAX_READ_LINES = 5_000;

/** `BackgroundTasks.list`: the tasks `sessionId` started (all when omitted), newest first (both runtimes). */
export function sessionTaskList(tasks: readonly IBackgroundTaskState[], sessionId: string | undefined): BackgroundTaskSummary[] {
  return tasks
    .filter((task) => sessionId === undefined || task.parentSessionId === sessionId)
    .sort((a, b) => b.createdAt - a.createdAt)
    .map(taskListEntry);
}

/** `BackgroundTasks.spawn`'s request as a background `process` task (Bash `run_in_background`), in both runtimes. */
export function processTaskRequest(request: BackgroundProcessRequest): IBackgroundTaskRequest {
  return {
    kind: 'process',
    command: request.command,
    cwd: request.cwd,
    mode: 'background',
    ...(request.description === undefined ? {} : { description: request.description, label: request.description }),
    ...(request.sessionId === undefined ? {} : { parentSessionId: request.sessionId }),
  };
}

/** What `readOutputLines` gathered: the lines from `fromLine` on, where the next read starts, and whether lines were dropped before it or more wait. */
export interface OutputLines {
  lines: string[];
  nextLine: number;
  dropped: boolean;
  more: boolean;
}

/** A task's log lines from `fromLine` on, page by page, up to `MAX_READ_LINES` (`BackgroundTasks.readOutput` in both runtimes). */
export async function readOutputLines(manager: Pick<IBackgroundTaskManager, 'readLog'>, taskId: string, fromLine: number): Promise<OutputLines> {
  const lines: string[] = [];
  let cursor = { offset: Math.max(0, Math.floor(fromLine)) };
  let dropped = false;
  let more = false;
  for (;;) {
    const page = await manager.readLog(taskId, cursor);
    if (page.truncated && lines.length === 0) dropped = true;
    lines.push(...page.lines);
    cursor = page.nextCursor;
    if (!page.hasMore || page.lines.length === 0) break;
    if (lines.length >= MAX_READ_LINES) {
      more = true;
      break;
    }
  }
  return { lines, nextLine: cursor.offset, dropped, more };
}

/** `BackgroundTasks.readOutput`'s answer: the gathered lines with the task's status as read after them. */
export function outputRead(after: IBackgroundTaskState, read: OutputLines): BackgroundOutputRead {
  return {
    status: after.status as BackgroundTaskStatus,
    ...(after.exitCode === undefined ? {} : { exitCode: after.exitCode }),
    lines: read.lines,
    nextLine: read.nextLine,
    dropped: read.dropped,
    ...(read.more ? { more: true } : {}),
  };
}

/** The kernel-wide task manager, for plugins that need more than `BackgroundTasks.spawn`. */
export const BackgroundTaskManagerToken = createToken<BackgroundTaskManager>('BackgroundTaskManager');

/**
 * Where subagent jobs (`agent` tasks) run, when a runtime binds it: a distributed runtime
 * (`bullmqBackgroundRuntime()`) binds its manager here, so `SubagentLauncher` jobs run on its
 * workers. Unbound (the default), the subagents plugin runs them in an in-process manager of
 * its own.
 */
export const AgentTaskManagerToken = createToken<IBackgroundTaskManager>('AgentTaskManager');

export interface BackgroundRuntimeOptions
  extends Pick<BackgroundTaskManagerOptions, 'maxConcurrent' | 'maxDepth' | 'maxQueued' | 'watchdog' | 'eventSink' | 'onError' | 'idFactory'> {
  /** Shell runner settings; `logDir` defaults to a fresh directory under the OS temp dir. */
  shell?: ManagedShellProcessRunnerOptions;
  /** More runners (e.g. an `agent` runner); one per kind, these win over the defaults. */
  runners?: readonly IBackgroundTaskRunner[];
  createSchedule?: TScheduleFactory;
  /** Overrides the kernel's `Clock` for watchdogs. */
  clock?: Clock;
}

/** `BackgroundTasks` over the manager: Bash `run_in_background` becomes a `process` task. */
export function createBackgroundTasksAdapter(manager: BackgroundTaskManager): BackgroundTasks {
  /** The shell task, if it exists and (when a session is named) that session started it. */
  const owned = (taskId: string, sessionId: string | undefined): IBackgroundTaskState => {
    const state = manager.get(taskId);
    if (!state || state.kind !== 'process' || (sessionId !== undefined && state.parentSessionId !== sessionId)) {
      throw new BackgroundTaskError('validation', `No background task ${JSON.stringify(taskId)} in this session.`, { code: 'background_task_not_found', taskId });
    }
    return state;
  };
  return {
    list(sessionId) {
      return sessionTaskList(manager.list(), sessionId);
    },
    async close(taskId, sessionId) {
      const task = manager.get(taskId);
      if (!task || (sessionId !== undefined && task.parentSessionId !== sessionId)) {
        throw new BackgroundTaskError('validation', `No background task ${JSON.stringify(taskId)} in this session.`, { code: 'background_task_not_found', taskId });
      }
      manager.close(taskId);
    },
    subscribe(listener) {
      return manager.subscribe((event) => {
        const sessionId = manager.get(event.taskId)?.parentSessionId;
        listener(sessionId === undefined ? event : copyWith(event, { sessionId }));
      });
    },
    async spawn(request: BackgroundProcessRequest): Promise<BackgroundTaskTicket> {
      const state = await manager.spawn(processTaskRequest(request));
      return { id: state.id, ...(state.logPath === undefined ? {} : { logPath: state.logPath }) };
    },
    async readOutput(taskId: string, fromLine: number, sessionId?: string): Promise<BackgroundOutputRead> {
      owned(taskId, sessionId);
      const read = await readOutputLines(manager, taskId, fromLine);
      // Status after the read: a task seen as finished has logged everything it will.
      return outputRead(owned(taskId, sessionId), read);
    },
    async stop(taskId: string, sessionId?: string): Promise<BackgroundTaskStatus> {
      owned(taskId, sessionId);
      const state = await manager.cancel(taskId, 'stopped by KillShell');
      return state.status as BackgroundTaskStatus;
    },
  };
}

const PLUGIN_NAME = 'background';

function validate(options: BackgroundRuntimeOptions): void {
  const check = (option: string, value: number | undefined, ok: (value: number) => boolean, rule: string): void => {
    if (value !== undefined && !(typeof value === 'number' && ok(value))) {
      throw new PluginOptionsError('backgroundRuntime', PLUGIN_NAME, option, `must be ${rule} (got ${String(value)})`);
    }
  };
  const nonNegativeInteger = (value: number): boolean => Number.isInteger(value) && value >= 0;
  check('maxConcurrent', options.maxConcurrent, (value) => Number.isInteger(value) && value > 0, 'a positive integer');
  check('maxDepth', options.maxDepth, nonNegativeInteger, 'a non-negative integer');
  check('maxQueued', options.maxQueued, (value) => nonNegativeInteger(value) || value === Number.POSITIVE_INFINITY, 'a non-negative integer');
  check('shell.killGraceMs', options.shell?.killGraceMs, (value) => Number.isFinite(value) && value >= 0, 'a non-negative number of milliseconds');
  check('shell.outputLimitBytes', options.shell?.outputLimitBytes, (value) => Number.isInteger(value) && value > 0, 'a positive integer');
  for (const runner of options.runners ?? []) {
    if (typeof runner?.kind !== 'string' || typeof runner.start !== 'function') {
      throw new PluginOptionsError('backgroundRuntime', PLUGIN_NAME, 'runners', 'must hold runners ({ kind, start(job) })');
    }
  }
}

/**
 * The background runtime: a `BackgroundTaskManager` with the shell (`process`) and cron
 * (`scheduled`) runners, bound as `BackgroundTaskManagerToken` and as the `BackgroundTasks`
 * contract. Kernel shutdown shuts the manager down (every open task is cancelled).
 *
 * The factory only checks and keeps `options`. Each kernel's container builds its own manager
 * (and log directory) on first use and shuts it down when the kernel releases its services, so
 * one plugin value serves any number of kernels, in a row or side by side. Failures that must
 * not escape (a throwing event listener) go to the kernel's `Diagnostics`, looked up when one
 * is reported, unless `onError` is given.
 */
export function backgroundRuntime(options: BackgroundRuntimeOptions = {}): Plugin {
  validate(options);
  const build = (container: ServiceResolver): BackgroundTaskManager => {
    const shell = createManagedShellProcessRunner({
      logDir: join(tmpdir(), `tessera-background-${process.pid}-${randomUUID().slice(0, 8)}`),
      ...options.shell,
    });
    const byKind = new Map<string, IBackgroundTaskRunner>([['process', shell]]);
    for (const runner of options.runners ?? []) byKind.set(runner.kind, runner);
    const children = [...byKind.values()];
    if (!byKind.has('scheduled')) {
      byKind.set('scheduled', createScheduledTaskRunner({ runners: children, ...(options.createSchedule ? { createSchedule: options.createSchedule } : {}) }));
    }
    // The watchdogs' time source is fixed when the manager is built (timers set on one clock
    // are cleared on the same one): the option, else the kernel's Clock at that moment.
    const clock = options.clock ?? container.get(Clock, { optional: true });
    // Looked up per report: a Diagnostics rebound after createKernel is the one told. While the
    // kernel releases its services (a late report from shutdown) it may be gone already.
    const diagnostics: DiagnosticsReporter = {
      report: (report) => (container.get(Diagnostics, { optional: true }) ?? processWarningDiagnostics).report(report),
    };
    return new BackgroundTaskManager({
      ...options,
      runners: [...byKind.values()],
      diagnostics,
      ...(clock ? { clock } : {}),
    });
  };
  return definePlugin({
    name: PLUGIN_NAME,
    provides: [BackgroundTasks, BackgroundTaskManagerToken],
    optional: [...(options.clock ? [] : [Clock]), ...(options.onError ? [] : [Diagnostics])],
    register({ bind }) {
      bind(BackgroundTaskManagerToken)
        .toDynamicValue((container) => build(container))
        .inSingletonScope()
        .onDeactivation((manager) => manager.shutdown('kernel shutdown'));
      bind(BackgroundTasks)
        .toResolvedValue((resolved: BackgroundTaskManager) => createBackgroundTasksAdapter(resolved), [BackgroundTaskManagerToken])
        .inSingletonScope();
    },
  });
}

/** A task as `BackgroundTasks.list` shows it (the fields a listing needs, nothing unset). */
export function taskListEntry(task: IBackgroundTaskState): BackgroundTaskSummary {
  return {
    id: task.id,
    kind: task.kind,
    status: task.status,
    createdAt: task.createdAt,
    ...(task.label === undefined ? {} : { label: task.label }),
    ...(task.command === undefined ? {} : { command: task.command }),
    ...(task.agentType === undefined ? {} : { agentType: task.agentType }),
    ...(task.completedAt === undefined ? {} : { completedAt: task.completedAt }),
    ...(task.currentAction === undefined ? {} : { currentAction: task.currentAction }),
  };
}
