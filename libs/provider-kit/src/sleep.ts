import { systemClock, type Clock } from '@tessera/contracts';

/** Waits `ms`, or rejects early with an `AbortError` when `signal` aborts. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** A `Sleep` on `clock`'s timers, so a test clock decides when a backoff ends. */
export function sleepOn(clock: Clock): Sleep {
  return (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(new DOMException('Aborted', 'AbortError'));
        return;
      }
      const onAbort = (): void => {
        clock.clearTimeout(timer);
        reject(new DOMException('Aborted', 'AbortError'));
      };
      const timer = clock.setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
}

/**
 * A `Sleep` on Node's own timers. Unlike `systemClock`'s timers it keeps the process alive:
 * a CLI waiting out a backoff has nothing else pending and must not exit mid-retry.
 */
export const defaultSleep: Sleep = sleepOn({ ...systemClock, setTimeout: (callback, ms) => setTimeout(callback, ms) });
