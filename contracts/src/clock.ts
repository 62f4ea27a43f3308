import { createToken } from './token.js';

export type TimerHandle = { readonly __timer?: never } | ReturnType<typeof setTimeout>;

/** Time source. Everything in Tessera that reads time or sets a timer goes through this. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const Clock = createToken<Clock>('Clock');

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
