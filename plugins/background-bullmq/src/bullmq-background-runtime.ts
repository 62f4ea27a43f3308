import {
  BackgroundTasks,
  Clock,
  createToken,
  Diagnostics,
  processWarningDiagnostics,
  type BackgroundOutputRead,
  type BackgroundTaskStatus,
  type DiagnosticsReporter,
  copyWith,
} from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin, type ServiceResolver } from '@tessera/kernel';
import { AgentTaskManagerToken, BackgroundTaskError, BackgroundTaskManagerToken, type BackgroundTaskManager, type IBackgroundTaskState, outputRead, processTaskRequest, readOutputLines, sessionTaskList } from '@tessera/plugin-background';
import { BullmqBackgroundTaskManager, resolveKeys, type BullmqBackgroundTaskManagerOptions } from './bullmq-background-task-manager.js';

/** The BullMQ manager itself, for code that needs `fetch`, `listAll`, `remove` or event replay. */
export const BullmqBackgroundTaskManagerToken = createToken<BullmqBackgroundTaskManager>('BullmqBackgroundTaskManager');

export type BullmqBackgroundRuntimeOptions = Omit<BullmqBackgroundTaskManagerOptions, 'diagnostics'> & {
  /**
   * Subagent jobs (`SubagentLauncher`, the Agent tool's background runs) go to the workers too
   * (default true): the runtime binds `AgentTaskManagerToken`, which the subagents plugin uses
   * instead of its in-process manager. Workers then need an `agent` runner
   * (`tessera worker --kinds agent`, or `startBackgroundWorker({ runners })`).
   */
  subagents?: boolean;
};

/**
 * `BackgroundTasks` over the BullMQ manager. Same behaviour as the in-process adapter, but
 * ownership checks and statuses are read from Redis (not the mirror), so a task spawned a
 * moment ago by another process is found.
 */
export function createBullmqBackgroundTasksAdapter(manager: BullmqBackgroundTaskManager): BackgroundTasks {
  const owned = async (taskId: string, sessionId: string | undefined, kind?: string): Promise<IBackgroundTaskState> => {
    const state = await manager.fetch(taskId);
    if (!state || (kind !== undefined && state.kind !== kind) || (sessionId !== undefined && state.parentSessionId !== sessionId)) {
      throw new BackgroundTaskError('validation', `No background task ${JSON.stringify(taskId)} in this session.`, { code: 'background_task_not_found', taskId });
    }
    return state;
  };
  return {
    list(sessionId) {
      return sessionTaskList(manager.list(), sessionId);
    },
    async close(taskId, sessionId) {
      await owned(taskId, sessionId);
      await manager.remove(taskId);
    },
    subscribe(listener) {
      return manager.subscribe((event) => {
        const sessionId = 'task' in event ? event.task.parentSessionId : manager.get(event.taskId)?.parentSessionId;
        listener(sessionId === undefined ? event : copyWith(event, { sessionId }));
      });
    },
    async spawn(request) {
      const state = await manager.spawn(processTaskRequest(request));
      return { id: state.id };
    },
    async readOutput(taskId, fromLine, sessionId): Promise<BackgroundOutputRead> {
      await owned(taskId, sessionId, 'process');
      const read = await readOutputLines(manager, taskId, fromLine);
      // Status after the read: the worker copies the whole log into Redis before it commits the end.
      return outputRead(await owned(taskId, sessionId, 'process'), read);
    },
    async stop(taskId, sessionId): Promise<BackgroundTaskStatus> {
      await owned(taskId, sessionId, 'process');
      return (await manager.cancel(taskId, 'stopped by KillShell')).status as BackgroundTaskStatus;
    },
  };
}

const PLUGIN_NAME = 'background';

function validate(options: BullmqBackgroundRuntimeOptions): void {
  if (typeof options?.connection !== 'object' || options.connection === null) {
    throw new PluginOptionsError('bullmqBackgroundRuntime', PLUGIN_NAME, 'connection', 'must be ioredis connection options ({ host, port, … })');
  }
  try {
    resolveKeys(options);
  } catch (error) {
    throw new PluginOptionsError('bullmqBackgroundRuntime', PLUGIN_NAME, 'queue', (error as Error).message);
  }
  const nonNegative = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0;
  if (options.maxDepth !== undefined && !nonNegative(options.maxDepth)) throw new PluginOptionsError('bullmqBackgroundRuntime', PLUGIN_NAME, 'maxDepth', 'must be a non-negative integer');
  if (typeof options.retries === 'number' && !nonNegative(options.retries)) throw new PluginOptionsError('bullmqBackgroundRuntime', PLUGIN_NAME, 'retries', 'must be a non-negative integer or a function');
}

/**
 * The background runtime on BullMQ + Redis: the client half. It takes the place of
 * `backgroundRuntime()` (same plugin name, same `BackgroundTasks` and `BackgroundTaskManagerToken`
 * tokens), so code that uses them does not change. Tasks run on workers started with
 * `startBackgroundWorker` (in this process or others). Kernel shutdown closes this client's
 * connections; tasks keep running on the workers unless `cancelOnShutdown` is set.
 */
export function bullmqBackgroundRuntime(options: BullmqBackgroundRuntimeOptions): Plugin {
  validate(options);
  const build = (container: ServiceResolver): BullmqBackgroundTaskManager => {
    const diagnostics: DiagnosticsReporter = {
      report: (report) => (container.get(Diagnostics, { optional: true }) ?? processWarningDiagnostics).report(report),
    };
    const clock = options.clock ?? container.get(Clock, { optional: true });
    return new BullmqBackgroundTaskManager({ ...options, diagnostics, ...(clock ? { clock } : {}) });
  };
  return definePlugin({
    name: PLUGIN_NAME,
    provides: [BackgroundTasks, BackgroundTaskManagerToken, BullmqBackgroundTaskManagerToken, ...(options.subagents === false ? [] : [AgentTaskManagerToken])],
    optional: [...(options.clock ? [] : [Clock]), ...(options.onError ? [] : [Diagnostics])],
    register({ bind }) {
      bind(BullmqBackgroundTaskManagerToken)
        .toDynamicValue((container) => build(container))
        .inSingletonScope()
        .onDeactivation((manager) => manager.shutdown('kernel shutdown'));
      // The token is typed with the in-process class; this manager implements the same
      // IBackgroundTaskManager contract (see the README: the token's type should be the interface).
      bind(BackgroundTaskManagerToken)
        .toResolvedValue((manager: BullmqBackgroundTaskManager) => manager as unknown as BackgroundTaskManager, [BullmqBackgroundTaskManagerToken])
        .inSingletonScope();
      bind(BackgroundTasks)
        .toResolvedValue((manager: BullmqBackgroundTaskManager) => createBullmqBackgroundTasksAdapter(manager), [BullmqBackgroundTaskManagerToken])
        .inSingletonScope();
      if (options.subagents !== false) {
        bind(AgentTaskManagerToken)
          .toResolvedValue((manager: BullmqBackgroundTaskManager) => manager, [BullmqBackgroundTaskManagerToken])
          .inSingletonScope();
      }
      return {
        // Connect and load the mirror before the first session uses the runtime.
        boot: async ({ get }) => {
          await get(BullmqBackgroundTaskManagerToken).start();
        },
      };
    },
  });
}
