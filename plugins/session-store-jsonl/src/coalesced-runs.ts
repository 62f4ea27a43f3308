/** A run's start, or the end of a change a run must cover: `performance.now()` readings. */
type Instant = number;

interface KeyState {
  running: { startedAt: Instant; done: Promise<void> } | undefined;
  queued: Promise<void> | undefined;
  /** When the newest run that succeeded started: it covers every change that ended before that. */
  lastOkStartedAt: Instant | undefined;
}

/** Idle keys remembered for `lastOkStartedAt`; past this many, idle keys are forgotten. */
const MAX_IDLE_KEYS = 256;

/**
 * Runs one operation per key (a directory fsync) so that callers share runs. A caller needs a
 * run that started after its change: by default after its call, or, given `changedAt`, after
 * that instant (a file created a while ago is covered by any directory sync that began since).
 * Such a run that already succeeded, or one under way, serves the caller as it is. Otherwise
 * the caller waits for the single next run, which starts when the current one ends, together
 * with everyone else who arrived meanwhile. N overlapping callers cost at most two runs.
 */
export class CoalescedRuns {
  readonly #states = new Map<string, KeyState>();

  constructor(private readonly run: (key: string) => Promise<void>) {}

  /**
   * Resolves (or rejects) with a run of `key` that started after `changedAt` (a
   * `performance.now()` reading taken when the change was complete; default: now).
   */
  request(key: string, changedAt: Instant = performance.now()): Promise<void> {
    const state = this.#states.get(key);
    if (state === undefined) return this.#start(key, this.#newState(key));
    if (state.lastOkStartedAt !== undefined && state.lastOkStartedAt > changedAt) return Promise.resolve();
    const running = state.running;
    if (running === undefined) return this.#start(key, state);
    if (running.startedAt > changedAt) return running.done;
    const next = (): Promise<void> => {
      state.queued = undefined;
      return this.#start(key, state);
    };
    state.queued ??= running.done.then(next, next);
    return state.queued;
  }

  /** Keys with a run going or queued (for tests and diagnostics). */
  get active(): number {
    let count = 0;
    for (const state of this.#states.values()) if (state.running !== undefined || state.queued !== undefined) count += 1;
    return count;
  }

  #newState(key: string): KeyState {
    if (this.#states.size >= MAX_IDLE_KEYS) {
      for (const [other, state] of this.#states) if (state.running === undefined && state.queued === undefined) this.#states.delete(other);
    }
    const state: KeyState = { running: undefined, queued: undefined, lastOkStartedAt: undefined };
    this.#states.set(key, state);
    return state;
  }

  #start(key: string, state: KeyState): Promise<void> {
    const startedAt = performance.now();
    let started: Promise<void>;
    try {
      started = this.run(key);
    } catch (error) {
      started = Promise.reject(error);
    }
    const running = {
      startedAt,
      done: started.then(
        () => {
          if (state.lastOkStartedAt === undefined || startedAt > state.lastOkStartedAt) state.lastOkStartedAt = startedAt;
        },
        (error: unknown) => {
          throw error;
        },
      ),
    };
    running.done
      .finally(() => {
        if (state.running === running) state.running = undefined;
      })
      .catch(() => undefined);
    state.running = running;
    return running.done;
  }
}
