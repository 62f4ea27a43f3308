import { assertValidSessionId } from '@tessera/contracts';
import type { ClusterControlHandler, ClusterControlOptions, ClusterControlReply, ClusterTurnEvent, SessionCluster, SessionLease, SessionLockOptions, StoredSessionHead } from '@tessera/session-hub';
import type { Redis } from 'ioredis';
import { SessionRecordCorruptError } from './errors.js';
import { isUnreadable, type RedisSessionStore } from './redis-session-store.js';
import { RedisSessionControl } from './redis-session-control.js';
import { RedisSessionLocks } from './redis-session-lock.js';
import { RedisTurnFeed } from './redis-turn-feed.js';

export interface RedisSessionClusterOptions {
  redis: Redis;
  /** The store whose copies `isCurrent` judges (same connection and prefix). */
  store: RedisSessionStore;
  /** A lock not renewed for this long expires. Default 30 s. */
  lockTtlMs?: number;
  /** How long a follower blocks before checking that the turn's replica is alive. Default 2 s. */
  followBlockMs?: number;
  /** How long a control request waits for the serving replica's answer. Default 5 s. */
  controlTimeoutMs?: number;
  /** A failure nobody awaits (a publish, a follower's read, a control answer). */
  report?: (error: unknown, operation: string) => void;
}

/**
 * `SessionCluster` on Redis, beside a `RedisSessionStore`: locks (`<prefix>:session:<id>:lock`),
 * stored heads read from the store's hashes, turn events on a stream per turn
 * (`<prefix>:session:<id>:turn:<turnId>`, the latest turn's id in `<prefix>:session:<id>:latest-turn`), control requests on a pub/sub channel per session
 * (`<prefix>:session:<id>:control`, answered on `<prefix>:control:replies:<uuid>`), turn starts
 * announced on `<prefix>:session:<id>:turns`. Its
 * subscriber connection is its own: `close()` it (the plugin does at kernel shutdown).
 */
export class RedisSessionCluster implements SessionCluster {
  private readonly locks: RedisSessionLocks;
  private readonly feed: RedisTurnFeed;
  private readonly controls: RedisSessionControl;
  /** Index members `heads()` left out and reported already. */
  private readonly unreadable = new Set<string>();

  constructor(private readonly options: RedisSessionClusterOptions) {
    const { redis, store } = options;
    const call = store.call.bind(store);
    const fence = { hold: store.fence.bind(store), drop: store.unfence.bind(store) };
    this.locks = new RedisSessionLocks({ redis, keys: store.keys, ttlMs: options.lockTtlMs ?? 30_000, call, fence });
    this.feed = new RedisTurnFeed({
      redis,
      keys: store.keys,
      lease: (sessionId) => store.leaseOf(sessionId),
      held: (sessionId) => this.locks.held(sessionId),
      report: options.report ?? (() => undefined),
      ...(options.followBlockMs === undefined ? {} : { blockMs: options.followBlockMs }),
    });
    this.controls = new RedisSessionControl({ redis, keys: store.keys, timeoutMs: options.controlTimeoutMs ?? 5_000, call, report: options.report ?? (() => undefined) });
  }

  lock(sessionId: string, options?: SessionLockOptions): Promise<SessionLease> {
    return this.locks.lock(sessionId, options);
  }

  isCurrent(sessionId: string): Promise<boolean> {
    return this.options.store.isCurrent(sessionId);
  }

  discard(sessionId: string): void {
    this.options.store.discard(sessionId);
  }

  async head(sessionId: string): Promise<StoredSessionHead | undefined> {
    assertValidSessionId(sessionId);
    const { redis, store } = this.options;
    const keys = store.keys;
    const [fields, messageCount] = await store.call('read a session head', () =>
      Promise.all([redis.hmget(keys.record(sessionId), 'meta', 'updatedAt', 'revision'), redis.llen(keys.messages(sessionId))]),
    );
    const [meta, updatedAt, revision] = fields;
    if (meta === null || meta === undefined) return undefined;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(meta) as Record<string, unknown>;
    } catch {
      throw new SessionRecordCorruptError(sessionId, keys.record(sessionId), 'holds a meta field that is not JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.cwd !== 'string') throw new SessionRecordCorruptError(sessionId, keys.record(sessionId), 'has no cwd');
    const { id: _id, cwd, createdAt, ...rest } = parsed;
    return {
      id: sessionId,
      cwd,
      createdAt: typeof createdAt === 'string' ? createdAt : '',
      updatedAt: updatedAt ?? '',
      fields: rest,
      revision: Number(revision ?? 0),
      messageCount,
    };
  }

  /**
   * A record that cannot be read (not what the store writes, or an index member that is not a
   * session id) is left out and reported once, naming it: one bad record must not fail every
   * listing. Only Redis failing fails the listing.
   */
  async heads(): Promise<StoredSessionHead[]> {
    const { redis, store } = this.options;
    const ids = await store.call('list sessions', () => redis.zrevrange(store.keys.index, 0, -1));
    const heads = await Promise.all(
      ids.map((id) =>
        this.head(id).catch((error: unknown) => {
          if (!isUnreadable(error)) throw error;
          if (!this.unreadable.has(id)) {
            this.unreadable.add(id);
            this.options.report?.(error, `list stored session "${id.slice(0, 80)}" (left out of listings)`);
          }
          return undefined;
        }),
      ),
    );
    return heads.filter((head): head is StoredSessionHead => head !== undefined);
  }

  publish(sessionId: string, event: ClusterTurnEvent): void {
    this.feed.publish(sessionId, event);
  }

  runningTurn(sessionId: string): Promise<string | undefined> {
    assertValidSessionId(sessionId);
    return this.options.store.call('read a running turn', () => this.feed.runningTurn(sessionId));
  }

  /**
   * How many turns this replica follows now (`follow` calls not yet stopped, each reading on a
   * connection of its own): a view for health checks and tests that a follower nobody needs stopped.
   */
  get following(): number {
    return this.feed.following;
  }

  follow(sessionId: string, turnId: string, listener: (event: ClusterTurnEvent) => void): Promise<() => void> {
    assertValidSessionId(sessionId);
    return this.options.store.call('follow a turn', () => this.feed.follow(sessionId, turnId, listener));
  }

  control(sessionId: string, message: unknown, options: ClusterControlOptions = {}): Promise<ClusterControlReply> {
    return this.controls.control(sessionId, message, options.timeoutMs);
  }

  serveControl(sessionId: string, handler: ClusterControlHandler): Promise<() => void> {
    return this.controls.serveControl(sessionId, handler);
  }

  watchTurns(sessionId: string, listener: (turnId: string) => void): Promise<() => void> {
    return this.controls.watchTurns(sessionId, listener);
  }

  /** Stops the turns it follows and closes the connection control requests use (the shared one is the store's owner's to close). */
  close(): Promise<void> {
    this.feed.close();
    return this.controls.close();
  }
}
