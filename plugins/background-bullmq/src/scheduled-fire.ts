import { describeError, type Clock } from '@tessera/contracts';
import { type IBackgroundScheduledTaskRequest, type IBackgroundTaskRequest } from '@tessera/plugin-background';
import type { Job } from 'bullmq';
import type { BackgroundJobData } from './bullmq-background-task-manager.js';
import type { TaskExecution } from './task-execution.js';
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
  });
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
  const fire = await store.incrementField(taskId, 'fires');
  await store.appendLog(taskId, [`[schedule] fire ${fire} started (tick ${job.id})`]);
  const execution = context.execute(taskId, `${taskId}-run-${fire}`, request.task as Exclude<IBackgroundTaskRequest, { kind: 'scheduled' }>);
  let outcome;
  try {
    const running = execution.run();
    // Which tick this fire belongs to (a re-delivered tick is a lost fire) and its process group.
    const pid = execution.describeHandle().pid;
    try {
      await store.setFields(taskId, { fireTick: String(job.id), ...(pid === undefined ? {} : { firePid: String(pid) }) });
      if (pid !== undefined) await context.recordGroup(taskId, pid);
    } catch (error) {
      // The fire runs on; only a later worker's recognition of it as lost depends on these fields.
      context.report(error, taskId, 'record fire');
    }
    outcome = await running;
  } finally {
    executions.delete(taskId);
  }
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
  return settleFire(context, request, fire, outcome.type === 'completed' ? outcome.result.output : '', 'fired');
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
