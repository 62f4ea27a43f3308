import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeError, processWarningDiagnostics, systemClock, type Clock, type DiagnosticsReporter } from '@tessera/contracts';
import {
  BackgroundTaskError,
  createManagedShellProcessRunner,
  type IBackgroundTaskRequest,
  type IBackgroundTaskRunner,
  type IBackgroundTaskState,
  type TBackgroundTaskEvent,
  type IBackgroundTaskWatchdogOptions,
  type ManagedShellProcessRunnerOptions,
  type TBackgroundTaskKind,
} from '@tessera/plugin-background';
import { Queue, WaitingError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { resolveKeys, type BackgroundJobData, type BullmqConnectionOptions } from './bullmq-background-task-manager.js';
import { runScheduledFire } from './scheduled-fire.js';
import { TaskExecution, type TExecutionOutcome } from './task-execution.js';
import { cancel as cancelState, complete, fail, isTerminal, snapshotEvent, staleWorkerError, transition } from './task-lifecycle.js';
import { RedisTaskStore, type StoredTask } from './task-store.js';

export interface BackgroundWorkerOptions extends BullmqConnectionOptions {
  /** Jobs run at once, per kind (a number applies to each kind; default 4). */
  concurrency?: number | Partial<Record<TBackgroundTaskKind, number>>;
  /** Kinds this worker takes (default: `process`, `scheduled`, and every kind in `runners`). */
  kinds?: readonly TBackgroundTaskKind[];
  /** Runners by kind; these win over the built-in shell runner (`agent` tasks need one from the host). */
  runners?: readonly IBackgroundTaskRunner[];
  /** Shell runner settings (`logDir` defaults to a fresh directory under the OS temp dir). */
  shell?: ManagedShellProcessRunnerOptions;
  /** Watchdog defaults for agent tasks (same meaning as the in-process manager's). */
  watchdog?: IBackgroundTaskWatchdogOptions;
  /**
   * Jobs of a kind running at once across every worker of the queue (BullMQ global concurrency;
   * set when this worker starts, so the last worker started decides). Unset: only per-worker limits.
   */
  globalConcurrency?: Partial<Record<TBackgroundTaskKind, number>>;
  /** At most `max` jobs of a kind start per `durationMs`, across every worker of the queue (BullMQ's limiter). */
  rateLimit?: Partial<Record<TBackgroundTaskKind, { max: number; durationMs: number }>>;
  /** BullMQ job lock: a worker that has not renewed it for this long counts as dead (default 30 s). */
  lockDurationMs?: number;
  /** How often workers look for jobs whose lock expired (default 30 s). */
  stalledIntervalMs?: number;
  /**
   * Stream entries kept (approximate trim; default 100,000) and log lines kept per task (default
   * 10,000) for what this worker writes: a running task's log and events. Give the clients' values.
   */
  maxEvents?: number;
  maxLogLines?: number;
  /** How often a running task's log is copied into Redis and its cancel flag checked (default 100 ms). */
  logFlushMs?: number;
  /** Names this worker in task records (default `host:pid:random`). */
  workerId?: string;
  clock?: Clock;
  onError?: (error: unknown, context: { taskId?: string; phase: string }) => void;
  diagnostics?: DiagnosticsReporter;
}

export interface BackgroundWorkerShutdownOptions {
  /** How long running tasks may finish before they are cancelled (default 30 s; 0 = cancel at once). */
  graceMs?: number;
  /** Cancel reason recorded on tasks stopped by the shutdown. */
  reason?: string;
  /**
   * What happens to tasks still running when the grace period ends: `cancel` (default) ends them
   * `cancelled`; `hand-back` stops their process and puts the job back on the queue, where another
   * worker starts it again (not counted against the task's retry budget).
   */
  unfinished?: 'cancel' | 'hand-back';
}

export interface BackgroundWorker {
  readonly id: string;
  /** Ids of tasks this worker is running now. */
  running(): string[];
  /** Stops taking jobs, lets running tasks finish for `graceMs`, cancels the rest, disconnects. Idempotent. */
  shutdown(options?: BackgroundWorkerShutdownOptions): Promise<void>;
}

type WorkerJobData = BackgroundJobData;

type TRunnableRequest = Exclude<IBackgroundTaskRequest, { kind: 'scheduled' }>;

const STALLED_FAILURE = 'job stalled more than allowable limit';

/** The run's outcome if it is already settled by the end of this turn of the event loop, else undefined. */
function settledWithinTurn<T>(run: Promise<T>): Promise<T | undefined> {
  return Promise.race([run, new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)))]);
}

/** Start time of a process in clock ticks since boot (/proc/<pid>/stat field 22), or undefined. */
function processStartTime(pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Starts BullMQ workers (one per kind) that run background tasks with the existing runners,
 * keeping task state, log and events in Redis. Several workers, in any number of processes,
 * share the queues; BullMQ's job lock makes sure one of them runs each job.
 */
export async function startBackgroundWorker(options: BackgroundWorkerOptions): Promise<BackgroundWorker> {
  const keys = resolveKeys(options);
  const clock = options.clock ?? systemClock;
  const id = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const logFlushMs = options.logFlushMs ?? 100;
  const report = (error: unknown, taskId: string | undefined, phase: string): void => {
    try {
      if (options.onError) options.onError(error, { ...(taskId === undefined ? {} : { taskId }), phase });
      else (options.diagnostics ?? processWarningDiagnostics).report({ severity: 'warning', code: 'TESSERA_BACKGROUND_TASK', source: 'background-bullmq', message: `Worker ${id}, task ${taskId ?? '-'} (${phase}): ${describeError(error)}` });
    } catch {
      // The reporter itself failed.
    }
  };

  // The worker's own log directory (no `shell.logDir` given) holds a run's file only until its
  // log is in Redis, and goes with the worker; a directory the caller chose is left alone.
  const ownLogDir = options.shell?.logDir === undefined ? join(tmpdir(), `tessera-worker-${process.pid}-${randomBytes(4).toString('hex')}`) : undefined;
  const shell = createManagedShellProcessRunner({ ...(ownLogDir === undefined ? {} : { logDir: ownLogDir }), ...options.shell });
  const runners = new Map<TBackgroundTaskKind, IBackgroundTaskRunner>([['process', shell]]);
  for (const runner of options.runners ?? []) runners.set(runner.kind, runner);
  const kinds = options.kinds ?? [...new Set<TBackgroundTaskKind>([...runners.keys(), 'scheduled'])];
  for (const kind of kinds) {
    if (kind !== 'scheduled' && !runners.has(kind)) {
      throw new BackgroundTaskError('validation', `startBackgroundWorker: kind "${kind}" has no runner; pass one in runners (agent tasks need the host's agent runner).`, { code: 'background_unknown_kind', details: { field: 'kinds' } });
    }
  }

  // Auto-pipelining: commands issued in one tick (many jobs run at once) share one socket write.
  const redis = new Redis({ ...options.connection, maxRetriesPerRequest: null, enableAutoPipelining: true });
  redis.on('error', (error) => report(error, undefined, 'redis connection'));
  const store = new RedisTaskStore(redis, keys, { ...(options.maxEvents === undefined ? {} : { maxEvents: options.maxEvents }), ...(options.maxLogLines === undefined ? {} : { maxLogLines: options.maxLogLines }) });
  const executions = new Map<string, TaskExecution>();
  /** The run of each job this worker holds, by BullMQ job id (a plain task's is its task id; a fire's, its tick's). */
  const jobRuns = new Map<string, TaskExecution>();
  /**
   * Tasks this worker is handing back at shutdown, with the cancel reason that stops their run:
   * only a run that ended by that very cancel is handed back (one that ended otherwise meanwhile is settled).
   */
  const handingBack = new Map<string, string>();
  /** Runs this worker stopped as it shut down, with the reason (a cron fire stopped so is not the schedule's end). */
  const stoppedByShutdown = new Map<string, string>();

  // Cancel requests: pub/sub for speed; executions also poll the task's cancel flag, so a
  // message lost while this connection was down still stops the task.
  const subscriber = redis.duplicate({ enableAutoPipelining: false });
  subscriber.on('error', (error) => report(error, undefined, 'redis subscriber'));
  subscriber.on('message', (_channel, message) => {
    try {
      const control = JSON.parse(message) as { type?: string; taskId?: string; reason?: string; input?: string; replyKey?: string };
      if (control.type === 'cancel' && control.taskId) executions.get(control.taskId)?.cancel(control.reason ?? 'cancelled');
      if (control.type === 'send' && control.taskId && typeof control.input === 'string' && typeof control.replyKey === 'string' && control.replyKey.startsWith(`${keys.prefix}:`)) {
        const execution = executions.get(control.taskId);
        // Only the worker running the task answers.
        if (execution) void answerSend(execution, control.input, control.replyKey);
      }
    } catch (error) {
      report(error, undefined, 'control message');
    }
  });
  await subscriber.subscribe(keys.control);

  const execute = (taskId: string, runId: string, request: TRunnableRequest, holdEventsUntilStarted = false, attempt?: number): TaskExecution => {
    const runner = runners.get(request.kind)!;
    const execution = new TaskExecution({ store, taskId, runId, request, runner, clock, logFlushMs, holdEventsUntilStarted, discardLogFile: ownLogDir !== undefined, ...(attempt === undefined ? {} : { attempt }), ...(options.watchdog ? { watchdog: options.watchdog } : {}), report: (error, phase) => report(error, taskId, phase) });
    // A run of the same task still going here is stale: its job came back (this worker was taken
    // for dead) and this is the later attempt. Stop it; its commits are fenced anyway.
    executions.get(taskId)?.abandon(`a later attempt of task ${taskId} started on ${id}`);
    executions.set(taskId, execution);
    return execution;
  };

  /**
   * BullMQ says this worker lost a job's lock (it could not renew it, or found the job stalled):
   * another worker may run the job now. The local run stops without committing anything.
   */
  const lockLost = (jobId: string, how: string): void => {
    const execution = jobRuns.get(jobId);
    if (!execution || execution.lost) return;
    report(new Error(`lost the lock of job ${jobId} (${how}); stopping the local run without recording its end`), execution.taskId, 'job lock');
    execution.abandon(`worker ${id} lost job ${jobId}'s lock`);
  };

  /** The end of a plain task from the run's outcome (`state` changed in place). */
  const endEvent = (state: IBackgroundTaskState, outcome: Exclude<TExecutionOutcome, { type: 'tripped' | 'lost' }>, now: number): TBackgroundTaskEvent => {
    if (outcome.type === 'completed') return complete(state, outcome.result, now);
    if (outcome.type === 'cancelled') return cancelState(state, outcome.reason, now);
    return fail(state, outcome.error, now);
  };

  /** Ends a plain task from the run's outcome, unless a later attempt than `attempt` began (this run's worker was taken for dead). */
  const settle = async (taskId: string, outcome: TExecutionOutcome, attempt: number, known?: StoredTask): Promise<void> => {
    if (outcome.type === 'tripped' || outcome.type === 'lost') return;
    await store.update(taskId, (state) => (isTerminal(state.status) ? undefined : [endEvent(state, outcome, clock.now())]), known, attempt);
  };

  const answerSend = async (execution: TaskExecution, input: string, replyKey: string): Promise<void> => {
    let reply: { ok: boolean; code?: string; message?: string };
    try {
      await execution.send(input);
      reply = { ok: true };
    } catch (error) {
      reply = { ok: false, code: (error as { code?: string }).code ?? 'background_send_failed', message: describeError(error) };
    }
    try {
      await redis.multi().lpush(replyKey, JSON.stringify(reply)).expire(replyKey, 60).exec();
    } catch (error) {
      report(error, execution.taskId, 'send reply');
    }
  };

  /**
   * A dead worker's shell task keeps running in its own process group. A worker on the same host
   * kills that group, once it has checked the group leader is the process the dead worker started
   * (same start time in /proc), so a reused pid is never hit. Linux only; elsewhere the group stays.
   */
  const reapOrphanedGroup = async (taskId: string, pid: number | undefined): Promise<void> => {
    if (pid === undefined || process.platform !== 'linux') return;
    try {
      const { host, groupStart } = await store.getFields(taskId, ['host', 'groupStart']);
      if (host !== hostname() || groupStart === undefined || processStartTime(pid) !== groupStart) return;
      process.kill(-pid, 'SIGKILL');
      await store.appendLog(taskId, [`[worker] ${id} killed process group ${pid}, left running by the worker that died`]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') report(error, taskId, 'reap orphaned process group');
    }
  };

  /** What a worker on this host needs to recognise a run's process group if this worker dies. */
  const recordGroup = async (taskId: string, pid: number): Promise<void> => {
    const startTime = processStartTime(pid);
    if (startTime !== undefined) await store.setFields(taskId, { host: hostname(), groupStart: startTime });
  };

  /**
   * Runs a plain task's job. Whatever goes wrong on the way (a Redis error on a commit, a runner
   * that throws) stops the run and ends the task `failed` with the reason, so no task is left
   * `queued` or `running` behind a job BullMQ already failed. Only when even that commit fails
   * does the error reach BullMQ (and the task waits for the stalled-job or stale-worker path).
   */
  const processTask = async (job: Job<WorkerJobData>, token?: string): Promise<string> => {
    try {
      return await runTask(job, token);
    } catch (error) {
      if (error instanceof WaitingError) throw error;
      const { taskId } = job.data;
      const failure = new BackgroundTaskError('runner', `Worker ${id} could not run background task ${taskId}: ${describeError(error)}. The run was stopped; spawn the task again.`, { code: 'background_worker_error', taskId, cause: error });
      report(error, taskId, 'run');
      await store.update(taskId, (state) => (isTerminal(state.status) ? undefined : [fail(state, failure, clock.now())]));
      return 'failed';
    }
  };

  const runTask = async (job: Job<WorkerJobData>, token?: string): Promise<string> => {
    const { taskId } = job.data;
    // A plain first run is counted in the same step as the read (`begun`); anything else is
    // decided below from the record and counted by `beginAttempt`.
    const { stored, begun } = await store.readForRun(taskId, id);
    if (!stored) return 'closed';
    if (isTerminal(stored.state.status)) return stored.state.status;
    const request = stored.request;
    if (request.kind === 'scheduled') throw new BackgroundTaskError('validation', `Task ${taskId} is scheduled; it runs through its job scheduler, not as a job.`, { code: 'background_unknown_kind', taskId });
    if (stored.cancel !== undefined) {
      await store.update(taskId, (state) => (isTerminal(state.status) ? undefined : [cancelState(state, stored.cancel!, clock.now())]));
      return 'cancelled';
    }
    // A task that is past `queued` was started by a worker that vanished (BullMQ handed the
    // stalled job back) or that handed it back at shutdown. It runs again only while its retry
    // budget lasts; handed-back runs are not charged to it.
    const retries = job.data.retries ?? 0;
    // `attempts` is counted before the runner starts, so a worker that died between starting the
    // process and committing `running` still counts as a run: the task is never run twice unasked.
    const restarted = stored.state.status !== 'queued' || stored.attempts > 0;
    if (restarted) await reapOrphanedGroup(taskId, stored.state.pid);
    if (restarted && stored.attempts - stored.handBacks > retries) {
      await store.update(taskId, (state) => (isTerminal(state.status) ? undefined : [fail(state, staleWorkerError(taskId, `worker stopped renewing job ${job.id}'s lock`), clock.now())]));
      return 'stale_worker';
    }
    // The attempt fences every commit and log line of this run: a worker that stalled past its
    // lock (taken for dead, the job run again) cannot end or write over the attempt that runs now.
    const attempt = begun > 0 ? begun : await store.beginAttempt(taskId, id);
    if (attempt === 0) return 'closed';
    if (attempt < 0) {
      // A cancel came after the read above: no attempt began, so nothing is started.
      await store.update(taskId, (state, current) => (isTerminal(state.status) ? undefined : [cancelState(state, current.cancel ?? 'cancelled', clock.now())]));
      return 'cancelled';
    }
    // Runner progress waits for the start below to be committed, so the stream keeps its order.
    const execution = execute(taskId, taskId, request, true, attempt);
    const jobId = job.id ?? taskId;
    jobRuns.set(jobId, execution);
    let runPromise: Promise<TExecutionOutcome> | undefined;
    try {
      if (restarted) {
        const why = stored.handBacks === 0 ? 'the previous worker stopped (stalled job); retrying' : 'the previous run was stopped (stalled job or hand-back); running the task again';
        await store.appendLog(taskId, [`[worker] attempt ${attempt} on ${id}: ${why}`], attempt);
      }
      runPromise = execution.run();
      const start = (state: IBackgroundTaskState): TBackgroundTaskEvent[] | undefined => {
        if (isTerminal(state.status)) return undefined;
        const now = clock.now();
        if (state.status === 'queued') {
          transition(state, 'START', now);
          state.startedAt = now;
        }
        state.lastActivityAt = now;
        Object.assign(state, execution.describeHandle());
        return [snapshotEvent(restarted ? 'background_task_updated' : 'background_task_started', state)];
      };
      // A run that is over within this turn of the event loop (a quick task, a runner that
      // fails at once) commits its start and its end in one step: one script and round trip
      // fewer. Its events are still the start's, then the end's, with versions of their own.
      const early = await settledWithinTurn(runPromise);
      if (early !== undefined && early.type !== 'tripped' && early.type !== 'lost' && !handingBack.has(taskId)) {
        try {
          await store.update(taskId, (state) => {
            const events = start(state);
            return events && [...events, endEvent(state, early, clock.now())];
          }, stored, attempt);
        } finally {
          execution.startCommitted();
        }
        return 'done';
      }
      let started: StoredTask | undefined;
      try {
        // A run whose lock was lost already (see lockLost) commits not even its start.
        started = execution.lost ? undefined : await store.update(taskId, start, stored, attempt);
      } finally {
        // Also when the commit failed: held progress must not wait for a start that never comes.
        execution.startCommitted();
      }
      // Ended meanwhile (this run's attempt was taken over), or a cancel asked after this worker
      // counted the attempt (the client left the stop to it): stop the run right away.
      if (!started || isTerminal(started.state.status)) execution.cancel('cancelled before start');
      else if (started.cancel !== undefined) execution.cancel(started.cancel);
      else if (started.state.pid !== undefined) await recordGroup(taskId, started.state.pid);
      const outcome = await runPromise;
      // The job is another worker's now: BullMQ must not finish it on this worker's behalf.
      if (outcome.type === 'lost') throw new WaitingError();
      if (outcome.type === 'cancelled' && handingBack.get(taskId) === outcome.reason) {
        // Not charged to the retry budget (the task did not fail, this worker left), but the
        // attempt keeps its number: the next run gets a new one, so this run's fence stays shut.
        const handedBack = await store.handBack(taskId, attempt);
        if (handedBack === 0) return 'closed';
        // A later attempt began elsewhere: the job is not this worker's to put back.
        if (handedBack < 0) throw new WaitingError();
        await store.appendLog(taskId, [`[worker] ${id} stopped before the task ended; handed back to the queue`], attempt);
        await job.moveToWait(token);
        throw new WaitingError();
      }
      await settle(taskId, outcome, attempt, started);
      return 'done';
    } catch (error) {
      // A failed step must not leave the run going with nobody to record its end.
      if (!(error instanceof WaitingError) && runPromise) {
        execution.cancel(`the worker failed: ${describeError(error)}`);
        await runPromise.catch(() => undefined);
      }
      throw error;
    } finally {
      // A stale run of this task may end after a later attempt took the task's entry here.
      if (executions.get(taskId) === execution) executions.delete(taskId);
      if (jobRuns.get(jobId) === execution) jobRuns.delete(jobId);
      handingBack.delete(taskId);
      stoppedByShutdown.delete(taskId);
    }
  };

  const schedules = kinds.includes('scheduled') ? new Queue(keys.queueName('scheduled'), { connection: options.connection, prefix: keys.bullPrefix }) : undefined;
  schedules?.on('error', (error) => report(error, undefined, 'scheduled queue'));
  const processFire = (job: Job<WorkerJobData>): Promise<string> =>
    runScheduledFire({
      job,
      store,
      clock,
      execute: (taskId, runId, request) => {
        const execution = execute(taskId, runId, request);
        if (job.id !== undefined) jobRuns.set(job.id, execution);
        return execution;
      },
      executions,
      nextRun: async (taskId) => {
        const scheduler = await schedules!.getJobScheduler(taskId);
        // A scheduler an earlier version created with a BullMQ `limit` keeps its last tick as `next` once the limit is used up.
        if (!scheduler || (scheduler.limit !== undefined && (scheduler.iterationCount ?? 0) >= scheduler.limit)) return undefined;
        return scheduler.next ?? undefined;
      },
      removeScheduler: async (taskId) => {
        await schedules!.removeJobScheduler(taskId);
      },
      report,
      stoppedByShutdown: (taskId) => stoppedByShutdown.get(taskId),
      recordGroup,
      reapGroup: reapOrphanedGroup,
    }).finally(() => {
      stoppedByShutdown.delete(job.data.taskId);
      if (job.id !== undefined) jobRuns.delete(job.id);
    });

  const concurrencyOf = (kind: TBackgroundTaskKind): number =>
    typeof options.concurrency === 'number' ? options.concurrency : (options.concurrency?.[kind] ?? 4);
  const workers = kinds.map((kind) => {
    const worker = new Worker<WorkerJobData, string>(keys.queueName(kind), kind === 'scheduled' ? processFire : processTask, {
      // Auto-pipelining here too: the job ends (and next-job fetches) of the jobs finishing in
      // one tick share a socket write, as the task commits on `redis` do.
      connection: { ...options.connection, maxRetriesPerRequest: null, enableAutoPipelining: true },
      prefix: keys.bullPrefix,
      concurrency: concurrencyOf(kind),
      lockDuration: options.lockDurationMs ?? 30_000,
      ...(options.rateLimit?.[kind] ? { limiter: { max: options.rateLimit[kind].max, duration: options.rateLimit[kind].durationMs } } : {}),
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      // The retry budget is the task's (checked in processTask), not BullMQ's stall count.
      maxStalledCount: 1_000_000,
      name: id,
    });
    worker.on('error', (error) => report(error, undefined, `worker ${kind}`));
    worker.on('lockRenewalFailed', (jobIds) => {
      for (const jobId of jobIds) lockLost(jobId, 'could not renew it');
    });
    // This worker's own stalled check found a job it holds without its lock: moved back to wait.
    worker.on('stalled', (jobId) => lockLost(jobId, 'found stalled'));
    // A job BullMQ itself failed for stalling (a backstop; processTask normally decides first).
    worker.on('failed', (job, error) => {
      if (!job || !error?.message?.includes(STALLED_FAILURE)) return;
      const taskId = job.data.taskId;
      void store
        .update(taskId, (state) => (isTerminal(state.status) ? undefined : [fail(state, staleWorkerError(taskId, error.message), clock.now())]))
        .catch((failure: unknown) => report(failure, taskId, 'stale worker'));
    });
    return worker;
  });
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  for (const [kind, limit] of Object.entries(options.globalConcurrency ?? {}) as Array<[TBackgroundTaskKind, number]>) {
    const queue = new Queue(keys.queueName(kind), { connection: options.connection, prefix: keys.bullPrefix });
    queue.on('error', (error) => report(error, undefined, `queue ${kind}`));
    try {
      await queue.setGlobalConcurrency(limit);
    } finally {
      await queue.close();
    }
  }

  let closing: Promise<void> | undefined;
  return {
    id,
    running: () => [...executions.keys()],
    shutdown({ graceMs = 30_000, reason = 'worker shutdown', unfinished = 'cancel' } = {}) {
      closing ??= (async () => {
        const stopAll = (): void => {
          for (const [taskId, execution] of executions) {
            const why = unfinished === 'hand-back' ? `handed back: ${reason}` : reason;
            if (unfinished === 'hand-back') handingBack.set(taskId, why);
            stoppedByShutdown.set(taskId, reason);
            execution.cancel(why);
          }
        };
        const timer = setTimeout(stopAll, graceMs);
        if (graceMs <= 0) stopAll();
        try {
          // close() stops fetching and waits for the active jobs, which end by themselves or by the cancel above.
          await Promise.all(workers.map((worker) => worker.close()));
        } finally {
          clearTimeout(timer);
        }
        await schedules?.close().catch(() => undefined);
        await subscriber.quit().catch(() => subscriber.disconnect());
        await redis.quit().catch(() => redis.disconnect());
        if (ownLogDir !== undefined) await rm(ownLogDir, { recursive: true, force: true }).catch((error: unknown) => report(error, undefined, 'remove log directory'));
      })();
      return closing;
    },
  };
}
