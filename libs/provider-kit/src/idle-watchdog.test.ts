import type { Clock, TimerHandle } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { IdleWatchdog } from './idle-watchdog.js';
import { sleepOn } from './sleep.js';

/** A clock whose time moves only when the test says. */
function manualClock() {
  let now = 0;
  let next = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const clock: Clock = {
    now: () => now,
    setTimeout: (callback, ms) => {
      timers.set(++next, { at: now + ms, callback });
      return next as unknown as TimerHandle;
    },
    clearTimeout: (handle) => void timers.delete(handle as unknown as number),
  };
  const advance = (ms: number): void => {
    const until = now + ms;
    for (;;) {
      const due = [...timers.entries()].filter(([, timer]) => timer.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].callback();
    }
    now = until;
  };
  return { clock, advance, pending: () => timers.size };
}

describe('IdleWatchdog on a clock', () => {
  it('fires only after timeoutMs without a touch, re-arming for the time left', () => {
    const { clock, advance } = manualClock();
    const controller = new AbortController();
    const watchdog = new IdleWatchdog(1000, controller, clock);
    advance(600);
    watchdog.touch();
    advance(600);
    expect(watchdog.fired).toBe(false);
    advance(399);
    expect(controller.signal.aborted).toBe(false);
    advance(1);
    expect(watchdog.fired).toBe(true);
    expect(controller.signal.aborted).toBe(true);
  });

  it('stop() clears its timer', () => {
    const { clock, advance, pending } = manualClock();
    const watchdog = new IdleWatchdog(1000, new AbortController(), clock);
    expect(pending()).toBe(1);
    watchdog.stop();
    expect(pending()).toBe(0);
    advance(5000);
    expect(watchdog.fired).toBe(false);
  });
});

describe('sleepOn', () => {
  it('ends when the clock says, and rejects with AbortError on abort', async () => {
    const { clock, advance } = manualClock();
    let done = false;
    const waiting = sleepOn(clock)(500, new AbortController().signal).then(() => (done = true));
    advance(499);
    await Promise.resolve();
    expect(done).toBe(false);
    advance(1);
    await waiting;
    expect(done).toBe(true);

    const controller = new AbortController();
    const aborted = sleepOn(clock)(500, controller.signal);
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
  });
});
