import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script run by its SHA1, sent in full once when the server does not know it yet. */
export class RedisScript {
  private readonly sha: string;
  /** Connections this script was loaded on ahead of `runInOrder` (Redis forgets it on a restart; NOSCRIPT says so). */
  private readonly loadedOn = new WeakSet<Redis>();

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }

  /**
   * As `run`, but executed in the order it was called among the other commands sent on
   * `redis`: `run`'s fallback sends the script again only after the NOSCRIPT reply, by which
   * time commands sent after it have run. So the script is loaded ahead on the same
   * connection, and the fallback is left for a server that forgot it (restarted).
   */
  runInOrder(redis: Redis, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    if (!this.loadedOn.has(redis)) {
      redis.script('LOAD', this.source).then(
        () => this.loadedOn.add(redis),
        () => undefined,
      );
    }
    return redis.evalsha(this.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
      this.loadedOn.delete(redis);
      return redis.eval(this.source, keys.length, ...keys, ...args);
    });
  }
}
