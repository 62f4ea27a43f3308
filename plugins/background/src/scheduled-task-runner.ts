import { describeError } from '@tessera/contracts';
import { Cron } from 'croner';
import { BackgroundTaskError } from './background-task-error.js';
import { BackgroundTaskLogBuffer } from './log-pages.js';
import type {
  IBackgroundScheduledTaskRequest,
  IBackgroundTaskHandle,
  IBackgroundTaskResult,
  IBackgroundTaskRunner,
  IBackgroundTaskStart,
} from './types.js';

/** What the runner needs of a schedule; croner by default, a fake in tests. */
export interface IScheduleDriver {
  /** The next fire, or null when the schedule has none left. */
  nextRun(): Date | null;
  stop(): void;
}

export type TScheduleFactory = (pattern: string, options: { timezone?: string }, onTick: () => void) => IScheduleDriver;

export const cronerScheduleFactory: TScheduleFactory = (pattern, options, onTick) =>
  new Cron(pattern, { ...(options.timezone ? { timezone: options.timezone } : {}) }, onTick);

export interface ScheduledTaskRunnerOptions {
  /** Runners for what each fire starts (`process`, `agent`). */
  runners: readonly IBackgroundTaskRunner[];
  createSchedule?: TScheduleFactory;
  maxLogLines?: number;
}

/**
 * Runs `request.task` on every fire of a cron schedule. While waiting it reports `sleep` (so
 * the manager frees its slot); on a fire it reports `wake` and starts the child. A fire that
 * overlaps a still-running child is skipped and recorded. When the schedule has no next fire
 * (or `maxRuns` is reached) the task completes.
 */
export function createScheduledTaskRunner(options: ScheduledTaskRunnerOptions): IBackgroundTaskRunner<IBackgroundScheduledTaskRequest> {
  const createSchedule = options.createSchedule ?? cronerScheduleFactory;
  const children = new Map(options.runners.map((runner) => [runner.kind, runner]));
  return {
    kind: 'scheduled',
    start({ taskId, request, emit }: IBackgroundTaskStart<IBackgroundScheduledTaskRequest>): IBackgroundTaskHandle {
      const child = children.get(request.task?.kind);
      if (!child) {
        throw new BackgroundTaskError('validation', `Scheduled task ${taskId}: no runner for its task kind "${String(request.task?.kind)}"; pass one in createScheduledTaskRunner({ runners }).`, {
          code: 'scheduled_unknown_task_kind',
          taskId,
          details: { field: 'task.kind' },
        });
      }
      const log = new BackgroundTaskLogBuffer(options.maxLogLines);
      let fires = 0;
      let skipped = 0;
      let failed = 0;
      let lastOutput = '';
      let current: IBackgroundTaskHandle | undefined;
      let finished = false;
      let resolveResult!: (result: IBackgroundTaskResult) => void;
      let rejectResult!: (error: unknown) => void;
      const result = new Promise<IBackgroundTaskResult>((resolve, reject) => {
        resolveResult = resolve;
        rejectResult = reject;
      });
      result.catch(() => undefined);

      let driver: IScheduleDriver;
      const summary = () => ({ fires, skippedFires: skipped, failedFires: failed });
      const finish = (): void => {
        if (finished) return;
        finished = true;
        driver.stop();
        log.append('schedule', `schedule has no next fire; finished after ${fires} fire(s), ${skipped} skipped, ${failed} failed`);
        resolveResult({ output: lastOutput, metadata: summary() });
      };
      const sleepOrFinish = (): void => {
        if (finished) return;
        const next = request.maxRuns !== undefined && fires >= request.maxRuns ? null : driver.nextRun();
        if (!next) return finish();
        emit({ type: 'sleep', nextRunAt: next.getTime() });
      };
      const onTick = (): void => {
        if (finished) return;
        if (current) {
          skipped += 1;
          log.append('schedule', `skipped a fire: fire ${fires} is still running`);
          return;
        }
        if (request.maxRuns !== undefined && fires >= request.maxRuns) return;
        fires += 1;
        emit({ type: 'wake' });
        log.append('schedule', `fire ${fires} started`);
        let handle: IBackgroundTaskHandle;
        try {
          handle = child.start({
            taskId: `${taskId}-run-${fires}`,
            request: request.task,
            // Progress passes through; lifecycle (sleep/wake) belongs to this runner.
            emit: (event) => {
              if (event.type !== 'sleep' && event.type !== 'wake') emit(event);
            },
          });
        } catch (error) {
          failed += 1;
          log.append('schedule', `fire ${fires} could not start: ${describeError(error)}`);
          return sleepOrFinish();
        }
        current = handle;
        const fire = fires;
        handle.result.then(
          (output) => {
            lastOutput = output.output;
            log.append('schedule', `fire ${fire} completed`);
            log.append(`fire ${fire}`, output.output);
          },
          (error: unknown) => {
            failed += 1;
            log.append('schedule', `fire ${fire} failed: ${describeError(error)}`);
          },
        ).finally(() => {
          current = undefined;
          sleepOrFinish();
        });
      };

      try {
        driver = createSchedule(request.schedule, { ...(request.timezone ? { timezone: request.timezone } : {}) }, onTick);
      } catch (error) {
        throw new BackgroundTaskError('validation', `Scheduled task ${taskId}: invalid schedule ${JSON.stringify(request.schedule)} (${describeError(error)}); use a 5- or 6-field cron pattern or an ISO date.`, {
          code: 'scheduled_invalid_pattern',
          taskId,
          details: { field: 'schedule' },
          cause: error,
        });
      }
      // Report the first sleep after start() returned, so `started` precedes `sleeping`.
      queueMicrotask(() => {
        if (!current) sleepOrFinish();
      });

      return {
        taskId,
        result,
        cancel: async (reason = 'cancelled') => {
          if (finished) return;
          finished = true;
          driver.stop();
          log.append('schedule', `cancelled: ${reason}`);
          const running = current;
          if (running) await running.cancel(reason);
          rejectResult(new BackgroundTaskError('runner', `Scheduled task ${taskId} was cancelled (${reason}).`, { code: 'scheduled_cancelled', taskId, details: summary() }));
        },
        readLog: async (cursor) => log.page(cursor),
      };
    },
  };
}
