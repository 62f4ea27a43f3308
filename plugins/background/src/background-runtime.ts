import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackgroundTasks,
  Clock,
  createToken,
  type BackgroundOutputRead,
  type BackgroundProcessRequest,
  type BackgroundTaskStatus,
  type BackgroundTaskTicket,
} from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { BackgroundTaskManager, type BackgroundTaskManagerOptions } from './background-task-manager.js';
import { createManagedShellProcessRunner, type ManagedShellProcessRunnerOptions } from './managed-shell-process-runner.js';
import { createScheduledTaskRunner, type TScheduleFactory } from './scheduled-task-runner.js';
import { BackgroundTaskError } from './background-task-error.js';
import type { IBackgroundTaskRunner, IBackgroundTaskState } from './types.js';

/** Lines one `readOutput` gathers at most; the rest waits for the next read. */
const MAX_READ_LINES = 5_000;

/** The kernel-wide task manager, for plugins that need more than `BackgroundTasks.spawn`. */
export const BackgroundTaskManagerToken = createToken<BackgroundTaskManager>('BackgroundTaskManager');

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
    async spawn(request: BackgroundProcessRequest): Promise<BackgroundTaskTicket> {
      const state = await manager.spawn({
        kind: 'process',
        command: request.command,
        cwd: request.cwd,
        mode: 'background',
        ...(request.description === undefined ? {} : { description: request.description, label: request.description }),
        ...(request.sessionId === undefined ? {} : { parentSessionId: request.sessionId }),
      });
      return { id: state.id, ...(state.logPath === undefined ? {} : { logPath: state.logPath }) };
    },
    async readOutput(taskId: string, fromLine: number, sessionId?: string): Promise<BackgroundOutputRead> {
      owned(taskId, sessionId);
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
      // Status after the read: a task seen as finished has logged everything it will.
      const after = owned(taskId, sessionId);
      return {
        status: after.status as BackgroundTaskStatus,
        ...(after.exitCode === undefined ? {} : { exitCode: after.exitCode }),
        lines,
        nextLine: cursor.offset,
        dropped,
        ...(more ? { more } : {}),
      };
    },
    async stop(taskId: string, sessionId?: string): Promise<BackgroundTaskStatus> {
      owned(taskId, sessionId);
      const state = await manager.cancel(taskId, 'stopped by KillShell');
      return state.status as BackgroundTaskStatus;
    },
  };
}

/**
 * The background runtime: a `BackgroundTaskManager` with the shell (`process`) and cron
 * (`scheduled`) runners, bound as `BackgroundTaskManagerToken` and as the `BackgroundTasks`
 * contract. Kernel shutdown shuts the manager down (every open task is cancelled).
 */
export function backgroundRuntime(options: BackgroundRuntimeOptions = {}): Plugin {
  // Nothing is built here: each kernel's container builds its own manager on first use and
  // shuts it down when the kernel releases its services, so one plugin value serves any
  // number of kernels in a row.
  const build = (kernelClock: Clock | undefined): BackgroundTaskManager => {
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
    const clock = options.clock ?? kernelClock;
    return new BackgroundTaskManager({
      ...options,
      runners: [...byKind.values()],
      ...(clock ? { clock } : {}),
    });
  };
  return definePlugin({
    name: 'background',
    provides: [BackgroundTasks, BackgroundTaskManagerToken],
    optional: [Clock],
    register({ bind }) {
      bind(BackgroundTaskManagerToken)
        .toResolvedValue((clock: Clock | undefined) => build(clock), [{ serviceIdentifier: Clock, optional: true }])
        .inSingletonScope()
        .onDeactivation((manager) => manager.shutdown('kernel shutdown'));
      bind(BackgroundTasks)
        .toResolvedValue((resolved: BackgroundTaskManager) => createBackgroundTasksAdapter(resolved), [BackgroundTaskManagerToken])
        .inSingletonScope();
    },
  });
}
