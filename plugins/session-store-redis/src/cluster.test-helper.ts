import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, onTestFailed } from 'vitest';
import { hasRedisServer, startRedis, type TestRedis } from '../../background-bullmq/src/testing/redis-server.test-helper.js';
import { RedisSessionCluster, type RedisSessionClusterOptions } from './redis-session-cluster.js';
import { RedisSessionStore } from './redis-session-store.js';

export { hasRedisServer };

/** One replica's view: its own connection, store and cluster (closed after the test). */
export interface TestReplica {
  store: RedisSessionStore;
  cluster: RedisSessionCluster;
  redis: Redis;
  /** What the cluster reported (`operation: error`). */
  reports: string[];
}

/**
 * A redis-server for one test file (started before its tests, stopped after), and what each
 * test needs of it: connections and replicas closed after the test, and `cleanups` run then.
 */
export function useClusterRedis(): {
  cleanups: Array<() => Promise<void> | void>;
  /** The server's port (for a `redis://` URL). */
  port(): number;
  connect(): Redis;
  replica(prefix: string, options?: Omit<RedisSessionClusterOptions, 'redis' | 'store' | 'report'>): TestReplica;
  prefixOf(letter: string): string;
} {
  let server: TestRedis | undefined;
  const cleanups: Array<() => Promise<void> | void> = [];
  beforeAll(async () => {
    if (hasRedisServer) server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });
  afterEach(async () => {
    // Last made, first closed: what a test built on a replica goes before the replica.
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const connect = (): Redis => {
    const redis = new Redis({ host: '127.0.0.1', port: server!.port, maxRetriesPerRequest: 1 });
    cleanups.push(() => redis.disconnect());
    return redis;
  };
  return {
    cleanups,
    port: () => server!.port,
    connect,
    replica(prefix, options = {}) {
      const redis = new Redis({ host: '127.0.0.1', port: server!.port, maxRetriesPerRequest: 1 });
      const store = new RedisSessionStore({ redis, prefix });
      const reports: string[] = [];
      const cluster = new RedisSessionCluster({ redis, store, ...options, report: (error, operation) => reports.push(`${operation}: ${String(error)}`) });
      // A failed test shows what its replicas reported (an answer that could not be sent, a dropped connection).
      onTestFailed(() => {
        if (reports.length > 0) console.error(`replica ${prefix} reported:\n  ${reports.join('\n  ')}`);
      });
      cleanups.push(async () => {
        await cluster.close();
        redis.disconnect();
      });
      return { store, cluster, redis, reports };
    },
    prefixOf: (letter) => `${letter}${randomUUID().slice(0, 8)}`,
  };
}
