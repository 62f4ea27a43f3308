/**
 * Runs one operation per key (a directory fsync) so that callers share runs: a caller that
 * arrives while none runs starts one; callers that arrive while one runs (it may have begun
 * before their change) all wait for the single next run, which starts when the current one
 * ends. N overlapping callers cost at most two runs instead of N.
 */
export class CoalescedRuns {
  readonly #states = new Map<string, { running: Promise<void>; queued: Promise<void> | undefined }>();

  constructor(private readonly run: (key: string) => Promise<void>) {}

  /** Resolves (or rejects) with a run of `key` that started after this call. */
  request(key: string): Promise<void> {
    const current = this.#states.get(key);
    if (current === undefined) return this.#start(key);
    const next = (): Promise<void> => this.#start(key);
    current.queued ??= current.running.then(next, next);
    return current.queued;
  }

  /** Keys with a run going or queued (for tests and diagnostics). */
  get active(): number {
    return this.#states.size;
  }

  #start(key: string): Promise<void> {
    const state: { running: Promise<void>; queued: Promise<void> | undefined } = { running: Promise.resolve(), queued: undefined };
    let started: Promise<void>;
    try {
      started = this.run(key);
    } catch (error) {
      started = Promise.reject(error);
    }
    state.running = started.finally(() => {
      if (this.#states.get(key) === state && state.queued === undefined) this.#states.delete(key);
    });
    this.#states.set(key, state);
    return state.running;
  }
}
