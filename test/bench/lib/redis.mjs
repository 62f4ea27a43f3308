// A throwaway redis-server for benches: free loopback port, temp dir, no persistence.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER = process.env.TESSERA_REDIS_SERVER ?? '/usr/bin/redis-server';
export const hasRedisServer = existsSync(REDIS_SERVER);

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-redis-'));
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const { Redis } = await import('ioredis');
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
  return {
    port,
    pid: child.pid,
    async stop() {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
