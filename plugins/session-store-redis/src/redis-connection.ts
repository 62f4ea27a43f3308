import { describeError } from '@tessera/contracts';
import { Redis, type RedisOptions } from 'ioredis';

/** Where Redis is: a `redis://` / `rediss://` URL, ioredis options, or a client you own. */
export type RedisConnection = string | RedisOptions | Redis;

/**
 * Reconnects with backoff (0.1 s doubling to 5 s) for as long as the process runs; a command
 * sent while Redis is away waits through three reconnection attempts, then fails with an error
 * the store turns into `session_store_unavailable`.
 *
 * A command sent but not answered when the connection drops fails instead of being sent again
 * after the reconnection (`autoResendUnfulfilledCommands`): Redis may have run it already, and
 * none of these is safe twice — a turn part's XADD would be appended twice, a lock's SET NX
 * would be refused by the key it set itself (the session then locked by nobody for a TTL), a
 * save that landed would be refused as stale. Callers handle a failed command already. ioredis
 * drops such a command without settling it, so `commandTimeout` is what fails it (and any
 * command a hung connection never answers). The connections `duplicate()` makes (followers,
 * control) inherit both; a follower's reader allows for its blocking read on top.
 */
const DEFAULTS: RedisOptions = {
  autoResendUnfulfilledCommands: false,
  commandTimeout: 10_000,
  maxRetriesPerRequest: 3,
  connectTimeout: 5_000,
  retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 6), 5_000),
};

/** The problem with a connection option, or `undefined` when it is usable. */
export function connectionProblem(connection: unknown): string | undefined {
  if (connection instanceof Redis) return undefined;
  if (typeof connection === 'string') {
    let url: URL;
    try {
      url = new URL(connection);
    } catch {
      // Without whatever stands before an "@": a mistyped URL may still carry the password.
      return `"${(connection.includes('@') ? `…@${connection.slice(connection.lastIndexOf('@') + 1)}` : connection).slice(0, 80)}" is not a URL; use redis://host:port (or rediss:// for TLS)`;
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return `must be a redis:// or rediss:// URL, got ${url.protocol}//`;
    return undefined;
  }
  if (typeof connection !== 'object' || connection === null || Array.isArray(connection)) return 'must be a redis:// URL, ioredis options or an ioredis client';
  return undefined;
}

/** A client made from `connection` (or the given one), whose errors are reported once per outage instead of crashing the process. */
export function openRedis(connection: RedisConnection, warn: (message: string) => void): { redis: Redis; owned: boolean } {
  const owned = !(connection instanceof Redis);
  const redis = connection instanceof Redis ? connection : typeof connection === 'string' ? new Redis(connection, DEFAULTS) : new Redis({ ...DEFAULTS, ...connection });
  let down = false;
  redis.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    warn(`Redis connection failed (${describeError(error)}); reconnecting with backoff. Session saves and locks fail until it is back.`);
  });
  redis.on('ready', () => {
    if (down) warn('Redis connection is back.');
    down = false;
  });
  return { redis, owned };
}

/** Closes a client this package made (politely when connected, at once otherwise); resolves once it has ended. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  const ended = new Promise((resolve) => redis.once('end', resolve));
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
  // A client that never connected may not emit 'end'; shutdown must not hang on it.
  await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
}
