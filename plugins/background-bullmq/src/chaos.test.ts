import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { BullmqBackgroundTaskManager } from './bullmq-background-task-manager.js';
import { hasRedisServer, until, useRedisSuite } from './testing/redis-server.test-helper.js';

// Chaos: 50 trials, each SIGKILLs the worker process that is running a task. Afterwards every
// acknowledged task has ended, and none ran twice (no retry budget: a killed run is not repeated).
const here = dirname(fileURLToPath(import.meta.url));
const CHILD = join(here, 'testing', 'worker-child.mjs');
const TRIALS = 50;

const suite = useRedisSuite('tessera-bullmq-chaos-', { build: true });

describe.runIf(hasRedisServer && process.platform === 'linux')('chaos: workers SIGKILLed mid-task (real redis-server)', () => {
  it(`${TRIALS} trials: every task ends, none is lost, none runs twice`, async () => {
    const base = { connection: { host: '127.0.0.1', port: suite.redis.port }, queue: 'chaos' };
    const options = JSON.stringify({ ...base, concurrency: 2, lockDurationMs: 1000, stalledIntervalMs: 300, shell: { killGraceMs: 100 } });
    const children = new Map<number, ChildProcess>();
    const startChild = (): Promise<ChildProcess> =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [CHILD, options], { stdio: ['ignore', 'pipe', 'ignore'] });
        children.set(child.pid!, child);
        child.once('exit', () => children.delete(child.pid!));
        child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve(child));
        child.once('exit', (code, signal) => reject(new Error(`worker child exited (${code ?? signal}) before it was ready`)));
      });
    const raw = new Redis({ ...base.connection });
    const manager = new BullmqBackgroundTaskManager(base);
    const spawned: string[] = [];
    let kills = 0;
    try {
      await Promise.all([startChild(), startChild(), startChild()]);
      for (let trial = 0; trial < TRIALS; trial += 1) {
        const batch = await Promise.all(
          [0, 1].map(async (n) => (await manager.spawn({ kind: 'process', command: `echo run >> runs-${trial}-${n}; sleep 0.4`, cwd: suite.dir, label: `${trial}-${n}` })).id),
        );
        spawned.push(...batch);
        // The worker that runs one of this batch's tasks right now.
        const victim = await until(async () => {
          for (const id of batch) {
            const state = await manager.fetch(id);
            if (state?.status !== 'running') continue;
            const workerId = await raw.hget(manager.keys.task(id), 'worker');
            const pid = Number(workerId?.split(':')[1]);
            if (children.has(pid)) return children.get(pid);
          }
          return undefined;
        }, `a running task in trial ${trial}`);
        victim.kill('SIGKILL');
        kills += 1;
        // Keep three workers; the replacement's start overlaps the next trial.
        void startChild().catch(() => undefined);
        if (children.size < 2) await startChild();
      }
      const ended = await Promise.all(spawned.map((id) => until(async () => {
        const state = await manager.fetch(id);
        return state && ['completed', 'failed', 'cancelled'].includes(state.status) ? state : undefined;
      }, `task ${id} to end`, 60_000)));
      expect(ended).toHaveLength(TRIALS * 2);
      expect(kills).toBe(TRIALS);
      let staleFailures = 0;
      for (const state of ended) {
        const runs = (() => {
          try {
            return readFileSync(join(suite.dir, `runs-${state.label}`), 'utf8').split('\n').filter(Boolean).length;
          } catch {
            return 0;
          }
        })();
        expect(runs, `task ${state.label} ran ${runs} times`).toBeLessThanOrEqual(1);
        if (state.status === 'completed') expect(runs).toBe(1);
        else {
          expect(state).toMatchObject({ status: 'failed', timeoutReason: 'stale_worker' });
          staleFailures += 1;
        }
      }
      // Each kill hit a running task, so at least one task per trial ended stale.
      expect(staleFailures).toBeGreaterThanOrEqual(TRIALS);
    } finally {
      for (const child of children.values()) child.kill('SIGKILL');
      await manager.shutdown();
      raw.disconnect();
    }
  }, 300_000);
});
