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
}

/**
 * Per-session locks: `SET key token NX PX ttl` with a random token, renewed every third of the
 * TTL while held, released by a compare-and-delete script.
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
      const taken = await call('take a session lock', () => redis.set(key, token, 'PX', ttlMs, 'NX'));
      if (taken === 'OK') return new RedisSessionLease(sessionId, key, token, this.options);
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
  private lastRenewed = Date.now();
  private renewing = false;
  private released = false;

  constructor(
    readonly sessionId: string,
    private readonly key: string,
    private readonly token: string,
    private readonly options: RedisSessionLocksOptions,
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(10, Math.floor(options.ttlMs / 3)));
    this.timer.unref();
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    // A release that fails leaves the key to expire on its own after the TTL.
    await RELEASE.run(this.options.redis, [this.key], [this.token]).catch(() => undefined);
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.released) return;
    this.renewing = true;
    try {
      const renewed = await RENEW.run(this.options.redis, [this.key], [this.token, this.options.ttlMs]);
      if (this.released) return;
      if (renewed === 1) this.lastRenewed = Date.now();
      else this.lose('taken');
    } catch {
      if (!this.released && Date.now() - this.lastRenewed >= this.options.ttlMs) this.lose('expired');
    } finally {
      this.renewing = false;
    }
  }

  private lose(reason: 'taken' | 'expired'): void {
    this.released = true;
    clearInterval(this.timer);
    this.controller.abort(new SessionLeaseLostError(this.sessionId, reason));
  }
}
