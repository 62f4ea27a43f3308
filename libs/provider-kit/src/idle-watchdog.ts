import { systemClock, type Clock, type TimerHandle } from '@tessera/contracts';

/**
 * Idle timer for one provider attempt: stream events only call `touch()` (one clock read);
 * the timer re-arms itself for the remaining time, so the streaming path never touches
 * timers. When it fires it aborts `controller` and sets `fired`; the caller raises its own
 * timeout error.
 */
export class IdleWatchdog {
  lastActivity: number;
  fired = false;
  private timer: TimerHandle;

  constructor(
    readonly timeoutMs: number,
    private readonly controller: AbortController,
    private readonly clock: Clock = systemClock,
  ) {
    this.lastActivity = clock.now();
    this.timer = clock.setTimeout(this.check, timeoutMs);
  }

  /** Records activity now. */
  touch(): void {
    this.lastActivity = this.clock.now();
  }

  private readonly check = (): void => {
    const idle = this.clock.now() - this.lastActivity;
    if (idle >= this.timeoutMs) {
      this.fired = true;
      this.controller.abort();
    } else {
      this.timer = this.clock.setTimeout(this.check, this.timeoutMs - idle);
    }
  };

  stop(): void {
    this.clock.clearTimeout(this.timer);
  }
}
