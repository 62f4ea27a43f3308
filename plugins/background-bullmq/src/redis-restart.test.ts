import { describe, expect, it } from 'vitest';
import { startBackgroundWorker } from './background-worker.js';
import { BullmqBackgroundTaskManager } from './bullmq-background-task-manager.js';
import { hasRedisServer, until, useRedisSuite } from './testing/redis-server.test-helper.js';

// Redis goes away mid-run and comes back (its append-only file keeps the data): clients and
// workers reconnect, running tasks end (completed, or failed with a message that says why),
// and new tasks run. Nothing hangs, nothing crashes.
const suite = useRedisSuite('tessera-bullmq-restart-', { appendonly: true });

describe.runIf(hasRedisServer && process.platform === 'linux')('Redis restarted mid-run (real redis-server)', () => {
  it('a client whose first connection finds Redis down reports it, and works once Redis is back', async () => {
    const errors: string[] = [];
    const manager = new BullmqBackgroundTaskManager({ connection: { host: '127.0.0.1', port: suite.redis.port, retryStrategy: () => 100 }, queue: 'late-redis', onError: (error) => errors.push(String(error)) });
    const back = suite.redis.restart(1500);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await expect(manager.spawn({ kind: 'process', command: 'true', cwd: suite.dir })).rejects.toThrow();
      await back;
      const state = await until(() => manager.spawn({ kind: 'process', command: 'true', cwd: suite.dir }).catch(() => undefined), 'a spawn once Redis is back');
      expect(state.status).toBe('queued');
      expect(manager.get(state.id)?.id).toBe(state.id);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await back.catch(() => undefined);
      await manager.shutdown();
    }
  });

  it('tasks running across the restart end cleanly, and the cluster keeps working', async () => {
    const base = { connection: { host: '127.0.0.1', port: suite.redis.port }, queue: 'restart' };
    const errors: string[] = [];
    const worker = await startBackgroundWorker({ ...base, lockDurationMs: 5000, stalledIntervalMs: 1000, shell: { killGraceMs: 100 }, onError: (error) => errors.push(String(error)) });
    const manager = new BullmqBackgroundTaskManager({ ...base, onError: (error) => errors.push(String(error)) });
    try {
      const tasks = await Promise.all([1, 2, 3].map((n) => manager.spawn({ kind: 'process', command: `echo begin-${n}; sleep 1.5; echo end-${n}`, cwd: suite.dir })));
      await until(async () => {
        const states = await Promise.all(tasks.map((task) => manager.fetch(task.id)));
        return states.every((state) => state?.status === 'running') || undefined;
      }, 'all three running');
      await suite.redis.restart(700);
      const ended = await Promise.all(tasks.map((task) => until(async () => {
        const state = await manager.fetch(task.id).catch(() => undefined);
        return state && ['completed', 'failed', 'cancelled'].includes(state.status) ? state : undefined;
      }, `task ${task.id} to end after the restart`, 30_000)));
      for (const [index, state] of ended.entries()) {
        if (state.status === 'completed') {
          const lines = (await manager.readLog(state.id)).lines;
          expect(lines.filter((line) => line === `[stdout] end-${index + 1}`)).toHaveLength(1);
        } else {
          expect(state.error?.message ?? '').not.toBe('');
        }
      }
      // The outage was noticed and reported, not swallowed.
      expect(errors.some((message) => /ECONNREFUSED|Connection is closed|ECONNRESET|connect/i.test(message))).toBe(true);
      const after = await manager.spawn({ kind: 'process', command: 'echo after-restart', cwd: suite.dir });
      expect(await manager.wait(after.id)).toMatchObject({ status: 'completed', output: 'after-restart\n' });
    } finally {
      await worker.shutdown({ graceMs: 0 });
      await manager.shutdown();
    }
  }, 60_000);
});
