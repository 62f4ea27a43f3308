import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startBackgroundWorker, type BackgroundWorker } from './background-worker.js';
import { BullmqBackgroundTaskManager } from './bullmq-background-task-manager.js';
import { createTaskKeys } from './redis-keys.js';
import { RedisTaskStore } from './task-store.js';
import { hasRedisServer, until, useRedisSuite } from './testing/redis-server.test-helper.js';

// A worker that stops with `unfinished: 'hand-back'` puts its running jobs back on the queue.
// The run it stopped keeps its attempt number for good (attempt numbers fence every commit and
// log line, so one is never given to two runs); the hand-back is counted apart and does not eat
// the task's `retries`.

const suite = useRedisSuite('tessera-bullmq-hand-back-');
let queueNumber = 0;

/** A fresh queue with a client (no retry budget), a task store of its own, and workers on demand. */
async function setup() {
  const base = { connection: { host: '127.0.0.1', port: suite.redis.port }, queue: `h${++queueNumber}` };
  const manager = new BullmqBackgroundTaskManager(base);
  suite.cleanups.push(() => manager.shutdown());
  await manager.start();
  const connection = new Redis({ ...base.connection, lazyConnect: true });
  suite.cleanups.push(async () => connection.quit());
  const keys = createTaskKeys('tessera', base.queue);
  const store = new RedisTaskStore(connection, keys);
  const worker = async (workerId: string): Promise<BackgroundWorker> => {
    const started = await startBackgroundWorker({ ...base, workerId, kinds: ['process'], concurrency: 1, shell: { killGraceMs: 200 }, lockDurationMs: 2000, stalledIntervalMs: 500 });
    suite.cleanups.push(() => started.shutdown({ graceMs: 0 }));
    return started;
  };
  const counts = async (taskId: string) => {
    const stored = await store.read(taskId);
    return { attempts: stored?.attempts, handBacks: stored?.handBacks };
  };
  const lines = async (taskId: string) => (await manager.readLog(taskId)).lines;
  /** Waits until the task's command printed `marker` `times` times (its process runs, its log is in Redis). */
  const printed = (taskId: string, marker: string, times: number) =>
    until(async () => ((await lines(taskId)).filter((line) => line === `[stdout] ${marker}`).length >= times ? true : undefined), `${marker} printed ${times} times`);
  return { manager, store, worker, counts, lines, printed };
}

describe.runIf(hasRedisServer && process.platform === 'linux')('hand-back (real redis-server)', () => {
  it('the run after a hand-back gets a higher attempt number, and the handed-back run can no longer commit or log', async () => {
    const { manager, store, worker, counts, lines, printed } = await setup();
    const leaving = await worker('leaving');
    const task = await manager.spawn({ kind: 'process', command: 'echo run; sleep 2; echo end', cwd: suite.dir });
    await printed(task.id, 'run', 1);
    const old = (await store.read(task.id))!.attempts;
    expect(old).toBe(1);
    await leaving.shutdown({ graceMs: 0, unfinished: 'hand-back' });
    await worker('taking-over');
    await printed(task.id, 'run', 2);

    // What the handed-back run could still send late (progress, log lines) is fenced off.
    const late = await store.update(task.id, (state) => {
      state.currentAction = 'late progress of the handed-back run';
      return [];
    }, undefined, old);
    expect(late).toBeUndefined();
    expect(await store.appendLog(task.id, ['late line of the handed-back run'], old)).toBe(-1);
    expect((await store.read(task.id))!.attempts).toBeGreaterThan(old);
    expect(await counts(task.id)).toEqual({ attempts: 2, handBacks: 1 });

    expect(await manager.wait(task.id)).toMatchObject({ status: 'completed', exitCode: 0 });
    const done = await manager.fetch(task.id);
    expect(done?.currentAction).toBeUndefined();
    const log = await lines(task.id);
    expect(log).not.toContain('late line of the handed-back run');
    expect(log.filter((line) => line === '[stdout] end')).toHaveLength(1);
    expect(log.some((line) => line.startsWith('[worker] attempt 2 on taking-over'))).toBe(true);
  });

  it('a task with retries: 0 that is handed back runs to completion on another worker (the hand-back does not eat its budget)', async () => {
    const { manager, worker, counts, lines, printed } = await setup();
    const leaving = await worker('leaving');
    const task = await manager.spawn({ kind: 'process', command: 'echo run; sleep 1; echo end', cwd: suite.dir });
    await printed(task.id, 'run', 1);
    await leaving.shutdown({ graceMs: 0, unfinished: 'hand-back' });
    expect(await counts(task.id)).toEqual({ attempts: 1, handBacks: 1 });
    await worker('taking-over');
    expect(await manager.wait(task.id)).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(await counts(task.id)).toEqual({ attempts: 2, handBacks: 1 });
    const log = await lines(task.id);
    expect(log.some((line) => line.includes('handed back to the queue'))).toBe(true);
    expect(log.filter((line) => line === '[stdout] end')).toHaveLength(1);
    expect(log.at(-2)).toBe('[stdout] end');
  });

  it('a task handed back again and again still runs, each run with an attempt number of its own', async () => {
    const { manager, worker, counts, lines, printed } = await setup();
    const task = await manager.spawn({ kind: 'process', command: 'echo run; sleep 1; echo end', cwd: suite.dir });
    const handBacks = 3;
    for (let run = 1; run <= handBacks; run += 1) {
      const leaving = await worker(`leaving-${run}`);
      await printed(task.id, 'run', run);
      await leaving.shutdown({ graceMs: 0, unfinished: 'hand-back' });
      expect(await counts(task.id)).toEqual({ attempts: run, handBacks: run });
    }
    await worker('last');
    expect(await manager.wait(task.id)).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(await counts(task.id)).toEqual({ attempts: handBacks + 1, handBacks });
    const log = await lines(task.id);
    expect(log.filter((line) => line === '[stdout] run')).toHaveLength(handBacks + 1);
    expect(log.filter((line) => line === '[stdout] end')).toHaveLength(1);
    for (let attempt = 2; attempt <= handBacks + 1; attempt += 1) expect(log.some((line) => line.startsWith(`[worker] attempt ${attempt} on `))).toBe(true);
  });

  it('a hand-back gives no extra retry: a task with retries: 0 whose next run dies after a hand-back ends stale_worker', async () => {
    const { manager, store, worker, counts, printed } = await setup();
    const leaving = await worker('leaving');
    const task = await manager.spawn({ kind: 'process', command: 'echo run; sleep 1; echo end', cwd: suite.dir });
    await printed(task.id, 'run', 1);
    await leaving.shutdown({ graceMs: 0, unfinished: 'hand-back' });
    // The run after the hand-back starts (its attempt counted) and its worker dies before it ends.
    expect(await store.beginAttempt(task.id, 'dies')).toBe(2);
    await worker('taking-over');
    expect(await manager.wait(task.id)).toMatchObject({ status: 'failed', timeoutReason: 'stale_worker' });
    expect(await counts(task.id)).toEqual({ attempts: 2, handBacks: 1 });
  });
});
