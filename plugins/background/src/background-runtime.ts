import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackgroundTasks,
  Clock,
  createToken,
  type BackgroundProcessRequest,
  type BackgroundTaskTicket,
} from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { BackgroundTaskManager, type BackgroundTaskManagerOptions } from './background-task-manager.js';
import { createManagedShellProcessRunner, type ManagedShellProcessRunnerOptions } from './managed-shell-process-runner.js';
import { createScheduledTaskRunner, type TScheduleFactory } from './scheduled-task-runner.js';
import type { IBackgroundTaskRunner } from './types.js';

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
  };
}

/**
 * The background runtime: a `BackgroundTaskManager` with the shell (`process`) and cron
 * (`scheduled`) runners, bound as `BackgroundTaskManagerToken` and as the `BackgroundTasks`
 * contract. Kernel shutdown shuts the manager down (every open task is cancelled).
 */
export function backgroundRuntime(options: BackgroundRuntimeOptions = {}): Plugin {
  let manager: BackgroundTaskManager | undefined;
  const build = (kernelClock: Clock | undefined): BackgroundTaskManager => {
    if (manager) return manager;
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
    manager = new BackgroundTaskManager({
      ...options,
      runners: [...byKind.values()],
      ...(clock ? { clock } : {}),
    });
    return manager;
  };
  return definePlugin({
    name: 'background',
    provides: [BackgroundTasks, BackgroundTaskManagerToken],
    register({ bind }) {
      bind(BackgroundTaskManagerToken)
        .toResolvedValue((clock: Clock | undefined) => build(clock), [{ serviceIdentifier: Clock, optional: true }])
        .inSingletonScope();
      bind(BackgroundTasks)
        .toResolvedValue((resolved: BackgroundTaskManager) => createBackgroundTasksAdapter(resolved), [BackgroundTaskManagerToken])
        .inSingletonScope();
    },
    async shutdown() {
      await manager?.shutdown('kernel shutdown');
    },
  });
}
