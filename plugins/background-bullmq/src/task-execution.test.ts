import { systemClock } from '@tessera/contracts';
import { ManualBackgroundTaskRunner } from '@tessera/plugin-background';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskExecution } from './task-execution.js';
import type { RedisTaskStore } from './task-store.js';

/** The store calls a run makes when nothing is logged or cancelled: none reach Redis here. */
function quietStore(): RedisTaskStore {
  return {
    getField: async () => null,
    appendLog: async () => 0,
    appendEvent: async () => undefined,
    update: async () => undefined,
  } as unknown as RedisTaskStore;
}

describe('TaskExecution', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a run that ends before its first log flush leaves no timer behind', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const runner = new ManualBackgroundTaskRunner({ kind: 'agent', autoResolve: true });
    const execution = new TaskExecution({
      store: quietStore(),
      taskId: 'bg_1',
      runId: 'bg_1',
      request: { kind: 'agent', agentType: 'noop', prompt: 'noop', cwd: '/' },
      runner,
      clock: systemClock,
      logFlushMs: 100,
      report: (error) => {
        throw error;
      },
    });
    await expect(execution.run()).resolves.toEqual({ type: 'completed', result: { output: '' } });
    // Neither the log-flush wait nor the agent watchdog's idle timer is still pending.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a longer run still flushes its log on the timer while it runs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const runner = new ManualBackgroundTaskRunner({ kind: 'agent' });
    const flushes: number[] = [];
    const store = { ...quietStore(), getField: async () => (flushes.push(Date.now()), null) } as unknown as RedisTaskStore;
    const execution = new TaskExecution({ store, taskId: 'bg_2', runId: 'bg_2', request: { kind: 'agent', agentType: 'noop', prompt: 'noop', cwd: '/' }, runner, clock: systemClock, logFlushMs: 100, report: () => undefined });
    const outcome = execution.run();
    await vi.advanceTimersByTimeAsync(350);
    expect(flushes.length).toBe(3);
    runner.run('bg_2').resolve({ output: 'done' });
    await expect(outcome).resolves.toEqual({ type: 'completed', result: { output: 'done' } });
    expect(vi.getTimerCount()).toBe(0);
  });
});
