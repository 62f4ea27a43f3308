import type { Plugin } from '@tessera/kernel';

/** `tessera serve`'s `redis` config field (or `--redis <url>`): where replicas share sessions. */
export interface ServeRedisSettings {
  url: string;
  prefix?: string;
  lockTtlMs?: number;
  /**
   * Run background tasks on `tessera worker` processes through this Redis (BullMQ), instead of in
   * the server process: `true`, or the queue name and whether subagent jobs go there too.
   */
  background?: boolean | { queue?: string; agents?: boolean };
}

/**
 * The Redis session store plugin for `tessera serve` in replica mode. The package (and ioredis)
 * is loaded only here, so a server without `redis` — and every other command — never pays for
 * it. A bad URL is an error naming the setting.
 */
export async function redisReplicaPlugin(settings: ServeRedisSettings, warn: (message: string) => void): Promise<Plugin> {
  const { connectionProblem, redisSessionStore } = await import('@tessera/plugin-session-store-redis');
  const problem = connectionProblem(settings.url);
  if (problem) throw new Error(`redis.url (or --redis) ${problem}.`);
  return redisSessionStore({
    connection: settings.url,
    ...(settings.prefix === undefined ? {} : { prefix: settings.prefix }),
    ...(settings.lockTtlMs === undefined ? {} : { lockTtlMs: settings.lockTtlMs }),
    onWarning: warn,
  });
}

/**
 * With `background` set: the BullMQ background runtime in place of the in-process one, on the same
 * Redis and prefix, so every replica sees the same tasks and `tessera worker` processes run them.
 * Subagent jobs stay in the server process unless `background.agents` is set (they then need a
 * worker started with `--kinds agent`). Loaded only here, like the session store.
 */
export async function redisBackgroundPlugin(settings: ServeRedisSettings): Promise<Plugin | undefined> {
  if (!settings.background) return undefined;
  const { redisOptions } = await import('./subcommands/worker.js');
  const { bullmqBackgroundRuntime } = await import('@tessera/plugin-background-bullmq');
  const options = settings.background === true ? {} : settings.background;
  let connection;
  try {
    connection = redisOptions(settings.url);
  } catch (error) {
    throw new Error(`redis.url (or --redis): ${(error as Error).message.replace(/^--redis:? ?/, '')}`);
  }
  return bullmqBackgroundRuntime({
    connection,
    ...(settings.prefix === undefined ? {} : { prefix: settings.prefix }),
    ...(options.queue === undefined ? {} : { queue: options.queue }),
    subagents: options.agents === true,
  });
}

/** The URL without its password, for messages. */
export function redisLocation(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'the configured Redis';
  }
}
