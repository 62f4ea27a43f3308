import type { Plugin } from '@tessera/kernel';

/** `tessera serve`'s `redis` config field (or `--redis <url>`): where replicas share sessions. */
export interface ServeRedisSettings {
  url: string;
  prefix?: string;
  lockTtlMs?: number;
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

/** The URL without its password, for messages. */
export function redisLocation(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'the configured Redis';
  }
}
