import type { Clock, TimerHandle } from '@tessera/contracts';

interface PendingTimer {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * A clock that only moves when told to. `advance(ms)` fires due timers in time order,
 * including timers those callbacks set within the advanced span.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private timers: PendingTimer[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** Schedules `callback` at now + `ms` (negative counts as 0); it fires only during `advance`. */
  setTimeout(callback: () => void, ms: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.current + Math.max(0, ms), callback };
    this.timers.push(timer);
    return timer.id as unknown as TimerHandle;
  }

  /** Cancels a pending timer; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((timer) => timer.id !== (handle as unknown as number));
  }

  /** Number of timers not yet fired. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing due timers synchronously, earliest first. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let due: PendingTimer | undefined;
      for (const timer of this.timers) if (timer.at <= target && (!due || timer.at < due.at)) due = timer;
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.current = due.at;
      due.callback();
    }
    this.current = target;
  }
}
