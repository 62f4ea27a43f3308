import { Diagnostics, processWarningDiagnostics, SessionStore, type DiagnosticsReporter } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import { SessionCluster } from '@tessera/session-hub';
import { closeRedis, connectionProblem, openRedis, type RedisConnection } from './redis-connection.js';
import { RedisSessionCluster } from './redis-session-cluster.js';
import { RedisSessionStore } from './redis-session-store.js';
import { isValidPrefix } from './session-keys.js';

export interface RedisSessionStoreOptions {
  /** A `redis://` / `rediss://` URL, ioredis options, or an ioredis client you own (never closed here). Default `redis://127.0.0.1:6379`. */
  connection?: RedisConnection;
  /** Every key starts with `<prefix>:`. Default `tessera`. Replicas sharing sessions use the same prefix. */
  prefix?: string;
  /** A session lock not renewed for this long expires (how soon a crashed replica frees its sessions). Default 30 000 ms. */
  lockTtlMs?: number;
  /** Connection warnings; default: the kernel's `Diagnostics` (`TESSERA_REDIS_WARNING`). */
  onWarning?: (message: string) => void;
}

/** The store and cluster of one kernel, over one connection. */
interface RedisSessions {
  store: RedisSessionStore;
  cluster: RedisSessionCluster;
  close(): Promise<void>;
}

/**
 * Provides `SessionStore` (`RedisSessionStore`) and `SessionCluster` (`RedisSessionCluster`)
 * over one Redis connection per kernel, made when either token is first resolved and closed
 * when the kernel shuts down (after its sessions saved). Composed in place of the JSONL store,
 * it lets server replicas serve the same sessions (`SessionHub` with `cluster`).
 */
export function redisSessionStore(options: RedisSessionStoreOptions = {}): Plugin {
  const settings = { ...options };
  checkOptions(settings);
  const diagnostics = [{ serviceIdentifier: Diagnostics, optional: true }] as const;
  return definePlugin({
    name: 'session-store-redis',
    provides: [SessionStore, SessionCluster],
    optional: [Diagnostics],
    register({ bind }) {
      let built: RedisSessions | undefined;
      const build = (reporter: DiagnosticsReporter | undefined): RedisSessions => {
        if (built) return built;
        const warn =
          settings.onWarning ??
          ((message: string) => (reporter ?? processWarningDiagnostics).report({ severity: 'warning', code: 'TESSERA_REDIS_WARNING', source: 'session-store-redis', message }));
        const { redis, owned } = openRedis(settings.connection ?? 'redis://127.0.0.1:6379', warn);
        const report = (error: unknown, operation: string): void => warn(`Could not ${operation}: ${error instanceof Error ? error.message : String(error)}`);
        const store = new RedisSessionStore({ redis, report, ...(settings.prefix === undefined ? {} : { prefix: settings.prefix }) });
        const cluster = new RedisSessionCluster({
          redis,
          store,
          ...(settings.lockTtlMs === undefined ? {} : { lockTtlMs: settings.lockTtlMs }),
          report,
        });
        let closing: Promise<void> | undefined;
        const close = async (): Promise<void> => {
          await cluster.close();
          if (owned) await closeRedis(redis);
        };
        built = { store, cluster, close: () => (closing ??= close()) };
        return built;
      };
      // Sessions save during kernel shutdown before services are released, so closing here loses nothing.
      bind(SessionStore)
        .toResolvedValue((reporter: DiagnosticsReporter | undefined) => build(reporter).store, [...diagnostics])
        .inSingletonScope()
        .onDeactivation(() => built?.close());
      bind(SessionCluster)
        .toResolvedValue((reporter: DiagnosticsReporter | undefined) => build(reporter).cluster, [...diagnostics])
        .inSingletonScope()
        .onDeactivation(() => built?.close());
    },
  });
}

function checkOptions(options: RedisSessionStoreOptions): void {
  const invalid = (option: string, problem: string): PluginOptionsError => new PluginOptionsError('redisSessionStore', 'session-store-redis', option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object');
  if (options.connection !== undefined) {
    const problem = connectionProblem(options.connection);
    if (problem) throw invalid('connection', problem);
  }
  if (options.prefix !== undefined && !isValidPrefix(options.prefix)) throw invalid('prefix', 'must be 1–64 letters, digits, ".", "_", "-" or ":", starting with a letter or digit and not ending with ":"');
  if (options.lockTtlMs !== undefined && (!Number.isInteger(options.lockTtlMs) || options.lockTtlMs < 100)) throw invalid('lockTtlMs', 'must be an integer of at least 100 (ms)');
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') throw invalid('onWarning', 'must be a function');
}
