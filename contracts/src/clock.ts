import { createToken } from './token.js';

/** An opaque handle from `Clock.setTimeout`; only pass it back to the same clock's `clearTimeout`. */
export type TimerHandle = { readonly __timer?: never } | ReturnType<typeof setTimeout>;

/** Time source. Everything in Tessera that reads time or sets a timer goes through this. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  /** Cancels a pending timer; does nothing if it has already fired or was cleared. */
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The clock sessions and plugins read time from. Optional: without a binding the kernel uses
 * {@link systemClock}; tests bind a `FakeClock` (`fakeClock()` from `@tessera/kernel/testing`).
 */
export const Clock = createToken<Clock>('Clock');

/** The real clock (`Date.now`, `setTimeout`). Its timers are unref'd, so they never keep the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    // A pending idle timer must never keep the process alive on its own.
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
