import { describe, expect, it } from 'vitest';
import { CoalescedRuns } from './coalesced-runs.js';

/** A run that ends when the test says so, recording when each run started. */
function controlledRuns() {
  const started: string[] = [];
  const finishers: Array<(error?: Error) => void> = [];
  const runs = new CoalescedRuns(
    (key) =>
      new Promise<void>((resolve, reject) => {
        started.push(key);
        finishers.push((error) => (error ? reject(error) : resolve()));
      }),
  );
  const finish = (index: number, error?: Error) => finishers[index]!(error);
  return { runs, started, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CoalescedRuns', () => {
  it('gives callers that arrive during a run one shared next run that starts after it', async () => {
    const { runs, started, finish } = controlledRuns();
    const settled: string[] = [];
    const first = runs.request('/d').then(() => settled.push('first'));
    const waiting = Array.from({ length: 50 }, (_, index) => runs.request('/d').then(() => settled.push(`late-${index}`)));
    await tick();
    expect(started).toEqual(['/d']);
    finish(0);
    await first;
    await tick();
    // The late callers are not served by the run that began before them.
    expect(settled).toEqual(['first']);
    expect(started).toEqual(['/d', '/d']);
    finish(1);
    await Promise.all(waiting);
    expect(settled).toHaveLength(51);
    expect(runs.active).toBe(0);
  });

  it('keeps keys apart, starts anew once idle, and hands a failure to the callers of that run only', async () => {
    const { runs, started, finish } = controlledRuns();
    const a = runs.request('a');
    const b = runs.request('b');
    expect(started).toEqual(['a', 'b']);
    const lateA = runs.request('a');
    finish(0, new Error('disk gone'));
    await expect(a).rejects.toThrow('disk gone');
    await tick();
    // The queued caller still gets a run of its own, which succeeds.
    expect(started).toEqual(['a', 'b', 'a']);
    finish(2);
    await expect(lateA).resolves.toBeUndefined();
    finish(1);
    await b;
    expect(runs.active).toBe(0);
    const again = runs.request('a');
    expect(started).toEqual(['a', 'b', 'a', 'a']);
    finish(3);
    await again;
  });

  it('turns a run that throws synchronously into a rejection', async () => {
    const runs = new CoalescedRuns(() => {
      throw new Error('boom');
    });
    await expect(runs.request('x')).rejects.toThrow('boom');
    expect(runs.active).toBe(0);
  });

  it('serves a change made before a run began with that run: one already done, or one under way', async () => {
    const { runs, started, finish } = controlledRuns();
    const changedEarly = performance.now();
    const first = runs.request('/d');
    await tick();
    // Under way and begun after the change: joined, no second run.
    const joined = runs.request('/d', changedEarly);
    expect(started).toEqual(['/d']);
    finish(0);
    await Promise.all([first, joined]);
    // Done and begun after the change: nothing to run.
    await runs.request('/d', changedEarly);
    expect(started).toEqual(['/d']);
    // A change after that run began needs a new one.
    const later = runs.request('/d', performance.now());
    expect(started).toEqual(['/d', '/d']);
    finish(1);
    await later;
  });

  it('waits for the next run when the change came after the running one began', async () => {
    const { runs, started, finish } = controlledRuns();
    const first = runs.request('/d');
    const changed = performance.now();
    const waiting = runs.request('/d', changed);
    let served = false;
    void waiting.then(() => (served = true));
    finish(0);
    await first;
    await tick();
    expect(served).toBe(false);
    expect(started).toEqual(['/d', '/d']);
    finish(1);
    await waiting;
    expect(runs.active).toBe(0);
  });

  it('never counts a failed run as covering a change', async () => {
    const { runs, started, finish } = controlledRuns();
    const changed = performance.now();
    const first = runs.request('/d');
    finish(0, new Error('EIO'));
    await expect(first).rejects.toThrow('EIO');
    await tick();
    const retry = runs.request('/d', changed);
    expect(started).toEqual(['/d', '/d']);
    finish(1);
    await expect(retry).resolves.toBeUndefined();
  });
});
