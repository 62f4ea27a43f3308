import { randomUUID } from 'node:crypto';
import { TesseraError } from '@tessera/contracts';
import { SessionBusyError, type SessionLease, type SessionLockOptions } from '@tessera/session-hub';
import type { Redis } from 'ioredis';
import { RedisScript } from './redis-script.js';
import type { SessionKeys } from './session-keys.js';

/** Pushes the lease's expiry out, only while the key still holds this lease's token. */
const RENEW = new RedisScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`);
/** Deletes the key only while it holds this lease's token: an expired lease never frees another's. */
const RELEASE = new RedisScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`);

/** Why a lease's `signal` was aborted. */
export class SessionLeaseLostError extends TesseraError {
  constructor(sessionId: string, reason: 'taken' | 'expired') {
    super(
      reason === 'taken'
        ? `The lock on session ${sessionId} expired and another replica took it; this replica's work in the session stops.`
        : `The lock on session ${sessionId} could not be renewed before it expired (Redis unreachable); this replica's work in the session stops.`,
      { code: 'session_lease_lost', category: 'state', recoverable: true, details: { sessionId, reason } },
    );
  }
}

export interface RedisSessionLocksOptions {
  redis: Redis;
  keys: SessionKeys;
  /** A lease not renewed for this long expires (a crashed replica frees its sessions after it). */
  ttlMs: number;
  call: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
  /**
   * Told of each lease taken (`hold`) and released (`drop`): the store fences the session's saves
   * and turn events with the token meanwhile. Not dropped when the lease is lost, only at its
   * release, so what the holder sends after the loss is refused rather than sent unfenced.
   */
  fence?: { hold(sessionId: string, token: string): void; drop(sessionId: string, token: string): void };
}

/**
 * Per-session locks: `SET key token NX PX ttl` with a random token, renewed every quarter of the
 * TTL while held, released by a compare-and-delete script. A holder whose renewals Redis has not
 * confirmed declares its lease lost a quarter of the TTL before the key may expire (counted from
 * when the last confirmed call was sent), so it stops before another replica can take the session.
 */
export class RedisSessionLocks {
  constructor(private readonly options: RedisSessionLocksOptions) {}

  async lock(sessionId: string, options: SessionLockOptions = {}): Promise<SessionLease> {
    const { redis, keys, ttlMs, call } = this.options;
    const key = keys.lock(sessionId);
    const waitMs = Math.max(0, options.waitMs ?? 0);
    const token = randomUUID();
    const started = Date.now();
    for (let attempt = 0; ; attempt += 1) {
      const sentAt = Date.now();
      const taken = await call('take a session lock', () => redis.set(key, token, 'PX', ttlMs, 'NX'));
      if (taken === 'OK') {
        this.options.fence?.hold(sessionId, token);
        return new RedisSessionLease(sessionId, key, token, this.options, sentAt);
      }
      const waited = Date.now() - started;
      if (waited >= waitMs) throw new SessionBusyError(sessionId, waitMs);
      await new Promise((resolve) => setTimeout(resolve, Math.min(25 * 2 ** Math.min(attempt, 4), waitMs - waited)));
    }
  }

  /** True when some replica holds the session's lock. */
  async held(sessionId: string): Promise<boolean> {
    const { redis, keys, call } = this.options;
    return (await call('read a session lock', () => redis.exists(keys.lock(sessionId)))) === 1;
  }
}

class RedisSessionLease implements SessionLease {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  private readonly timer: NodeJS.Timeout;
  /** Declares the lease lost a quarter of the TTL before the key may expire, counted from the last renewal Redis confirmed. */
  private deadline: NodeJS.Timeout | undefined;
  /** When the key expires at the earliest: the send time of the last confirmed SET or RENEW, plus the TTL. */
  private validUntil: number;
  private renewing = false;
  private released = false;

  constructor(
    readonly sessionId: string,
    private readonly key: string,
    private readonly token: string,
    private readonly options: RedisSessionLocksOptions,
    takenAt: number,
  ) {
    this.validUntil = takenAt + options.ttlMs;
    this.timer = setInterval(() => void this.renew(), this.period);
    this.timer.unref();
    this.armDeadline();
  }

  /** Renewals are this far apart, and loss is declared this long before the key may expire: two renewals get a chance. */
  private get period(): number {
    return Math.max(10, Math.floor(this.options.ttlMs / 4));
  }

  async release(): Promise<void> {
    // A lost lease is stopped already, yet its fence stays until this release.
    if (this.released) return this.options.fence?.drop(this.sessionId, this.token);
    this.stop();
    // A release that fails leaves the key to expire on its own after the TTL.
    await RELEASE.run(this.options.redis, [this.key], [this.token]).catch(() => undefined);
    this.options.fence?.drop(this.sessionId, this.token);
  }

  /**
   * A local timer, not the renewal's reply, decides loss: a connection that hangs without an
   * error (a partition) never settles a call, yet the key expires in Redis all the same.
   */
  private armDeadline(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.lose('expired'), Math.max(0, this.validUntil - this.period - Date.now()));
    this.deadline.unref();
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.released) return;
    this.renewing = true;
    const sentAt = Date.now();
    try {
      const renewed = await RENEW.run(this.options.redis, [this.key], [this.token, this.options.ttlMs]);
      if (this.released) return;
      if (renewed !== 1) return this.lose('taken');
      if (sentAt + this.options.ttlMs > this.validUntil) {
        this.validUntil = sentAt + this.options.ttlMs;
        this.armDeadline();
      }
    } catch {
      // The deadline declares the loss if no later renewal succeeds in time.
    } finally {
      this.renewing = false;
    }
  }

  private stop(): void {
    this.released = true;
    clearInterval(this.timer);
    clearTimeout(this.deadline);
  }

  private lose(reason: 'taken' | 'expired'): void {
    if (this.released) return;
    this.stop();
    this.controller.abort(new SessionLeaseLostError(this.sessionId, reason));
  }
}
