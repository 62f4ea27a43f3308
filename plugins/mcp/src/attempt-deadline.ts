/**
 * How long one connection attempt may take. It can be paused: while a person signs in through
 * OAuth the wait is theirs, not the server's, and must not count against `connectTimeoutMs`.
 */
export class AttemptDeadline {
  /** Rejects with the timeout error when the time runs out; never resolves. */
  readonly expired: Promise<never>;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private reject!: (error: Error) => void;

  constructor(
    private readonly ms: number,
    private readonly error: () => Error,
  ) {
    this.expired = new Promise<never>((_, reject) => (this.reject = reject));
    // Nobody may be racing against it any more when it fires (the attempt moved on).
    this.expired.catch(() => undefined);
    this.resume();
  }

  pause(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Starts the clock again with the whole budget: what follows a sign-in is a fresh connection. */
  resume(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => this.reject(this.error()), this.ms);
  }

  stop(): void {
    this.stopped = true;
    this.pause();
  }
}
