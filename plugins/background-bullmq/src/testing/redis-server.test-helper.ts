import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { hasRedisServer, REDIS_SERVER, startRedisServer, type TestRedisServer } from '@tessera/test-servers';

export { hasRedisServer, REDIS_SERVER } from '@tessera/test-servers';
export type TestRedis = TestRedisServer;

if (!hasRedisServer) console.warn(`[background-bullmq] ${REDIS_SERVER} not found: the Redis tests are skipped (apt-get install redis-server, or set TESSERA_REDIS_SERVER).`);

/** A real redis-server on a free loopback port (see `startRedisServer` in @tessera/test-servers). */
export const startRedis = startRedisServer;

/** What `useRedisSuite` gives a test file: set in `beforeAll` (only when redis-server is there). */
export interface RedisSuite {
  /** The file's server; `redis.restart(downMs)` takes it down and back on the same port mid-test. */
  redis: TestRedis;
  /** A temp folder of the file's own (task cwds, markers), removed after the file. */
  dir: string;
  /** Run after each test, newest first (workers, managers, connections, processes); one that throws does not stop the rest. */
  cleanups: Array<() => Promise<unknown> | void>;
}

export interface RedisSuiteOptions {
  /** Redis writes an append-only file, so `redis.restart()` keeps the data (tests of a restart mid-run). */
  appendonly?: boolean;
  /** Build this package first when dist is stale: for tests that run the built worker in a child process. */
  build?: boolean;
}

/** This package's folder (the helper lives in src/testing). */
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * One redis-server and temp folder for a test file (`beforeAll` / `afterAll`), and cleanups run
 * after each test in reverse order. Nothing starts without redis-server (the tests skip then).
 */
export function useRedisSuite(dirPrefix: string, options: RedisSuiteOptions = {}): RedisSuite {
  const suite = { cleanups: [] } as unknown as RedisSuite;
  beforeAll(async () => {
    if (!hasRedisServer) return;
    if (options.build) ensureBuilt(packageDir);
    suite.redis = await startRedis({ appendonly: options.appendonly });
    suite.dir = await mkdtemp(join(tmpdir(), dirPrefix));
  }, options.build ? 300_000 : undefined);
  afterAll(async () => {
    if (!hasRedisServer) return;
    await suite.redis.stop();
    await rm(suite.dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const cleanup of suite.cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch {
        // already gone (a process group that exited, a connection closed by the test)
      }
    }
  });
  return suite;
}

/** Live (non-zombie) members of process group `pgid` (Linux /proc). */
export function liveGroupMembers(pgid: number): number {
  let live = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') live += 1;
    } catch {
      // exited while we looked
    }
  }
  return live;
}

export async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Builds this package when dist is older than src, so the child-process worker runs current code. */
export function ensureBuilt(packageDir: string): void {
  const newest = (dir: string): number =>
    Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((entry) => (entry.isDirectory() ? newest(join(dir, entry.name)) : entry.name.endsWith('.ts') ? statSync(join(dir, entry.name)).mtimeMs : 0)));
  const built = join(packageDir, 'dist', 'index.js');
  if (existsSync(built) && statSync(built).mtimeMs >= newest(join(packageDir, 'src'))) return;
  const result = spawnSync('npx', ['tsc', '-b', packageDir], { cwd: join(packageDir, '..', '..'), encoding: 'utf8', timeout: 240_000 });
  if (result.status !== 0) throw new Error(`tsc -b ${packageDir} failed:\n${result.stdout}${result.stderr}`);
}

/** The task once it runs with a process id (a shell task whose process group exists). */
export function runningWithPid<T extends { status: string; pid?: number }>(manager: { fetch(id: string): Promise<T | undefined> }, id: string): Promise<T> {
  return until(async () => {
    const state = await manager.fetch(id);
    return state?.status === 'running' && state.pid ? state : undefined;
  }, `task ${id} running`);
}
