import { randomBytes, randomUUID } from 'node:crypto';
import { describeError, processWarningDiagnostics, systemClock, type Clock, type DiagnosticsReporter } from '@tessera/contracts';
import {
  cloneTaskState,
  BackgroundTaskError,
  type IBackgroundTaskListFilter,
  type IBackgroundTaskLogCursor,
  type IBackgroundTaskLogPage,
  type IBackgroundTaskManager,
  type IBackgroundTaskRequest,
  type IBackgroundTaskState,
  type TBackgroundTaskEventListener,
  type TBackgroundTaskKind,
} from '@tessera/plugin-background';
import { Redis, type RedisOptions } from 'ioredis';
import { Queue } from 'bullmq';
import { JobBatcher } from './job-batcher.js';
import { createTaskKeys, isSafeKeyName, isSafeKeyPrefix, type TaskKeys } from './redis-keys.js';
import { checkTaskId, parseSchedule, validateSpawnRequest } from './request-validation.js';
import { followTaskEvents, latestTaskEventId, readTaskEvents, type StreamedTaskEvent, type TaskEventFollower } from './task-event-stream.js';
import { cancel as cancelState, fail, initialTaskState, isTerminal, snapshotEvent, transition } from './task-lifecycle.js';
import { RedisTaskStore, type StoredTask } from './task-store.js';
import { freezeInPlace, TaskMirror } from './task-mirror.js';

export interface BullmqConnectionOptions {
  /** How to reach Redis (ioredis options: host, port, password, tls, db…). */
  connection: RedisOptions;
  /** Queue name: tasks, events and BullMQ queues of one deployment (default `tessera-background`). */
  queue?: string;
  /** Every Redis key starts with this (default `tessera`). */
  prefix?: string;
}

export interface BullmqBackgroundTaskManagerOptions extends BullmqConnectionOptions {
  /** Kinds `spawn` accepts; a worker must run for each (default process, agent, scheduled). */
  kinds?: readonly TBackgroundTaskKind[];
  /** Deepest allowed `request.depth` (default 1). */
  maxDepth?: number;
  /** Task ids must be unique across every process of the queue (default: time + random). */
  idFactory?: (request: IBackgroundTaskRequest) => string;
  /**
   * BullMQ job priority per task: 1 is served first, larger numbers later (at most 2,097,152);
   * `undefined` or 0 means none (those jobs go before prioritized ones, in arrival order).
   */
  priority?: number | ((request: IBackgroundTaskRequest) => number | undefined);
  /** Extra runs a task gets after its worker died (default 0: the task fails with `stale_worker`). */
  retries?: number | ((request: IBackgroundTaskRequest) => number);
  /** Stream entries kept (default 100,000) and log lines kept per task (default 10,000). */
  maxEvents?: number;
  maxLogLines?: number;
  /** How long `cancel` waits for the worker to stop a running task before returning its state (default 30 s). */
  cancelTimeoutMs?: number;
  /** `shutdown()` also cancels every open task of the queue (default false: tasks belong to the cluster, not to this client). */
  cancelOnShutdown?: boolean;
  clock?: Clock;
  onError?: (error: unknown, context: { taskId?: string; phase: string }) => void;
  diagnostics?: DiagnosticsReporter;
}

export const DEFAULT_QUEUE = 'tessera-background';
export const DEFAULT_PREFIX = 'tessera';
const ALL_KINDS: readonly TBackgroundTaskKind[] = ['process', 'agent', 'scheduled'];

/**
 * Job data on the BullMQ queues: the task id (and the retry budget). The request lives in the
 * task record only, which workers read anyway: a long prompt is not stored twice.
 */
export interface BackgroundJobData {
  taskId: string;
  /** Written by earlier versions; workers read the request from the task record. */
  request?: IBackgroundTaskRequest;
  /** Runs allowed after a worker died mid-task (0: the task fails with `stale_worker`). */
  retries?: number;
}

export function resolveKeys(options: BullmqConnectionOptions): TaskKeys {
  const queue = options.queue ?? DEFAULT_QUEUE;
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (!isSafeKeyName(queue)) {
    throw new BackgroundTaskError('validation', `BullMQ background queue ${JSON.stringify(queue)} must be 1-64 letters, digits, "_", "-" or ".", starting with a letter or digit.`, { code: 'background_invalid_option', details: { field: 'queue' } });
  }
  if (!isSafeKeyPrefix(prefix)) {
    throw new BackgroundTaskError('validation', `BullMQ background prefix ${JSON.stringify(prefix)} must be 1-64 letters, digits, "_", "-", "." or ":", starting with a letter or digit and not ending with ":".`, { code: 'background_invalid_option', details: { field: 'prefix' } });
  }
  return createTaskKeys(prefix, queue);
}

const MAX_PRIORITY = 2_097_152;

function checkPriority(priority: number, taskId: string): number {
  if (!Number.isInteger(priority) || priority < 0 || priority > MAX_PRIORITY) {
    throw new BackgroundTaskError('validation', `Priority ${priority} of task ${taskId} must be a whole number from 1 to ${MAX_PRIORITY} (or 0 for none).`, { code: 'background_invalid_option', taskId, details: { field: 'priority' } });
  }
  return priority;
}

// The last 12 hex digits of a v4 UUID are 48 random bits: the same as randomBytes(6), but drawn
// from Node's pooled UUID entropy (about 0.25 µs instead of 2 µs, once per spawn).
const defaultId = (): string => `bg_${Date.now().toString(36)}_${randomUUID().slice(24)}`;

/**
 * `IBackgroundTaskManager` over Redis and BullMQ: `spawn` writes the task record and enqueues
 * a job; workers (`startBackgroundWorker`) run it. Records, logs and events live in Redis, so
 * any process of the deployment sees the same tasks.
 *
 * `get` and `list` are synchronous in the contract, so they answer from a mirror this client
 * keeps current by following the event stream (loopback lag: about a millisecond). `fetch`,
 * `listAll` and `readLog` read Redis itself.
 */
export class BullmqBackgroundTaskManager implements IBackgroundTaskManager {
  readonly keys: TaskKeys;
  readonly store: RedisTaskStore;
  private readonly redis: Redis;
  private readonly queues = new Map<TBackgroundTaskKind, Queue>();
  /** Jobs of each queue, added a tick's worth at a time. */
  private readonly batchers = new Map<TBackgroundTaskKind, JobBatcher>();
  private readonly kinds: ReadonlySet<TBackgroundTaskKind>;
  private readonly mirror = new TaskMirror();
  private readonly listeners = new Set<(entry: StreamedTaskEvent) => void>();
  private readonly clock: Clock;
  private follower: TaskEventFollower | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: BullmqBackgroundTaskManagerOptions) {
    this.keys = resolveKeys(options);
    this.kinds = new Set(options.kinds ?? ALL_KINDS);
    this.clock = options.clock ?? systemClock;
    // Auto-pipelining: concurrent spawns and reads share socket writes.
    this.redis = new Redis({ ...options.connection, lazyConnect: true, enableAutoPipelining: true });
    this.redis.on('error', (error) => this.report(error, undefined, 'redis connection'));
    this.store = new RedisTaskStore(this.redis, this.keys, {
      ...(options.maxEvents === undefined ? {} : { maxEvents: options.maxEvents }),
      ...(options.maxLogLines === undefined ? {} : { maxLogLines: options.maxLogLines }),
    });
  }

  /** Connects, loads the mirror and starts following events. Idempotent; every async method awaits it. */
  start(): Promise<void> {
    // A failed start is forgotten, so the next call tries again (Redis down at first, back later).
    this.starting ??= this.startOnce().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  private async startOnce(): Promise<void> {
    await connected(this.redis);
    // The cursor is taken before the records are read: an event committed in between is
    // replayed, and the mirror keeps whichever version is newer.
    const cursor = await latestTaskEventId(this.redis, this.keys.events);
    for (const stored of await this.loadAll()) this.mirror.load(stored.state, stored.version);
    const reader = this.redis.duplicate({ enableAutoPipelining: false });
    reader.on('error', (error) => this.report(error, undefined, 'redis event reader'));
    this.follower = followTaskEvents(reader, this.keys.events, cursor, (entry) => this.onEntry(entry), (error) => this.report(error, undefined, 'event stream'));
  }

  // ------------------------------------------------------------------ IBackgroundTaskManager

  async spawn(request: IBackgroundTaskRequest): Promise<IBackgroundTaskState> {
    if (this.closing) throw new BackgroundTaskError('capacity', 'The BullMQ background client is shut down; it takes no new tasks.', { code: 'background_manager_shut_down' });
    const { depth, metadata } = validateSpawnRequest(request, this.kinds, this.options.maxDepth ?? 1);
    const schedule = request.kind === 'scheduled' ? parseSchedule(request.schedule) : undefined;
    await this.start();
    const id = checkTaskId((this.options.idFactory ?? defaultId)(request));
    const priority = request.kind === 'scheduled' ? undefined : typeof this.options.priority === 'function' ? this.options.priority(request) : this.options.priority;
    if (priority) checkPriority(priority, id);
    const state = initialTaskState(id, request, depth, metadata, this.clock.now());
    if (!(await this.store.create(state, request, snapshotEvent('background_task_created', state)))) {
      throw new BackgroundTaskError('validation', `The id factory returned ${id}, which is already in use.`, { code: 'background_duplicate_task_id', taskId: id });
    }
    this.mirror.load(state, 1);
    try {
      if (request.kind === 'scheduled') return await this.schedule(id, request, schedule!);
      const retries = typeof this.options.retries === 'function' ? this.options.retries(request) : (this.options.retries ?? 0);
      await this.batcher(request.kind).add(request.kind, (retries > 0 ? { taskId: id, retries } : { taskId: id }) satisfies BackgroundJobData, {
        jobId: id,
        ...(priority ? { priority } : {}),
        removeOnComplete: true,
        removeOnFail: { count: 1000 },
      });
    } catch (error) {
      const cause = new BackgroundTaskError('runner', `Background task ${id} could not be queued in BullMQ: ${describeError(error)}. Check the Redis connection.`, { code: 'background_enqueue_failed', taskId: id, cause: error });
      await this.store.update(id, (draft) => (isTerminal(draft.status) ? undefined : [fail(draft, cause, this.clock.now())])).catch(() => undefined);
      throw cause;
    }
    return cloneTaskState(state);
  }

  async wait(taskId: string): Promise<IBackgroundTaskState> {
    await this.start();
    for (;;) {
      const stored = await this.store.read(taskId);
      if (!stored) throw this.notFound(taskId);
      if (isTerminal(stored.state.status)) return stored.state;
      // The next terminal event of this task, or a re-read after a second (missed events, lost connections).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, 1000);
        const listener = (entry: StreamedTaskEvent): void => {
          if (entry.event.taskId === taskId && 'task' in entry.event && isTerminal(entry.event.task.status)) done();
        };
        function done(): void {
          clearTimeout(timer);
          listeners.delete(listener);
          resolve();
        }
        const listeners = this.listeners;
        listeners.add(listener);
      });
    }
  }

  list(filter: IBackgroundTaskListFilter = {}): IBackgroundTaskState[] {
    return filterStates(this.mirror.all(), filter);
  }

  get(taskId: string): IBackgroundTaskState | undefined {
    return this.mirror.get(taskId);
  }

  /** The task as Redis holds it now (not the mirror). */
  async fetch(taskId: string): Promise<IBackgroundTaskState | undefined> {
    await this.start();
    return (await this.store.read(taskId))?.state;
  }

  /** Every task of the queue as Redis holds it now, oldest first. */
  async listAll(filter: IBackgroundTaskListFilter = {}): Promise<IBackgroundTaskState[]> {
    await this.start();
    return filterStates(await this.store.list(), filter);
  }

  async cancel(taskId: string, reason = 'cancelled'): Promise<IBackgroundTaskState> {
    await this.start();
    const before = await this.store.read(taskId);
    if (!before) throw this.notFound(taskId);
    if (isTerminal(before.state.status)) return before.state;
    // The flag first: a worker that starts the task from now on sees it and stops, and a
    // worker's commit in flight (a fire putting its schedule back to sleep) is re-read with it.
    if (!(await this.store.requestCancel(taskId, reason))) throw this.notFound(taskId);
    if (before.state.kind === 'scheduled') await this.queue('scheduled').removeJobScheduler(taskId).catch((error: unknown) => this.report(error, taskId, 'remove job scheduler'));
    const after = await this.store.update(taskId, (state, current) => {
      // Nothing runs for a queued task or a sleeping schedule: the client ends it itself. A
      // queued task with an attempt counted was taken by a worker before the flag was set (no
      // attempt begins after it): its command is starting, so it is cancelled as a running one.
      if ((state.status === 'queued' && current.attempts === 0) || (state.kind === 'scheduled' && state.status === 'sleeping')) return [cancelState(state, reason, this.clock.now())];
      return undefined;
    });
    if (!after) throw this.notFound(taskId);
    if (isTerminal(after.state.status)) {
      if (before.state.kind !== 'scheduled') await this.queue(before.state.kind).remove(taskId).catch(() => undefined);
      return after.state;
    }
    await this.redis.publish(this.keys.control, JSON.stringify({ type: 'cancel', taskId, reason }));
    const timeout = this.options.cancelTimeoutMs ?? 30_000;
    let resolveLate!: (value: undefined) => void;
    const late = new Promise<undefined>((resolve) => (resolveLate = resolve));
    const timer = setTimeout(() => resolveLate(undefined), timeout);
    const ended = await Promise.race([this.wait(taskId), late]).finally(() => clearTimeout(timer));
    return ended ?? (await this.fetch(taskId)) ?? before.state;
  }

  /** The contract's `close` is synchronous: it checks the mirror and removes the record in the background. Prefer `remove`. */
  close(taskId: string): IBackgroundTaskState {
    const state = this.mirror.get(taskId);
    if (!state) throw this.notFound(taskId);
    this.assertClosable(state);
    this.mirror.delete(taskId);
    void this.remove(taskId).catch((error: unknown) => this.report(error, taskId, 'close'));
    return state;
  }

  /** Removes a terminal task's record, log and index entry from Redis; emits `background_task_closed`. */
  async remove(taskId: string): Promise<IBackgroundTaskState> {
    await this.start();
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const stored = await this.store.read(taskId);
      if (!stored) throw this.notFound(taskId);
      this.assertClosable(stored.state);
      if (await this.store.close(stored, snapshotEvent('background_task_closed', stored.state))) {
        this.mirror.delete(taskId);
        return stored.state;
      }
    }
    throw new BackgroundTaskError('capacity', `Background task ${taskId} kept changing while it was being closed; retry.`, { code: 'background_store_contention', taskId });
  }

  shutdown(reason = 'shutdown'): Promise<void> {
    this.closing ??= (async () => {
      if (this.starting && this.options.cancelOnShutdown) {
        const open = (await this.listAll().catch(() => [])).filter((state) => !isTerminal(state.status));
        await Promise.all(open.map((state) => this.cancel(state.id, reason).catch((error: unknown) => this.report(error, state.id, 'shutdown cancel'))));
      }
      await this.follower?.stop();
      await Promise.all([...this.queues.values()].map((queue) => queue.close().catch(() => undefined)));
      this.redis.disconnect();
    })();
    return this.closing;
  }

  /**
   * Input for a running task, delivered to the worker running it (control channel) and answered
   * on a reply key this call waits on (up to `cancelTimeoutMs`).
   */
  async send(taskId: string, input: string): Promise<void> {
    await this.start();
    const stored = await this.store.read(taskId);
    if (!stored) throw this.notFound(taskId);
    if (isTerminal(stored.state.status)) {
      throw new BackgroundTaskError('validation', `Background task ${taskId} already ${stored.state.status}; it cannot take input.`, { code: 'background_task_not_running', taskId });
    }
    if (stored.state.status !== 'running') {
      throw new BackgroundTaskError('runner', `Background task ${taskId} (${stored.state.kind}) does not accept input until a worker runs it (it is ${stored.state.status}).`, { code: 'background_send_unsupported', taskId });
    }
    const requestId = randomBytes(8).toString('hex');
    const replyKey = this.keys.reply(requestId);
    const timeoutMs = this.options.cancelTimeoutMs ?? 30_000;
    // A connection of its own: BLPOP blocks it until the worker answers.
    const waiter = this.redis.duplicate({ enableAutoPipelining: false });
    waiter.on('error', (error) => this.report(error, taskId, 'send reply'));
    try {
      await this.redis.publish(this.keys.control, JSON.stringify({ type: 'send', taskId, input, replyKey }));
      const popped = await waiter.blpop(replyKey, Math.max(1, Math.ceil(timeoutMs / 1000)));
      if (!popped) {
        throw new BackgroundTaskError('runner', `No worker answered for background task ${taskId} within ${Math.round(timeoutMs / 1000)} s (its worker may have died); the input was not delivered.`, { code: 'background_send_timeout', taskId });
      }
      const reply = JSON.parse(popped[1]) as { ok: boolean; code?: string; message?: string };
      if (!reply.ok) throw new BackgroundTaskError('runner', reply.message ?? `Background task ${taskId} refused the input.`, { code: reply.code ?? 'background_send_failed', taskId });
    } finally {
      waiter.disconnect();
    }
  }

  async readLog(taskId: string, cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage> {
    await this.start();
    if (!(await this.store.read(taskId))) throw this.notFound(taskId);
    return this.store.readLog(taskId, cursor);
  }

  /** Live events from now on (every process's, in commit order). */
  subscribe(listener: TBackgroundTaskEventListener): () => void {
    const wrapped = (entry: StreamedTaskEvent): void => listener(entry.event);
    this.listeners.add(wrapped);
    return () => {
      this.listeners.delete(wrapped);
    };
  }

  /** Stored events after `cursor` (a stream id from a previous entry; `0-0` = the oldest kept). */
  async readEvents(cursor?: string, count?: number): Promise<StreamedTaskEvent[]> {
    await this.start();
    return readTaskEvents(this.redis, this.keys.events, cursor, count);
  }

  /** Replays every event after `cursor`, then follows live ones, in order, on a connection of its own. */
  followEvents(cursor: string, listener: (entry: StreamedTaskEvent) => void): TaskEventFollower {
    const reader = this.redis.duplicate({ enableAutoPipelining: false });
    reader.on('error', (error) => this.report(error, undefined, 'redis event reader'));
    return followTaskEvents(reader, this.keys.events, cursor, listener, (error) => this.report(error, undefined, 'event listener'));
  }

  // ------------------------------------------------------------------ internals

  private async schedule(id: string, request: Extract<IBackgroundTaskRequest, { kind: 'scheduled' }>, schedule: { pattern: string } | { at: number }): Promise<IBackgroundTaskState> {
    const queue = this.queue('scheduled');
    const data: BackgroundJobData = { taskId: id };
    let nextRunAt: number | undefined;
    if ('pattern' in schedule) {
      // No BullMQ `limit`: it counts ticks, skipped ones too, and would stop the ticks before
      // `maxRuns` fires ran. The fire that reaches `maxRuns` removes the scheduler (settleFire).
      const job = await queue.upsertJobScheduler(
        id,
        { pattern: schedule.pattern, ...(request.timezone ? { tz: request.timezone } : {}) },
        { name: 'fire', data, opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
      );
      nextRunAt = job?.timestamp !== undefined && job.opts.delay !== undefined ? job.timestamp + job.opts.delay : undefined;
    } else {
      nextRunAt = schedule.at;
      await queue.add('fire', data, { jobId: `${id}-at`, delay: Math.max(0, schedule.at - Date.now()), removeOnComplete: true });
    }
    // The schedule itself runs nowhere: it is `running` at once and sleeps until its first fire.
    const stored = await this.store.update(id, (state) => {
      if (state.status !== 'queued') return undefined;
      const now = this.clock.now();
      transition(state, 'START', now);
      state.startedAt = now;
      const started = snapshotEvent('background_task_started', state);
      transition(state, 'SLEEP', now);
      if (nextRunAt !== undefined) state.nextRunAt = nextRunAt;
      return [started, snapshotEvent('background_task_updated', state)];
    });
    if (!stored) throw this.notFound(id);
    return stored.state;
  }

  queue(kind: TBackgroundTaskKind): Queue {
    let queue = this.queues.get(kind);
    if (!queue) {
      queue = new Queue(this.keys.queueName(kind), { connection: this.options.connection, prefix: this.keys.bullPrefix });
      queue.on('error', (error) => this.report(error, undefined, `queue ${kind}`));
      this.queues.set(kind, queue);
    }
    return queue;
  }

  private batcher(kind: TBackgroundTaskKind): JobBatcher {
    let batcher = this.batchers.get(kind);
    if (!batcher) {
      batcher = new JobBatcher(this.queue(kind));
      this.batchers.set(kind, batcher);
    }
    return batcher;
  }

  private async loadAll(): Promise<StoredTask[]> {
    const ids = await this.redis.zrange(this.keys.index, 0, -1);
    const out: StoredTask[] = [];
    for (const id of ids) {
      const stored = await this.store.read(id).catch(() => undefined);
      if (stored) out.push(stored);
    }
    return out;
  }

  private onEntry(entry: StreamedTaskEvent): void {
    const { event, version } = entry;
    // The task was parsed for this entry alone: frozen, it is the mirror's copy and every listener's (as in process).
    const task = 'task' in event ? freezeInPlace(event.task) : undefined;
    if (event.type === 'background_task_closed') this.mirror.delete(event.taskId, version);
    else if (task) this.mirror.loadFrozen(task, version);
    for (const listener of this.listeners) {
      try {
        listener(entry);
      } catch (error) {
        this.report(error, event.taskId, `listener for ${event.type}`);
      }
    }
  }

  private assertClosable(state: IBackgroundTaskState): void {
    if (!isTerminal(state.status)) {
      throw new BackgroundTaskError('validation', `Cannot close background task ${state.id} while it is ${state.status}; cancel it or wait for it first.`, { code: 'background_task_not_terminal', taskId: state.id, details: { status: state.status } });
    }
  }

  private notFound(taskId: string): BackgroundTaskError {
    return new BackgroundTaskError('validation', `No background task ${JSON.stringify(taskId)} in queue ${this.keys.queue}; list() shows the known ids (closed tasks are gone).`, { code: 'background_task_not_found', taskId });
  }

  private report(error: unknown, taskId: string | undefined, phase: string): void {
    if (this.closing && phase.startsWith('redis')) return;
    try {
      if (this.options.onError) this.options.onError(error, { ...(taskId === undefined ? {} : { taskId }), phase });
      else (this.options.diagnostics ?? processWarningDiagnostics).report({ severity: 'warning', code: 'TESSERA_BACKGROUND_TASK', source: 'background-bullmq', message: `Background task ${taskId ?? '-'} (${phase}): ${describeError(error)}` });
    } catch {
      // The reporter itself failed; nothing is left to tell.
    }
  }
}

export function filterStates(states: readonly IBackgroundTaskState[], filter: IBackgroundTaskListFilter): IBackgroundTaskState[] {
  const statuses = filter.status === undefined ? undefined : ([] as string[]).concat(filter.status);
  return states.filter(
    (state) =>
      (!statuses || statuses.includes(state.status)) &&
      (filter.kind === undefined || state.kind === filter.kind) &&
      (filter.mode === undefined || state.mode === filter.mode) &&
      (filter.parentSessionId === undefined || state.parentSessionId === filter.parentSessionId),
  );
}

/**
 * Resolves once `redis` is ready: connects a connection that never did (or ended), else waits
 * for the attempt under way, rejecting with its error (ioredis keeps retrying meanwhile).
 */
async function connected(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return;
  if (redis.status === 'wait' || redis.status === 'end') {
    await redis.connect();
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const ready = (): void => {
      redis.off('error', failed);
      resolve();
    };
    const failed = (error: unknown): void => {
      redis.off('ready', ready);
      reject(error);
    };
    redis.once('ready', ready);
    redis.once('error', failed);
  });
}
