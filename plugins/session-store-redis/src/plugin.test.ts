import { SessionStore } from '@tessera/contracts';
import { createKernel, InteractiveSession } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { SessionCluster } from '@tessera/session-hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer, startRedis, type TestRedis } from '../../background-bullmq/src/testing/redis-server.test-helper.js';
import { redisSessionStore } from './plugin.js';
import { RedisSessionCluster } from './redis-session-cluster.js';
import { RedisSessionStore } from './redis-session-store.js';

describe('redisSessionStore: options', () => {
  it('refuses bad options, naming the option', () => {
    expect(() => redisSessionStore({ connection: 'http://127.0.0.1:6379' })).toThrow(/connection must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => redisSessionStore({ connection: 'not a url' })).toThrow(/connection "not a url" is not a URL/);
    // A mistyped URL is not echoed with its password.
    expect(() => redisSessionStore({ connection: 'redis//:s3cret@cache:6379' })).toThrow(/"…@cache:6379" is not a URL/);
    expect(() => redisSessionStore({ prefix: 'ends:' })).toThrow(/prefix must be/);
    expect(() => redisSessionStore({ prefix: 'has space' })).toThrow(/prefix must be/);
    expect(() => redisSessionStore({ lockTtlMs: 5 })).toThrow(/lockTtlMs must be/);
    expect(() => redisSessionStore({ connection: 'redis://127.0.0.1:6379', prefix: 'app.v2', lockTtlMs: 1000 })).not.toThrow();
  });
});

let server: TestRedis | undefined;
beforeAll(async () => {
  if (hasRedisServer) server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

describe.runIf(hasRedisServer)('redisSessionStore in a kernel (real redis-server)', () => {
  it('binds the store and the cluster over one connection, saves sessions to Redis, and closes it at shutdown', async () => {
    const kernel = await createKernel({
      plugins: testPreset({ turns: [{ text: 'stored in redis' }], replace: [redisSessionStore({ connection: `redis://127.0.0.1:${server!.port}`, prefix: 'kernel' })] }),
    });
    const store = kernel.get(SessionStore);
    const cluster = kernel.get(SessionCluster);
    expect(store).toBeInstanceOf(RedisSessionStore);
    expect(cluster).toBeInstanceOf(RedisSessionCluster);
    const session = new InteractiveSession({ kernel, cwd: '/srv/app' });
    await session.submit('remember this');
    const id = session.getSessionId();
    expect(await cluster.isCurrent(id)).toBe(true);
    expect((await store.load(id))!.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    await kernel.shutdown();
    const redis = (store as unknown as { redis: { status: string } }).redis;
    expect(redis.status).toBe('end');

    // Another kernel (a replica) loads what the first stored.
    const replica = await createKernel({ plugins: testPreset({ replace: [redisSessionStore({ connection: `redis://127.0.0.1:${server!.port}`, prefix: 'kernel' })] }) });
    try {
      const head = await replica.get(SessionCluster).head(id);
      expect(head).toMatchObject({ id, cwd: '/srv/app', messageCount: 2 });
    } finally {
      await replica.shutdown();
    }
  });
});
