import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The redis-server binary the Redis suites start (Debian's package; `TESSERA_REDIS_SERVER` overrides). */
export const REDIS_SERVER = process.env.TESSERA_REDIS_SERVER ?? '/usr/bin/redis-server';
export const hasRedisServer = existsSync(REDIS_SERVER);

/** A redis-server of one test or bench run. */
export interface TestRedisServer {
  readonly port: number;
  /** The server process's pid (changes on `restart`). */
  readonly pid: number | undefined;
  /** Stops it (SIGTERM: with `appendonly` its data is written) and starts it again on the same port and folder. */
  restart(downMs?: number): Promise<void>;
  /** Kills it and removes its folder. */
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

/** One `PING` over a raw socket: true on `+PONG`. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

/**
 * A real redis-server on a free loopback port with a temp folder, answering before this resolves.
 * No persistence unless `appendonly` (then `restart` keeps the data).
 */
export async function startRedisServer(options: { appendonly?: boolean } = {}): Promise<TestRedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', options.appendonly ? 'yes' : 'no', '--appendfsync', 'always', '--dir', dir];
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    for (let attempt = 0; !(await ping(port)); attempt += 1) {
      if (attempt > 100 || child.exitCode !== null) throw new Error(`${REDIS_SERVER} did not answer on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
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
    get pid() {
      return child.pid;
    },
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
