import type { TBackgroundTaskKind } from '@tessera/plugin-background';
import { Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { resolveKeys, type BullmqConnectionOptions } from './bullmq-background-task-manager.js';

/** What `probeRedis` learned from one connection attempt. */
export interface RedisProbe {
  readonly host: string;
  readonly port: number;
  /** `redis_version` from `INFO server`. */
  readonly version: string;
  /** Round trip of one `PING`, in milliseconds. */
  readonly pingMs: number;
}

/** Where a host:port pair comes from in ioredis options (a `path` socket is shown as is). */
export function describeRedisTarget(connection: RedisOptions): string {
  if (connection.path) return connection.path;
  return `${connection.host ?? '127.0.0.1'}:${connection.port ?? 6379}`;
}

/**
 * One connection attempt with no retries: resolves with the server version and a PING time, or
 * rejects within `timeoutMs` with an error naming the address. Long-running clients retry with
 * backoff on their own; this is for start-up checks and `tessera doctor`.
 */
export async function probeRedis(connection: RedisOptions, options: { timeoutMs?: number } = {}): Promise<RedisProbe> {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const target = describeRedisTarget(connection);
  const client = new Redis({ ...connection, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: timeoutMs });
  client.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const probe = (async (): Promise<RedisProbe> => {
      await client.connect();
      const started = performance.now();
      await client.ping();
      const pingMs = performance.now() - started;
      const info = await client.info('server');
      const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown';
      return { host: connection.host ?? '127.0.0.1', port: connection.port ?? 6379, version, pingMs };
    })();
    return await Promise.race([probe, deadline]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Redis at ${target} is not reachable: ${reason}. Start redis-server there, or pass the right address (--redis redis://host:port or TESSERA_REDIS_URL).`, { cause: error });
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** One kind's BullMQ queue, as `tessera doctor` shows it. */
export interface BackgroundQueueStatus {
  readonly kind: TBackgroundTaskKind;
  readonly name: string;
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly prioritized: number;
  readonly failed: number;
  readonly completed: number;
  /** Workers connected to this queue (BullMQ names them with the worker id). */
  readonly workers: readonly string[];
  /** Cluster-wide concurrency limit, when one is set. */
  readonly globalConcurrency?: number;
}

/** Queue depths and the workers connected, per kind; every key read stays under the configured prefix. */
export async function backgroundQueueStatus(options: BullmqConnectionOptions & { kinds?: readonly TBackgroundTaskKind[] }): Promise<BackgroundQueueStatus[]> {
  const keys = resolveKeys(options);
  const kinds = options.kinds ?? (['process', 'agent', 'scheduled'] as const);
  const result: BackgroundQueueStatus[] = [];
  for (const kind of kinds) {
    const name = keys.queueName(kind);
    const queue = new Queue(name, { connection: { ...options.connection, maxRetriesPerRequest: 1 }, prefix: keys.bullPrefix });
    queue.on('error', () => {});
    try {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed');
      const workers = await queue.getWorkers();
      const globalConcurrency = await queue.getGlobalConcurrency();
      result.push({
        kind,
        name,
        waiting: counts.waiting ?? 0,
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        prioritized: counts.prioritized ?? 0,
        failed: counts.failed ?? 0,
        completed: counts.completed ?? 0,
        // BullMQ names a worker's connections `<queue client>:w:<worker name>`; one worker has several.
        workers: [...new Set(workers.map((worker) => {
          const raw = String((worker as { rawname?: string }).rawname ?? '');
          const at = raw.indexOf(':w:');
          return at === -1 ? '(unnamed worker)' : raw.slice(at + 3);
        }))],
        ...(globalConcurrency === null || globalConcurrency === undefined ? {} : { globalConcurrency: Number(globalConcurrency) }),
      });
    } finally {
      await queue.close();
    }
  }
  return result;
}
