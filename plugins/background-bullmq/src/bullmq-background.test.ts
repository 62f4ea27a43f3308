import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackgroundTasks, SubagentLauncher, systemClock } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { subagents } from '@tessera/plugin-subagents';
import { BackgroundTaskManagerToken, ManualBackgroundTaskRunner } from '@tessera/plugin-background';
import { describe, expect, it, vi } from 'vitest';
import { startBackgroundWorker, type BackgroundWorker } from './background-worker.js';
import { bullmqBackgroundRuntime, BullmqBackgroundTaskManagerToken } from './bullmq-background-runtime.js';
import { BullmqBackgroundTaskManager, type BullmqBackgroundTaskManagerOptions } from './bullmq-background-task-manager.js';
import type { StreamedTaskEvent } from './task-event-stream.js';
import { createTaskKeys } from './redis-keys.js';
import { RedisTaskStore } from './task-store.js';
import { runScheduledFire } from './scheduled-fire.js';
import type { TaskExecution } from './task-execution.js';
import type { BackgroundJobData } from './bullmq-background-task-manager.js';
import type { IBackgroundTaskState } from '@tessera/plugin-background';
import { Redis } from 'ioredis';
import { Queue, type Job } from 'bullmq';
import { hasRedisServer, liveGroupMembers, runningWithPid, until, useRedisSuite } from './testing/redis-server.test-helper.js';

const suite = useRedisSuite('tessera-bullmq-');
let queueNumber = 0;

/** A fresh queue per test, so tests share the server but never a task. */
function setup(extra: Partial<BullmqBackgroundTaskManagerOptions> = {}) {
  const base = { connection: { host: '127.0.0.1', port: suite.redis.port }, queue: `q${++queueNumber}` };
  const client = (more: Partial<BullmqBackgroundTaskManagerOptions> = {}): BullmqBackgroundTaskManager => {
    const manager = new BullmqBackgroundTaskManager({ ...base, ...extra, ...more });
    suite.cleanups.push(() => manager.shutdown());
    return manager;
  };
  const worker = async (more: Partial<Parameters<typeof startBackgroundWorker>[0]> = {}): Promise<BackgroundWorker> => {
    const started = await startBackgroundWorker({ ...base, shell: { killGraceMs: 200 }, lockDurationMs: 2000, stalledIntervalMs: 500, ...more });
    suite.cleanups.push(() => started.shutdown({ graceMs: 0 }));
    return started;
  };
  return { base, client, worker };
}

/** A task store on a connection of its own, over a fresh queue a client spawns (unstarted) process tasks into. */
async function storeSetup() {
  const connection = new Redis({ host: '127.0.0.1', port: suite.redis.port, lazyConnect: true });
  suite.cleanups.push(async () => connection.quit());
  const keys = createTaskKeys('tessera', `q${++queueNumber}`);
  const store = new RedisTaskStore(connection, keys);
  const manager = setup().client({ queue: keys.queue });
  await manager.start();
  const spawnOne = () => manager.spawn({ kind: 'process', command: 'true', cwd: suite.dir });
  return { connection, keys, store, spawnOne };
}

describe.runIf(hasRedisServer && process.platform === 'linux')('BullMQ background runtime (real redis-server)', () => {
  it('spawn on one client; get, list, wait and readLog on another', async () => {
    const { client, worker } = setup();
    const a = client();
    const b = client();
    await Promise.all([a.start(), b.start()]);
    await worker();
    const spawned = await a.spawn({ kind: 'process', command: 'printf "one\\ntwo\\n"; echo err >&2', cwd: suite.dir, label: 'printer', parentSessionId: 's1' });
    expect(spawned).toMatchObject({ status: 'queued', kind: 'process', label: 'printer', parentSessionId: 's1' });
    const done = await b.wait(spawned.id);
    expect(done).toMatchObject({ id: spawned.id, status: 'completed', exitCode: 0, output: 'one\ntwo\nerr\n' });
    // The worker's own log file is deleted once its lines are in Redis: the state names no path.
    expect(done.logPath).toBeUndefined();
    const page = await b.readLog(spawned.id);
    expect(page.lines).toEqual(['[stdout] one', '[stdout] two', '[stderr] err', '[exit] exit code 0']);
    expect(await b.readLog(spawned.id, { offset: 3 })).toMatchObject({ lines: ['[exit] exit code 0'], nextCursor: { offset: 4 }, hasMore: false });
    await until(() => b.get(spawned.id)?.status === 'completed', 'mirror of b');
    expect(b.list({ status: 'completed' }).map((task) => task.id)).toEqual([spawned.id]);
    expect((await b.listAll({ parentSessionId: 's1' })).map((task) => task.id)).toEqual([spawned.id]);
    const closed = await b.remove(spawned.id);
    expect(closed.status).toBe('completed');
    await expect(a.fetch(spawned.id)).resolves.toBeUndefined();
    await until(() => a.get(spawned.id) === undefined || undefined, 'closed in a');
  });

  it("a worker that keeps its log files (shell.logDir) names the task's file, on the worker's host", async () => {
    const { client, worker } = setup();
    const manager = client();
    const logDir = join(suite.dir, 'kept-logs');
    await worker({ shell: { killGraceMs: 200, logDir } });
    const task = await manager.spawn({ kind: 'process', command: 'echo kept', cwd: suite.dir });
    const done = await manager.wait(task.id);
    expect(done.logPath?.startsWith(`${logDir}/`)).toBe(true);
    expect(readFileSync(done.logPath!, 'utf8')).toContain('kept');
    expect((await manager.readLog(task.id)).lines).toContain('[stdout] kept');
  });

  it('beginAttempt counts runs and names the worker in one command; a closed task is not brought back', async () => {
    const { connection, keys, store, spawnOne } = await storeSetup();
    const task = await spawnOne();
    expect(await store.beginAttempt(task.id, 'worker-a')).toBe(1);
    expect(await store.beginAttempt(task.id, 'worker-b')).toBe(2);
    expect(await connection.hmget(keys.task(task.id), 'attempts', 'worker')).toEqual(['2', 'worker-b']);
    expect((await store.read(task.id))?.attempts).toBe(2);
    expect(await store.beginAttempt('0b6e4c1e-6a51-4c39-9b0e-3f0b1f5d2a77', 'worker-a')).toBe(0);
    expect(await connection.exists(keys.task('0b6e4c1e-6a51-4c39-9b0e-3f0b1f5d2a77'))).toBe(0);
  });

  it('beginAttempt refuses once a cancel was asked: no run begins behind a client that may end the queued task itself', async () => {
    const { connection, keys, store, spawnOne } = await storeSetup();
    const task = await spawnOne();
    expect(await store.requestCancel(task.id, 'user')).toBe(true);
    expect(await store.beginAttempt(task.id, 'worker-a')).toBe(-1);
    expect(await connection.hmget(keys.task(task.id), 'attempts', 'worker')).toEqual(['0', null]);
  });

  it('readForRun counts a plain first run in the same step, and only that', async () => {
    const { connection, keys, store, spawnOne } = await storeSetup();

    const first = await spawnOne();
    const read = await store.readForRun(first.id, 'worker-a');
    expect(read.begun).toBe(1);
    // The record as it was before the count: the caller decides "restarted" from it.
    expect(read.stored).toMatchObject({ attempts: 0, state: { id: first.id, status: 'queued' } });
    expect(await connection.hmget(keys.task(first.id), 'attempts', 'worker', 'kind', 'status')).toEqual(['1', 'worker-a', 'process', 'queued']);
    // A second look (a redelivered job) is no first run.
    expect((await store.readForRun(first.id, 'worker-b')).begun).toBe(0);
    expect(await connection.hget(keys.task(first.id), 'attempts')).toBe('1');

    // Cancel asked, state moved on (status mirrors every commit), or a record written before
    // `kind`/`status` existed: read only.
    const cancelled = await spawnOne();
    await connection.hset(keys.task(cancelled.id), 'cancel', 'user');
    const started = await spawnOne();
    await store.update(started.id, (state) => {
      state.status = 'running';
      return [];
    });
    expect(await connection.hget(keys.task(started.id), 'status')).toBe('running');
    const legacy = await spawnOne();
    await connection.hdel(keys.task(legacy.id), 'kind', 'status');
    for (const task of [cancelled, started, legacy]) {
      const other = await store.readForRun(task.id, 'worker-a');
      expect(other.begun).toBe(0);
      expect(other.stored?.state.id).toBe(task.id);
      expect(await connection.hget(keys.task(task.id), 'attempts')).toBe('0');
    }
    expect(await store.readForRun('bg_gone_000000000000', 'worker-a')).toEqual({ stored: undefined, begun: 0 });
  });

  it('a cancel steps the version: an update that read the record before it is re-read and sees the flag', async () => {
    const { store, spawnOne } = await storeSetup();
    const task = await spawnOne();
    const before = (await store.read(task.id))!;
    expect(await store.requestCancel(task.id, 'user')).toBe(true);
    const seen: Array<string | undefined> = [];
    await store.update(task.id, (state, current) => {
      seen.push(current.cancel);
      state.lastActivityAt = 1;
      return [];
    }, before);
    // The stale record failed the compare-and-set; the second try read the flag.
    expect(seen).toEqual([undefined, 'user']);
    expect(await store.requestCancel('0b6e4c1e-6a51-4c39-9b0e-3f0b1f5d2a77', 'user')).toBe(false);
    expect(await store.read('0b6e4c1e-6a51-4c39-9b0e-3f0b1f5d2a77')).toBeUndefined();
  });

  it('a cancel that lands while a cron fire finishes ends the task; the fire does not put it back to sleep', async () => {
    const { base, client } = setup();
    const manager = client({ cancelTimeoutMs: 5_000 });
    await manager.start();
    const keys = createTaskKeys('tessera', base.queue);
    const connection = new Redis({ host: '127.0.0.1', port: suite.redis.port });
    const listener = new Redis({ host: '127.0.0.1', port: suite.redis.port });
    suite.cleanups.push(async () => connection.quit(), async () => listener.quit());
    const store = new RedisTaskStore(connection, keys);
    const task = await manager.spawn({ kind: 'scheduled', schedule: '0 0 1 1 *', cwd: suite.dir, task: { kind: 'process', command: 'true', cwd: suite.dir } });
    const published = new Promise<void>((resolve) => listener.on('message', () => resolve()));
    await listener.subscribe(keys.control);
    let cancelling: Promise<IBackgroundTaskState> | undefined;
    const fired = await runScheduledFire({
      job: { id: 'tick-1', data: { taskId: task.id } } as Job<BackgroundJobData>,
      store,
      clock: systemClock,
      execute: () => ({ run: async () => ({ type: 'completed', result: { output: 'done' } }), describeHandle: () => ({}) }) as unknown as TaskExecution,
      executions: new Map(),
      // The client cancels after the fire read the next tick and before it commits: it finds the
      // task running, so it asks the (already finished) run to stop and waits for the end.
      nextRun: async () => {
        cancelling = manager.cancel(task.id, 'enough');
        await published;
        return Date.now() + 60_000;
      },
      removeScheduler: async () => undefined,
      report: (error) => {
        throw error;
      },
      stoppedByShutdown: () => undefined,
      recordGroup: async () => undefined,
      reapGroup: async () => undefined,
    });
    expect(fired).toBe('fired');
    expect(await cancelling).toMatchObject({ status: 'cancelled' });
    expect((await store.read(task.id))?.state.status).toBe('cancelled');
  });

  it("a cron fire's wake commits its tick in the same step, and a fire that throws after waking is recorded failed and sleeps again", async () => {
    const { base, client } = setup();
    const manager = client();
    await manager.start();
    const keys = createTaskKeys('tessera', base.queue);
    const connection = new Redis({ host: '127.0.0.1', port: suite.redis.port });
    suite.cleanups.push(async () => connection.quit());
    const store = new RedisTaskStore(connection, keys);
    const task = await manager.spawn({ kind: 'scheduled', schedule: '0 0 1 1 *', cwd: suite.dir, task: { kind: 'process', command: 'true', cwd: suite.dir } });
    await until(async () => ((await store.read(task.id))?.state.status === 'sleeping' ? true : undefined), 'sleeping');
    // The previous fire's process group, which this fire must not inherit.
    await store.setFields(task.id, { fireTick: 'tick-0', firePid: '999999' });
    const context = (tick: string, execute: () => TaskExecution) => ({
      job: { id: tick, data: { taskId: task.id } } as Job<BackgroundJobData>,
      store,
      clock: systemClock,
      execute,
      executions: new Map<string, TaskExecution>(),
      nextRun: async () => Date.now() + 60_000,
      removeScheduler: async () => undefined,
      report: () => undefined,
      stoppedByShutdown: () => undefined,
      recordGroup: async () => undefined,
      reapGroup: async () => undefined,
    });
    let seenAtStart: unknown;
    const fired = await runScheduledFire(
      context('tick-1', () => {
        // What a worker taking this tick back would find if this one died right now.
        seenAtStart = connection.hmget(keys.task(task.id), 'status', 'fireTick', 'firePid');
        return { run: async () => ({ type: 'completed', result: { output: 'ok' } }), describeHandle: () => ({}) } as unknown as TaskExecution;
      }),
    );
    expect(fired).toBe('fired');
    expect(await seenAtStart).toEqual(['running', 'tick-1', null]);

    const failed = await runScheduledFire(
      context('tick-2', () => {
        throw new Error('runner exploded');
      }),
    );
    expect(failed).toBe('failed');
    const after = (await store.read(task.id))!;
    expect(after.state).toMatchObject({ status: 'sleeping' });
    expect(after.state.nextRunAt).toBeGreaterThan(Date.now());
    expect(await connection.hmget(keys.task(task.id), 'fires', 'failedFires', 'fireTick')).toEqual(['2', '1', 'tick-2']);
    expect((await store.readLog(task.id)).lines.at(-1)).toMatch(/^\[schedule\] fire 2 failed: the worker failed: .*runner exploded.* \(1 failed\); the schedule goes on$/);
    await manager.cancel(task.id, 'done');
  });

  it('cancels a queued task without a worker, and a running one by killing its process group', async () => {
    const { client, worker } = setup();
    const manager = client();
    const marker = join(suite.dir, `queued-ran-${queueNumber}`);
    const queued = await manager.spawn({ kind: 'process', command: `touch ${marker}`, cwd: suite.dir });
    expect(await manager.cancel(queued.id, 'not needed')).toMatchObject({ status: 'cancelled', cancelReason: 'not needed' });
    await worker();
    const sleeper = await manager.spawn({ kind: 'process', command: 'sleep 30 & sleep 31 & echo up; wait', cwd: suite.dir });
    const running = await runningWithPid(manager, sleeper.id);
    await until(async () => (await manager.readLog(sleeper.id)).lines.includes('[stdout] up') || undefined, 'first log line');
    // The worker took the later task; the cancelled one, queued before it, never ran.
    expect(existsSync(marker)).toBe(false);
    expect((await manager.fetch(queued.id))?.status).toBe('cancelled');
    expect(liveGroupMembers(running.pid!)).toBeGreaterThan(1);
    const cancelled = await manager.cancel(sleeper.id, 'stop it');
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelReason: 'stop it' });
    await until(() => liveGroupMembers(running.pid!) === 0 || undefined, 'process group gone');
  });

  it('delivers events in commit order and replays them from a cursor', async () => {
    const { client, worker } = setup();
    const producer = client();
    const observer = client();
    await observer.start();
    const live: string[] = [];
    const frozen: boolean[] = [];
    observer.subscribe((event) => {
      live.push(`${event.type}:${'task' in event ? event.task.status : ''}`);
      // Shared by every listener and the mirror, as the in-process runtime's events are.
      if ('task' in event) frozen.push(Object.isFrozen(event.task) && Object.isFrozen(event.task.metadata));
    });
    await worker();
    const task = await producer.spawn({ kind: 'process', command: 'echo hi', cwd: suite.dir });
    await observer.wait(task.id);
    const all = (await observer.readEvents()).filter((entry) => entry.event.taskId === task.id);
    const types = all.map((entry) => entry.event.type);
    expect(types).toEqual(['background_task_created', 'background_task_started', 'background_task_completed']);
    expect(all.map((entry) => entry.version)).toEqual([1, 2, 3]);
    await until(() => live.length >= 3 || undefined, 'live events');
    expect(live).toEqual(['background_task_created:queued', 'background_task_started:running', 'background_task_completed:completed']);
    expect(frozen).toEqual([true, true, true]);
    // What the mirror hands out is a copy the caller may change.
    const copy = observer.get(task.id)!;
    copy.label = 'changed here';
    expect(observer.get(task.id)?.label).not.toBe('changed here');
    // Replay from the cursor of the first event: everything after it, then live ones.
    const replayed: StreamedTaskEvent[] = [];
    const follower = observer.followEvents(all[0]!.id, (entry) => replayed.push(entry));
    suite.cleanups.push(() => follower.stop());
    await until(() => replayed.length >= 2 || undefined, 'replay');
    expect(replayed.map((entry) => entry.event.type)).toEqual(['background_task_started', 'background_task_completed']);
    const second = await producer.spawn({ kind: 'process', command: 'true', cwd: suite.dir });
    await until(() => replayed.some((entry) => entry.event.taskId === second.id && entry.event.type === 'background_task_completed') || undefined, 'live after replay');
    expect(follower.cursor).toBe(replayed.at(-1)!.id);
  });

  it('commits a run that is over at once in one step, its start and end still two events of their own versions', async () => {
    const { client, worker } = setup({ kinds: ['agent'] });
    const manager = client();
    await manager.start();
    const update = vi.spyOn(RedisTaskStore.prototype, 'update');
    suite.cleanups.push(async () => update.mockRestore());
    await worker({ runners: [new ManualBackgroundTaskRunner({ kind: 'agent', autoResolve: true })], kinds: ['agent'] });
    const task = await manager.spawn({ kind: 'agent', agentType: 'noop', prompt: 'p', cwd: suite.dir });
    expect(await manager.wait(task.id)).toMatchObject({ status: 'completed' });
    const all = (await manager.readEvents()).filter((entry) => entry.event.taskId === task.id);
    expect(all.map((entry) => `${entry.event.type}@${entry.version}`)).toEqual(['background_task_created@1', 'background_task_started@2', 'background_task_completed@3']);
    expect(update.mock.calls.filter(([id]) => id === task.id)).toHaveLength(1);
    // The created and completed snapshots go to Redis as a head only and the scripts append the
    // state's JSON: the stream holds each event's exact JSON, the last one the stored state.
    const raw = new Redis({ port: suite.redis.port });
    suite.cleanups.push(async () => raw.disconnect());
    const texts = ((await raw.xrange(manager.keys.events, '-', '+')) as Array<[string, string[]]>).map(([, fields]) => fields[fields.indexOf('e') + 1]!).filter((text) => text.includes(task.id));
    expect(texts).toHaveLength(3);
    for (const text of texts) expect(JSON.stringify(JSON.parse(text))).toBe(text);
    expect(texts[2]!.endsWith(`"task":${await raw.hget(manager.keys.task(task.id), 'state')}}`)).toBe(true);
    expect(JSON.parse(texts[0]!)).toEqual({ type: 'background_task_created', taskId: task.id, task });
    // The client's copy follows both snapshots (each newer than the last).
    await until(() => manager.get(task.id)?.status === 'completed' || undefined, 'mirror completed');
  });

  it('a cancel racing a worker on a queued task: one landing after the worker read and counted it is a running cancel (started, then stopped), one before never starts the command', async () => {
    const { base, client, worker } = setup({ kinds: ['agent'] });
    const manager = client({ cancelTimeoutMs: 10_000 });
    await manager.start();
    const keys = createTaskKeys('tessera', base.queue);
    const listener = new Redis({ host: '127.0.0.1', port: suite.redis.port });
    suite.cleanups.push(async () => listener.quit());
    const published = new Promise<void>((resolve) => listener.on('message', () => resolve()));
    await listener.subscribe(keys.control);
    const agents = new ManualBackgroundTaskRunner({ kind: 'agent' });
    const realRead = RedisTaskStore.prototype.readForRun;
    const cancels: Array<Promise<IBackgroundTaskState>> = [];
    const read = vi.spyOn(RedisTaskStore.prototype, 'readForRun').mockImplementation(async function (this: RedisTaskStore, taskId, workerId) {
      if (cancels.length === 1) {
        // Second task: the cancel lands before the worker's read.
        cancels.push(manager.cancel(taskId, 'before the read'));
        await cancels[1];
        return realRead.call(this, taskId, workerId);
      }
      // First task: the cancel lands after the worker's read (which counted the attempt), before
      // it started the runner: the client decides (ends it itself, or asks the worker) first.
      const result = await realRead.call(this, taskId, workerId);
      cancels.push(manager.cancel(taskId, 'changed my mind'));
      await Promise.race([cancels[0], published]);
      return result;
    });
    suite.cleanups.push(async () => read.mockRestore());
    await worker({ runners: [agents], kinds: ['agent'], concurrency: 1 });
    const types = async (taskId: string) => (await manager.readEvents()).filter((entry) => entry.event.taskId === taskId).map((entry) => entry.event.type);

    const taken = await manager.spawn({ kind: 'agent', agentType: 'noop', prompt: 'p', cwd: suite.dir });
    await until(() => cancels.length >= 1 || undefined, 'the first cancel');
    expect(await cancels[0]).toMatchObject({ status: 'cancelled', cancelReason: 'changed my mind' });
    // Never `queued → cancelled` with the command started behind it: the run started and was stopped.
    expect(agents.runs).toHaveLength(1);
    expect(agents.runs[0]!.cancelCalls).toEqual(['changed my mind']);
    expect(await types(taken.id)).toEqual(['background_task_created', 'background_task_started', 'background_task_cancelled']);

    const untouched = await manager.spawn({ kind: 'agent', agentType: 'noop', prompt: 'p', cwd: suite.dir });
    await until(() => cancels.length >= 2 || undefined, 'the second cancel');
    expect(await cancels[1]).toMatchObject({ status: 'cancelled', cancelReason: 'before the read' });
    expect(await manager.wait(untouched.id)).toMatchObject({ status: 'cancelled' });
    // The command never ran: no runner start, and the record went from queued straight to cancelled.
    expect(agents.runs).toHaveLength(1);
    expect(await types(untouched.id)).toEqual(['background_task_created', 'background_task_cancelled']);
    expect((await manager.fetch(untouched.id))?.startedAt).toBeUndefined();
  });

  it("holds a runner's progress until the run's start is committed, whether the run then ends at once or later", async () => {
    const { client, worker } = setup({ kinds: ['agent'] });
    const manager = client();
    await manager.start();
    const runner = {
      kind: 'agent' as const,
      start({ taskId, request, emit }: { taskId: string; request: { prompt?: string }; emit: (event: { type: 'tool_start'; toolName: string; toolCallId: string }) => void }) {
        // Progress before start() has even returned.
        emit({ type: 'tool_start', toolName: 'Read', toolCallId: 'c1' });
        const later = request.prompt === 'later';
        return { taskId, result: later ? new Promise<{ output: string }>((resolve) => setTimeout(() => resolve({ output: 'x' }), 50)) : Promise.resolve({ output: 'x' }), cancel: async () => undefined };
      },
    };
    // The worker's own commits (the ones given the record it read) are slowed down, so progress
    // committed without waiting for the start would land first.
    const update = RedisTaskStore.prototype.update;
    const slowed = vi.spyOn(RedisTaskStore.prototype, 'update').mockImplementation(async function (this: RedisTaskStore, ...args: Parameters<RedisTaskStore['update']>) {
      if (args[2] !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      return update.apply(this, args);
    });
    suite.cleanups.push(async () => slowed.mockRestore());
    await worker({ runners: [runner as never], kinds: ['agent'] });
    for (const prompt of ['now', 'later']) {
      const task = await manager.spawn({ kind: 'agent', agentType: 'noop', prompt, cwd: suite.dir });
      expect(await manager.wait(task.id)).toMatchObject({ status: 'completed' });
      const all = (await manager.readEvents()).filter((entry) => entry.event.taskId === task.id);
      expect(all.map((entry) => entry.event.type), prompt).toEqual(['background_task_created', 'background_task_started', 'background_task_tool_start', 'background_task_completed']);
      const versions = all.map((entry) => entry.version);
      expect(versions, prompt).toEqual([...versions].sort((a, b) => a - b));
    }
  });

  it('lets held progress through when committing the start fails, and enqueues only the task id', async () => {
    const { base, client, worker } = setup({ kinds: ['agent'] });
    const manager = client();
    await manager.start();
    let finish!: () => void;
    const runner = {
      kind: 'agent' as const,
      start({ taskId, emit }: { taskId: string; emit: (event: { type: 'tool_start'; toolName: string; toolCallId: string }) => void }) {
        emit({ type: 'tool_start', toolName: 'Read', toolCallId: 'c1' });
        return { taskId, result: new Promise<{ output: string }>((resolve) => (finish = () => resolve({ output: 'x' }))), cancel: async () => undefined };
      },
    };
    // The worker's start commit (the one given the record it read) fails once.
    const update = RedisTaskStore.prototype.update;
    let failed = false;
    const failing = vi.spyOn(RedisTaskStore.prototype, 'update').mockImplementation(async function (this: RedisTaskStore, ...args: Parameters<RedisTaskStore['update']>) {
      if (args[2] !== undefined && !failed) {
        failed = true;
        throw new Error('Redis went away');
      }
      return update.apply(this, args);
    });
    suite.cleanups.push(async () => failing.mockRestore());
    await worker({ runners: [runner as never], kinds: ['agent'], onError: () => undefined });
    const task = await manager.spawn({ kind: 'agent', agentType: 'noop', prompt: 'p', cwd: suite.dir });
    const keys = createTaskKeys('tessera', base.queue);
    const queue = new Queue(keys.queueName('agent'), { connection: base.connection, prefix: keys.bullPrefix });
    suite.cleanups.push(() => queue.close());
    const job = await queue.getJob(task.id);
    await until(async () => ((await manager.readEvents()).some((entry) => entry.event.taskId === task.id && entry.event.type === 'background_task_tool_start') ? true : undefined), 'held progress committed');
    finish();
    expect(failed).toBe(true);
    expect(job?.data).toEqual({ taskId: task.id });
    // The run is stopped and the task ends failed with the reason: never left queued behind a failed job.
    const ended = await manager.wait(task.id);
    expect(ended.status).toBe('failed');
    expect(ended.error?.message).toContain('Redis went away');
  });

  it('swaps in for backgroundRuntime(): BackgroundTasks spawn, readOutput, stop and list through a kernel', async () => {
    const { base, worker } = setup();
    await worker();
    const kernel = await createKernel({ plugins: [bullmqBackgroundRuntime(base)] });
    suite.cleanups.push(() => kernel.shutdown());
    const tasks = kernel.get(BackgroundTasks);
    const ticket = await tasks.spawn({ kind: 'process', command: 'echo ready; sleep 30', cwd: suite.dir, description: 'server', sessionId: 's1' });
    const read = await until(async () => {
      const output = await tasks.readOutput!(ticket.id, 0, 's1');
      return output.lines.length > 0 ? output : undefined;
    }, 'output');
    expect(read).toMatchObject({ status: 'running', lines: ['[stdout] ready'], nextLine: 1, dropped: false });
    await expect(tasks.readOutput!(ticket.id, 0, 'other-session')).rejects.toMatchObject({ code: 'background_task_not_found' });
    expect(await tasks.stop!(ticket.id, 's1')).toBe('cancelled');
    expect(kernel.get(BackgroundTaskManagerToken).get(ticket.id)?.status ?? 'cancelled').toBe('cancelled');
    await until(() => tasks.list!('s1')[0]?.status === 'cancelled' || undefined, 'list shows cancelled');
    await tasks.close!(ticket.id, 's1');
    await expect(tasks.readOutput!(ticket.id, 0)).rejects.toMatchObject({ code: 'background_task_not_found' });
  });

  it('serves prioritized tasks first', async () => {
    const { client, worker } = setup({ priority: (request) => (request.label === 'urgent' ? 1 : 10) });
    const manager = client();
    const low = await manager.spawn({ kind: 'process', command: 'true', cwd: suite.dir, label: 'later' });
    const high = await manager.spawn({ kind: 'process', command: 'true', cwd: suite.dir, label: 'urgent' });
    await expect(client({ priority: 2.5 }).spawn({ kind: 'process', command: 'true', cwd: suite.dir })).rejects.toMatchObject({ code: 'background_invalid_option' });
    await worker({ concurrency: 1 });
    await manager.wait(low.id);
    await manager.wait(high.id);
    const starts = (await manager.readEvents()).filter((entry) => entry.event.type === 'background_task_started').map((entry) => entry.event.taskId);
    expect(starts).toEqual([high.id, low.id]);
  });

  it('holds a cluster-wide concurrency limit across workers, and a rate limit', async () => {
    const { client, worker } = setup();
    const manager = client();
    await worker({ concurrency: 3, globalConcurrency: { process: 1 } });
    await worker({ concurrency: 3 });
    const tasks = await Promise.all([1, 2, 3, 4].map(() => manager.spawn({ kind: 'process', command: 'sleep 0.2', cwd: suite.dir })));
    for (const task of tasks) await manager.wait(task.id);
    let running = 0;
    let most = 0;
    for (const entry of await manager.readEvents()) {
      if (entry.event.type === 'background_task_started') most = Math.max(most, ++running);
      if (entry.event.type === 'background_task_completed') running -= 1;
    }
    expect(most).toBe(1);

    const limited = setup();
    const rated = limited.client();
    await limited.worker({ concurrency: 4, rateLimit: { process: { max: 1, durationMs: 600 } } });
    const quick = await Promise.all([1, 2, 3].map(() => rated.spawn({ kind: 'process', command: 'true', cwd: suite.dir })));
    const started: number[] = [];
    for (const task of quick) started.push(Number((await rated.wait(task.id)).startedAt));
    started.sort((a, b) => a - b);
    // One start per 600 ms window: the third cannot start before two windows have passed.
    expect(started[2]! - started[0]!).toBeGreaterThanOrEqual(1000);
  });

  it('keeps every key under its prefix (one with ":" too, as the Redis session store takes): task records, logs, events and the BullMQ queues', async () => {
    const queue = `prefixed${++queueNumber}`;
    const base = { connection: { host: '127.0.0.1', port: suite.redis.port }, queue, prefix: 'acme:test' };
    for (const bad of ['acme:', ':acme', 'ac me', '']) expect(() => new BullmqBackgroundTaskManager({ ...base, prefix: bad })).toThrow(expect.objectContaining({ code: 'background_invalid_option' }));
    expect(() => new BullmqBackgroundTaskManager({ ...base, queue: 'a:b' })).toThrow(expect.objectContaining({ code: 'background_invalid_option' }));
    const manager = new BullmqBackgroundTaskManager(base);
    suite.cleanups.push(() => manager.shutdown());
    const running = await startBackgroundWorker({ ...base, kinds: ['process', 'scheduled'], shell: { killGraceMs: 200 } });
    suite.cleanups.push(() => running.shutdown({ graceMs: 0 }));
    const task = await manager.spawn({ kind: 'process', command: 'echo keyed', cwd: suite.dir });
    expect((await manager.wait(task.id)).status).toBe('completed');
    const cron = await manager.spawn({ kind: 'scheduled', schedule: '0 0 1 1 *', cwd: suite.dir, task: { kind: 'process', command: 'true', cwd: suite.dir } });
    const peek = new Redis({ host: '127.0.0.1', port: suite.redis.port });
    try {
      const keys = (await peek.keys('*')).filter((key) => key.includes(queue));
      expect(keys.length).toBeGreaterThan(3);
      expect(keys.filter((key) => !key.startsWith('acme:test:'))).toEqual([]);
      expect(keys.some((key) => key.startsWith('acme:test:bull:'))).toBe(true);
      expect(keys.some((key) => key.includes(':events'))).toBe(true);
    } finally {
      peek.disconnect();
    }
    await manager.cancel(cron.id, 'done');
  });

  it('a worker that stops with a grace period lets a running task finish, and cancels one still running when the grace ends', async () => {
    const { client, worker } = setup();
    const manager = client();
    const leaving = await worker({ concurrency: 2, kinds: ['process'] });
    const short = await manager.spawn({ kind: 'process', command: 'sleep 0.4; echo short-done', cwd: suite.dir });
    const long = await manager.spawn({ kind: 'process', command: 'sleep 30; echo never', cwd: suite.dir });
    await until(async () => ((await Promise.all([short, long].map((task) => manager.fetch(task.id)))).every((state) => state?.status === 'running') ? true : undefined), 'both running');
    await leaving.shutdown({ graceMs: 1500 });
    expect(await manager.wait(short.id)).toMatchObject({ status: 'completed', exitCode: 0 });
    expect((await manager.readLog(short.id)).lines).toContain('[stdout] short-done');
    expect((await manager.wait(long.id)).status).toBe('cancelled');
    expect((await manager.readLog(long.id)).lines).not.toContain('[stdout] never');
  });

  it('hands running tasks back to the queue when a worker stops with unfinished: hand-back', async () => {
    const { client, worker } = setup();
    const manager = client();
    const leaving = await worker({ concurrency: 1, kinds: ['process'] });
    const task = await manager.spawn({ kind: 'process', command: 'echo run; sleep 1; echo end', cwd: suite.dir });
    await until(async () => ((await manager.fetch(task.id))?.status === 'running' ? true : undefined), 'running on the first worker');
    await leaving.shutdown({ graceMs: 0, unfinished: 'hand-back' });
    await worker({ concurrency: 1, kinds: ['process'] });
    const done = await manager.wait(task.id);
    expect(done).toMatchObject({ status: 'completed', exitCode: 0 });
    const lines = (await manager.readLog(task.id)).lines;
    expect(lines.some((line) => line.includes('handed back to the queue'))).toBe(true);
    expect(lines.at(-2)).toBe('[stdout] end');
  });

  it('hand-back does not re-queue a run that already ended: the grace ends while its last log page is being copied, and its real outcome is kept', async () => {
    const { client, worker } = setup({ kinds: ['agent'] });
    const manager = client();
    await manager.start();
    let finish!: () => void;
    let finished = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let lastPageReached!: () => void;
    const lastPage = new Promise<void>((resolve) => (lastPageReached = resolve));
    let starts = 0;
    const cancels: string[] = [];
    const runner = {
      kind: 'agent' as const,
      start({ taskId }: { taskId: string }) {
        starts += 1;
        return {
          taskId,
          result: new Promise<{ output: string }>((resolve) => (finish = () => ((finished = true), resolve({ output: 'all done' })))),
          cancel: async (reason?: string) => void cancels.push(reason ?? ''),
          // The copy of the log after the run ended waits: the window hand-back must not reach into.
          readLog: async ({ offset }: { offset: number }) => {
            if (finished) {
              lastPageReached();
              await released;
            }
            return { lines: [], cursor: { offset }, nextCursor: { offset }, hasMore: false, truncated: false, totalLines: 0 };
          },
        };
      },
    };
    const leaving = await worker({ runners: [runner as never], kinds: ['agent'], concurrency: 1 });
    const task = await manager.spawn({ kind: 'agent', agentType: 'noop', prompt: 'p', cwd: suite.dir });
    await until(async () => ((await manager.fetch(task.id))?.status === 'running' ? true : undefined), 'running');
    finish();
    await lastPage;
    // graceMs 0: the run is marked for hand-back and stopped at once, after it already completed.
    const closing = leaving.shutdown({ graceMs: 0, unfinished: 'hand-back' });
    expect(cancels).toEqual(['handed back: worker shutdown']);
    release();
    await closing;
    expect(await manager.fetch(task.id)).toMatchObject({ status: 'completed', output: 'all done' });
    expect((await manager.readLog(task.id)).lines.some((line) => line.includes('handed back'))).toBe(false);
    expect(starts).toBe(1);
  });

  it('a worker whose job lock is taken from it stops the run (its process group killed) and records no end', async () => {
    const { base, client, worker } = setup();
    const manager = client();
    const errors: string[] = [];
    await worker({ kinds: ['process'], onError: (error, context) => void errors.push(`${context.phase}: ${String((error as Error).message)}`) });
    const task = await manager.spawn({ kind: 'process', command: 'echo up; sleep 30; echo never', cwd: suite.dir });
    const running = await runningWithPid(manager, task.id);
    await until(async () => (await manager.readLog(task.id)).lines.includes('[stdout] up') || undefined, 'first log line');
    // Another worker holds the job now (as after this one stalled past lockDurationMs): its next
    // lock renewal fails.
    const keys = createTaskKeys('tessera', base.queue);
    const raw = new Redis({ host: '127.0.0.1', port: suite.redis.port });
    suite.cleanups.push(async () => raw.quit());
    await raw.set(`${keys.bullPrefix}:${keys.queueName('process')}:${task.id}:lock`, 'another-worker-token');
    await until(() => liveGroupMembers(running.pid!) === 0 || undefined, 'the stale run stopped', 10_000);
    await until(() => errors.some((line) => line.startsWith('job lock: lost the lock')) || undefined, 'the loss reported');
    // Nothing of the stopped run reached Redis: the task is the other worker's to end.
    const state = await manager.fetch(task.id);
    expect(state).toMatchObject({ status: 'running' });
    expect((await manager.readLog(task.id)).lines).toEqual(['[stdout] up']);
    expect((await manager.readEvents()).filter((entry) => entry.event.taskId === task.id).map((entry) => entry.event.type)).toEqual(['background_task_created', 'background_task_started']);
  });

  it("deletes a run's log file on the worker once its log is in Redis, and the worker's log directory when it shuts down", async () => {
    const { client, worker } = setup();
    const manager = client();
    // The worker runs in this process: its own log directory is the new tessera-worker-<pid>-… one.
    const ownDirs = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith(`tessera-worker-${process.pid}-`));
    const before = new Set(ownDirs());
    const leaving = await worker({ kinds: ['process'] });
    const task = await manager.spawn({ kind: 'process', command: 'echo kept-in-redis', cwd: suite.dir });
    const done = await manager.wait(task.id);
    expect(done.status).toBe('completed');
    const logDir = join(tmpdir(), ownDirs().find((name) => !before.has(name))!);
    // The file is gone once its lines are in Redis, so the state names none.
    expect(done.logPath).toBeUndefined();
    await until(() => readdirSync(logDir).length === 0 || undefined, 'the log file deleted');
    expect((await manager.readLog(task.id)).lines).toEqual(['[stdout] kept-in-redis', '[exit] exit code 0']);
    const running = await manager.spawn({ kind: 'process', command: 'sleep 30', cwd: suite.dir });
    await until(async () => ((await manager.fetch(running.id))?.status === 'running' ? true : undefined), 'running');
    expect(readdirSync(logDir)).toHaveLength(1);
    await leaving.shutdown({ graceMs: 0 });
    expect((await manager.fetch(running.id))?.status).toBe('cancelled');
    expect(existsSync(logDir)).toBe(false);
  });

  it('send reaches the worker running the task (agent input, shell stdin); refused with the reason for queued, finished and unknown tasks', async () => {
    const { client, worker } = setup();
    const manager = client();
    const agents = new ManualBackgroundTaskRunner({ kind: 'agent' });
    const queued = await manager.spawn({ kind: 'agent', agentType: 'general-purpose', prompt: 'wait', cwd: suite.dir });
    await expect(manager.send(queued.id, 'too early')).rejects.toMatchObject({ code: 'background_send_unsupported' });
    await worker({ runners: [agents], kinds: ['agent', 'process'] });
    await until(async () => ((await manager.fetch(queued.id))?.status === 'running' ? true : undefined), 'agent running');
    await manager.send(queued.id, 'follow-up question');
    expect(agents.runs[0]!.sent).toEqual(['follow-up question']);
    agents.runs[0]!.resolve({ output: 'answered' });
    expect(await manager.wait(queued.id)).toMatchObject({ status: 'completed', output: 'answered' });
    await expect(manager.send(queued.id, 'late')).rejects.toMatchObject({ code: 'background_task_not_running' });

    // A shell task takes input on stdin, written by the worker that runs it.
    const shell = await manager.spawn({ kind: 'process', command: 'read line; echo "got:$line"', cwd: suite.dir });
    await until(async () => ((await manager.fetch(shell.id))?.status === 'running' ? true : undefined), 'shell running');
    await manager.send(shell.id, 'hello from another process\n');
    expect(await manager.wait(shell.id)).toMatchObject({ status: 'completed', output: 'got:hello from another process\n' });
    await expect(manager.send('bg_missing', 'x')).rejects.toMatchObject({ code: 'background_task_not_found' });
    // An id that is not a task id never names a Redis key, whichever operation it comes through.
    for (const bad of ['../x', 'a:b', 'x*', '']) {
      await expect(manager.fetch(bad), bad).rejects.toMatchObject({ code: 'background_invalid_task_id' });
      await expect(manager.cancel(bad), bad).rejects.toMatchObject({ code: 'background_invalid_task_id' });
      await expect(manager.readLog(bad), bad).rejects.toMatchObject({ code: 'background_invalid_task_id' });
      await expect(manager.send(bad, 'x'), bad).rejects.toMatchObject({ code: 'background_invalid_task_id' });
    }
  });

  it('subagent jobs (SubagentLauncher) run on the workers when the BullMQ runtime is composed', async () => {
    const { base, worker } = setup();
    const agents = new ManualBackgroundTaskRunner({ kind: 'agent' });
    await worker({ runners: [agents], kinds: ['agent'] });
    const kernel = await createKernel({ plugins: [bullmqBackgroundRuntime(base), subagents({ discover: false, worktree: false })] });
    suite.cleanups.push(() => kernel.shutdown());
    const launched = kernel.get(SubagentLauncher).launch({ prompt: 'look around', agentType: 'Explore', parentSessionId: 's1', cwd: suite.dir, signal: new AbortController().signal });
    // The job reached the worker process's agent runner, with the request the launcher built.
    const run = await until(() => agents.runs[0], 'agent job on the worker');
    expect(run.request).toMatchObject({ kind: 'agent', agentType: 'Explore', prompt: 'look around', parentSessionId: 's1', cwd: suite.dir });
    run.resolve({ output: 'found three files' });
    expect(await launched).toMatchObject({ text: 'found three files' });
    // The task is in Redis, visible to any client of the queue.
    const state = await kernel.get(BullmqBackgroundTaskManagerToken).fetch(run.taskId);
    expect(state).toMatchObject({ kind: 'agent', status: 'completed' });
  });
});
