import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export const REDIS_SERVER = process.env.TESSERA_REDIS_SERVER ?? '/usr/bin/redis-server';
export const hasRedisServer = existsSync(REDIS_SERVER);
if (!hasRedisServer) console.warn(`[background-bullmq] ${REDIS_SERVER} not found: the Redis tests are skipped (apt-get install redis-server, or set TESSERA_REDIS_SERVER).`);

export interface TestRedis {
  port: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A real redis-server on a free loopback port, with a temp dir; no persistence unless `appendonly`. */
export async function startRedis(options: { appendonly?: boolean } = {}): Promise<TestRedis & { restart(downMs?: number): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', options.appendonly ? 'yes' : 'no', '--appendfsync', 'always', '--dir', dir];
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    for (let attempt = 0; ; attempt += 1) {
      try {
        await probe.connect();
        await probe.ping();
        break;
      } catch (error) {
        if (attempt > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    probe.disconnect();
    return child;
  };
  const stopChild = async (child: ChildProcess, signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  let child = await launch();
  return {
    port,
    /** Stops the server (SIGTERM: it writes its append-only file) and starts it again on the same port and dir. */
    async restart(downMs = 0) {
      await stopChild(child, 'SIGTERM');
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      child = await launch();
    },
    async stop() {
      await stopChild(child, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
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

