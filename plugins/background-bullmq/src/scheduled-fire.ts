import { describeError, type Clock } from '@tessera/contracts';
import { type IBackgroundScheduledTaskRequest, type IBackgroundTaskRequest } from '@tessera/plugin-background';
import { WaitingError, type Job } from 'bullmq';
import type { BackgroundJobData } from './bullmq-background-task-manager.js';
import type { TaskExecution, TExecutionOutcome } from './task-execution.js';
import { cancel as cancelState, complete, isTerminal, snapshotEvent, transition } from './task-lifecycle.js';
import type { RedisTaskStore } from './task-store.js';

export interface ScheduledFireContext {
  job: Job<BackgroundJobData>;
  store: RedisTaskStore;
  clock: Clock;
  execute: (taskId: string, runId: string, request: IBackgroundScheduledTaskRequest['task']) => TaskExecution;
  executions: Map<string, TaskExecution>;
  /** The scheduler's next fire (epoch ms), or undefined when it has none (or was removed). */
  nextRun: (taskId: string) => Promise<number | undefined>;
  removeScheduler: (taskId: string) => Promise<void>;
  report: (error: unknown, taskId: string | undefined, phase: string) => void;
  /** Why this worker stopped the task's running fire as it shut down, or undefined (not stopped by it). */
  stoppedByShutdown: (taskId: string) => string | undefined;
  /** Records the fire's process group, so a worker on this host can kill it if this one dies. */
  recordGroup: (taskId: string, pid: number) => Promise<void>;
  /** Kills the process group a dead worker's fire left running (same host, same process start). */
  reapGroup: (taskId: string, pid: number | undefined) => Promise<void>;
}

/**
 * One tick of a cron task, delivered by a BullMQ job scheduler (one job per tick, whichever
 * worker takes it). The tick wakes the sleeping task through the state machine; a tick that
 * finds the previous fire still running is skipped and recorded, as in the in-process runner.
 * After the fire the task sleeps until the next tick, or completes when none is left.
 */
export async function runScheduledFire(context: ScheduledFireContext): Promise<string> {
  const { job, store, clock, executions } = context;
  const { taskId } = job.data;
  const stored = await store.read(taskId);
  if (!stored || isTerminal(stored.state.status)) {
    // A schedule whose task ended or was closed has no business firing again.
    await context.removeScheduler(taskId).catch(() => undefined);
    return 'ended';
  }
  if (stored.cancel !== undefined) return endCancelled(context);
  const request = stored.request as IBackgroundScheduledTaskRequest;
  let woke = false;
  // The tick this fire belongs to goes in the wake's own commit: a fire that dies right after
  // waking is recognised as lost when its tick comes back, not taken for a fire still running.
  // The previous fire's process group is forgotten in the same step.
  const current = await store.update(taskId, (state, current) => {
    woke = false;
    if (current.cancel !== undefined || (state.status !== 'queued' && state.status !== 'sleeping')) return undefined;
    const now = clock.now();
    state.lastActivityAt = now;
    if (state.status === 'queued') {
      // The first tick came before the client committed the schedule's start (a date due now,
      // a cron tick right away): it starts the task itself, and the client's start then finds
      // it running and leaves it.
      transition(state, 'START', now);
      state.startedAt = now;
      woke = true;
      return [snapshotEvent('background_task_started', state)];
    }
    transition(state, 'WAKE', now);
    delete state.nextRunAt;
    woke = true;
    return [snapshotEvent('background_task_updated', state)];
  }, undefined, undefined, job.id === undefined ? undefined : { fireTick: job.id, firePid: '' });
  if (!current || isTerminal(current.state.status)) {
    // Ended or removed after the read above (the client ends a sleeping schedule itself).
    await context.removeScheduler(taskId).catch(() => undefined);
    return 'ended';
  }
  if (current.cancel !== undefined) return endCancelled(context);
  if (!woke) {
    const { fireTick, firePid, fires } = await store.getFields(taskId, ['fireTick', 'firePid', 'fires']);
    if (job.id !== undefined && fireTick === job.id) {
      // BullMQ hands a tick back only when the worker running it stopped renewing its lock: the
      // fire started for this very tick is lost. Record it and let the schedule go on; skipping
      // it as "still running" would leave the task running (and every later tick skipped) forever.
      await context.reapGroup(taskId, firePid === undefined ? undefined : Number(firePid));
      const failed = await store.incrementField(taskId, 'failedFires');
      await store.appendLog(taskId, [`[schedule] the fire of tick ${job.id} was lost: the worker running it stopped (stale_worker; ${failed} failed); the schedule goes on`]);
      return settleFire(context, request, Number(fires ?? 0), '', 'lost');
    }
    const skipped = await store.incrementField(taskId, 'skippedFires');
    await store.appendLog(taskId, [`[schedule] skipped tick ${job.id}: the previous fire is still running (${skipped} skipped)`]);
    return 'skipped';
  }
  let fire = 0;
  let execution: TaskExecution | undefined;
  let running: Promise<TExecutionOutcome> | undefined;
  try {
    fire = await store.incrementField(taskId, 'fires');
    await store.appendLog(taskId, [`[schedule] fire ${fire} started (tick ${job.id})`]);
    execution = context.execute(taskId, `${taskId}-run-${fire}`, request.task as Exclude<IBackgroundTaskRequest, { kind: 'scheduled' }>);
    let outcome: TExecutionOutcome;
    try {
      running = execution.run();
      // The fire's process group (its tick is already recorded, with the wake).
      const pid = execution.describeHandle().pid;
      if (pid !== undefined) {
        try {
          await store.setFields(taskId, { firePid: String(pid) });
          await context.recordGroup(taskId, pid);
        } catch (error) {
          // The fire runs on; only a later worker's killing of its group if this one dies depends on these fields.
          context.report(error, taskId, 'record fire');
        }
      }
      outcome = await running;
    } finally {
      if (executions.get(taskId) === execution) executions.delete(taskId);
    }
    // This worker lost the tick's lock: the tick is another worker's now, which records the fire lost.
    if (outcome.type === 'lost') throw new WaitingError();
    const stoppedFor = outcome.type === 'cancelled' ? context.stoppedByShutdown(taskId) : undefined;
    if (outcome.type === 'completed') await store.appendLog(taskId, [`[schedule] fire ${fire} completed`]);
    else if (outcome.type === 'failed' || stoppedFor !== undefined) {
      await store.incrementField(taskId, 'failedFires');
      const why = stoppedFor === undefined ? `failed: ${describeError((outcome as { error: unknown }).error)}` : `stopped: ${stoppedFor} (the worker shut down; the schedule goes on)`;
      await store.appendLog(taskId, [`[schedule] fire ${fire} ${why}`]);
    }
    // A worker that shuts down stops its fire, not the schedule: the next tick runs on another worker.
    if ((outcome.type === 'cancelled' && stoppedFor === undefined) || outcome.type === 'tripped') {
      await context.removeScheduler(taskId).catch((error: unknown) => context.report(error, taskId, 'remove job scheduler'));
      if (outcome.type === 'cancelled') await store.update(taskId, (state) => (isTerminal(state.status) ? undefined : [cancelState(state, outcome.reason, clock.now())]));
      return outcome.type;
    }
    return await settleFire(context, request, fire, outcome.type === 'completed' ? outcome.result.output : '', 'fired');
  } catch (error) {
    if (error instanceof WaitingError) throw error;
    // As for a plain task: whatever fails on the way (a Redis error, a throwing runner) stops the
    // fire and is recorded as a failed one; the task goes back to sleep for the next tick (or
    // ends as settleFire decides), never left `running` with nobody running it. Only when even
    // that fails does the error reach BullMQ.
    context.report(error, taskId, 'fire');
    if (execution && running) {
      execution.cancel(`the worker failed: ${describeError(error)}`);
      await running.catch(() => undefined);
    }
    const failed = await store.incrementField(taskId, 'failedFires');
    const fires = fire > 0 ? fire : Number((await store.getFields(taskId, ['fires'])).fires ?? 0);
    await store.appendLog(taskId, [`[schedule] fire ${fire > 0 ? fire : '(not started)'} failed: the worker failed: ${describeError(error)} (${failed} failed); the schedule goes on`]);
    return settleFire(context, request, fires, '', 'failed');
  }
}

/**
 * A tick that finds a cancel asked. The client ends a queued or sleeping schedule itself, and a
 * live worker's fire ends the task when it stops; but a fire this very tick started is lost (its
 * worker stopped renewing the tick's lock), so no one else will: kill what it left running and
 * commit the cancel here, or the task stays `running` for good.
 */
async function endCancelled(context: ScheduledFireContext): Promise<string> {
  const { job, store, clock } = context;
  const { taskId } = job.data;
  await context.removeScheduler(taskId).catch(() => undefined);
  const { fireTick, firePid } = await store.getFields(taskId, ['fireTick', 'firePid']);
  const lost = job.id !== undefined && fireTick === job.id;
  if (lost) {
    await context.reapGroup(taskId, firePid === undefined ? undefined : Number(firePid));
    const failed = await store.incrementField(taskId, 'failedFires');
    await store.appendLog(taskId, [`[schedule] the fire of tick ${job.id} was lost: the worker running it stopped (stale_worker; ${failed} failed); the task was cancelled meanwhile`]);
  }
  await store.update(taskId, (state, current) => {
    if (isTerminal(state.status) || current.cancel === undefined || (state.status === 'running' && !lost)) return undefined;
    return [cancelState(state, current.cancel, clock.now())];
  });
  return 'ended';
}

/** After a fire (or a lost one): the task sleeps until the next tick, or completes when none is left. */
async function settleFire(context: ScheduledFireContext, request: IBackgroundScheduledTaskRequest, fire: number, output: string, result: string): Promise<string> {
  const { job, store, clock } = context;
  const { taskId } = job.data;
  const exhausted = request.maxRuns !== undefined && fire >= request.maxRuns;
  const next = exhausted ? undefined : await context.nextRun(taskId);
  const counters = await store.redis.hmget(store.keys.task(taskId), 'fires', 'skippedFires', 'failedFires');
  const summary = { fires: Number(counters[0] ?? 0), skippedFires: Number(counters[1] ?? 0), failedFires: Number(counters[2] ?? 0) };
  if (next === undefined) {
    await context.removeScheduler(taskId).catch(() => undefined);
    await store.appendLog(taskId, [`[schedule] schedule has no next fire; finished after ${summary.fires} fire(s), ${summary.skippedFires} skipped, ${summary.failedFires} failed`]);
  }
  await store.update(taskId, (state, current) => {
    if (isTerminal(state.status)) return undefined;
    const now = clock.now();
    // A cancel that came while this fire ran found the task running and left the end to its
    // worker: a schedule put back to sleep now would never wake (its scheduler is gone).
    if (current.cancel !== undefined) return [cancelState(state, current.cancel, now)];
    if (next === undefined) return [complete(state, { output, metadata: summary }, now)];
    transition(state, 'SLEEP', now);
    state.nextRunAt = next;
    if (output !== '') state.output = output;
    return [snapshotEvent('background_task_updated', state)];
  });
  return result;
}
