import { connect, createServer, type Socket } from 'node:net';
import type { IHistoryEntry, ISessionRecord } from '@tessera/contracts';
import type { ClusterTurnEvent } from '@tessera/session-hub';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { until } from '../../background-bullmq/src/testing/redis-server.test-helper.js';
import { hasRedisServer, useClusterRedis } from './cluster.test-helper.js';
import { RedisSessionCluster } from './redis-session-cluster.js';
import { RedisSessionStore } from './redis-session-store.js';

const { cleanups, connect: client, replica: makeReplica, prefixOf: prefixWith } = useClusterRedis();
const replica = (prefix: string, options: { lockTtlMs?: number; followBlockMs?: number } = {}) => makeReplica(prefix, options);
const prefixOf = (): string => prefixWith('c');

/**
 * A TCP proxy to Redis on loopback whose `freeze()` stops forwarding without closing anything (a
 * partition, a frozen NAT), and `heal()` forwards again what was held back and what follows.
 */
async function frozenProxy(target: number): Promise<{ port: number; freeze(): void; heal(): void; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const pairs: Array<[Socket, Socket]> = [];
  const server = createServer((inbound) => {
    const outbound = connect(target, '127.0.0.1');
    sockets.push(inbound, outbound);
    pairs.push([inbound, outbound]);
    for (const socket of [inbound, outbound]) socket.on('error', () => undefined);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
    heal() {
      for (const [inbound, outbound] of pairs) {
        inbound.pipe(outbound);
        outbound.pipe(inbound);
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.runIf(hasRedisServer)('RedisSessionCluster: locks (real redis-server)', () => {
  it('is exclusive: a second lock is session_busy until the first is released', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    const lease = await a.cluster.lock('s1');
    await expect(b.cluster.lock('s1')).rejects.toMatchObject({ code: 'session_busy', recoverable: true });
    await expect(a.cluster.lock('s1')).rejects.toMatchObject({ code: 'session_busy' });
    // Another session is not affected.
    await (await b.cluster.lock('s2')).release();
    await lease.release();
    await lease.release();
    const next = await b.cluster.lock('s1');
    expect(next.signal.aborted).toBe(false);
    await next.release();
  });

  it('waits up to waitMs for a busy session', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    const lease = await a.cluster.lock('s1');
    const waiting = b.cluster.lock('s1', { waitMs: 10_000 });
    let settled = false;
    void waiting.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false);
    await lease.release();
    const taken = await waiting;
    await taken.release();
  });

  it('renews a held lease past its TTL, and a crashed holder frees the session when its lease expires', async () => {
    const prefix = prefixOf();
    const a = replica(prefix, { lockTtlMs: 150 });
    const b = replica(prefix, { lockTtlMs: 150 });
    const lease = await a.cluster.lock('s1');
    cleanups.push(() => lease.release());
    const key = `${prefix}:session:s1:lock`;
    // Several TTLs later the lease still holds, because it was renewed.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await expect(b.cluster.lock('s1')).rejects.toMatchObject({ code: 'session_busy' });
    expect(lease.signal.aborted).toBe(false);
    expect(await a.redis.pttl(key)).toBeGreaterThan(0);

    // A holder that stopped renewing (a crashed replica): its key expires and the session is free again.
    await a.redis.set(`${prefix}:session:s2:lock`, 'crashed-replica', 'PX', 150);
    const after = await b.cluster.lock('s2', { waitMs: 10_000 });
    await after.release();
  });

  it('a holder that cannot reach Redis to renew its lease is told it expired before the key can expire', async () => {
    const prefix = prefixOf();
    const a = replica(prefix, { lockTtlMs: 400 });
    const observer = client();
    const lease = await a.cluster.lock('s1');
    // The replica's connection drops for good: every renewal fails.
    a.redis.disconnect();
    await until(() => lease.signal.aborted || undefined, 'the lease to expire', 5_000);
    // Declared lost while the key still stands: no other replica can hold the session yet.
    expect(await observer.pttl(`${prefix}:session:s1:lock`)).toBeGreaterThan(0);
    expect(lease.signal.reason).toMatchObject({ code: 'session_lease_lost', details: { sessionId: 's1', reason: 'expired' } });
    expect(String((lease.signal.reason as Error).message)).toContain('could not be renewed before it expired');
    await lease.release();
  });

  it('a holder whose connection hangs (no error, no reply) is told its lease expired before another replica can take the session', async () => {
    const prefix = prefixOf();
    const observer = client();
    const proxy = await frozenProxy(observer.options.port!);
    cleanups.push(() => proxy.close());
    const redis = new Redis({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    cleanups.push(() => redis.disconnect());
    const store = new RedisSessionStore({ redis, prefix });
    const a = new RedisSessionCluster({ redis, store, lockTtlMs: 400 });
    const lease = await a.lock('s1');
    const b = replica(prefix, { lockTtlMs: 400 });
    // The network stops forwarding: A's renewals are sent and never answered.
    proxy.freeze();
    const taken = b.cluster.lock('s1', { waitMs: 5_000 }).then((other) => ({ other, aAborted: lease.signal.aborted }));
    await until(() => lease.signal.aborted || undefined, 'the hung lease to be reported lost', 5_000);
    expect(await observer.pttl(`${prefix}:session:s1:lock`)).toBeGreaterThan(0);
    expect(lease.signal.reason).toMatchObject({ code: 'session_lease_lost', details: { reason: 'expired' } });
    // B gets the session only after A was told to stop.
    const { other, aAborted } = await taken;
    expect(aAborted).toBe(true);
    await other.release();
  });

  it('is released only by its holder; a holder whose lease was taken is told through its signal', async () => {
    const prefix = prefixOf();
    const a = replica(prefix, { lockTtlMs: 300 });
    const lease = await a.cluster.lock('s1');
    const key = `${prefix}:session:s1:lock`;
    // As if the lease expired and another replica took the session.
    await a.redis.set(key, 'another-replica', 'PX', 60_000);
    await lease.release();
    expect(await a.redis.get(key)).toBe('another-replica');

    const second = await a.cluster.lock('s2');
    await a.redis.set(`${prefix}:session:s2:lock`, 'another-replica', 'PX', 60_000);
    await until(() => second.signal.aborted || undefined, 'the lease to be reported lost');
    expect(second.signal.reason).toMatchObject({ code: 'session_lease_lost' });
    await second.release();
    expect(await a.redis.get(`${prefix}:session:s2:lock`)).toBe('another-replica');
  });

  it('refuses an invalid session id', async () => {
    const a = replica(prefixOf());
    await expect(a.cluster.lock('../x')).rejects.toMatchObject({ code: 'invalid_session_id' });
    await expect(a.cluster.head('a b')).rejects.toMatchObject({ code: 'invalid_session_id' });
  });
});

describe.runIf(hasRedisServer)('RedisSessionCluster: heads and turn fan-out (real redis-server)', () => {
  it('reads a stored head without its history', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    await a.store.save(
      {
        id: 'h1',
        cwd: '/srv/app',
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-02T00:00:00.000Z',
        history: [{ id: 'e1', timestamp: '2026-01-01T00:00:00.000Z', category: 'chat', type: 'user', data: { role: 'user', content: 'hi' } }],
        messages: [{ role: 'user', content: 'hi' }],
        serverOwner: 'alice',
        name: 'notes',
      },
      { appendedFrom: 0, rewritten: false, created: true },
    );
    const b = replica(prefix);
    expect(await b.cluster.head('h1')).toEqual({
      id: 'h1',
      cwd: '/srv/app',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-02T00:00:00.000Z',
      fields: { serverOwner: 'alice', name: 'notes' },
      revision: 1,
      messageCount: 1,
    });
    expect(await b.cluster.head('missing')).toBeUndefined();
    expect((await b.cluster.heads()).map((head) => head.id)).toEqual(['h1']);
    expect(await b.cluster.isCurrent('h1')).toBe(false);
    expect(await a.cluster.isCurrent('h1')).toBe(true);
  });

  it('replays a running turn to a follower on another replica, then follows it live in order to its end', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix, { followBlockMs: 200 });
    const lease = await a.cluster.lock('s1');
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't1' });
    for (let index = 0; index < 5; index += 1) a.cluster.publish('s1', { type: 'turn-part', turnId: 't1', part: { type: 'text-delta', delta: `${index}` } });
    expect(await b.cluster.runningTurn('s1')).toBe('t1');

    const seen: ClusterTurnEvent[] = [];
    const stop = await b.cluster.follow('s1', 't1', (event) => seen.push(event));
    cleanups.push(stop);
    expect(seen).toHaveLength(6);
    for (let index = 5; index < 200; index += 1) a.cluster.publish('s1', { type: 'turn-part', turnId: 't1', part: { type: 'text-delta', delta: `${index}` } });
    a.cluster.publish('s1', { type: 'turn-end', turnId: 't1' });
    await lease.release();
    await until(() => seen.at(-1)?.type === 'turn-end' || undefined, 'the turn end to reach the follower');
    expect(seen[0]).toEqual({ type: 'turn-start', turnId: 't1' });
    expect(seen.slice(1, -1).map((event) => (event as { part: { delta: string } }).part.delta)).toEqual(Array.from({ length: 200 }, (_, index) => `${index}`));
    expect(seen.at(-1)).toEqual({ type: 'turn-end', turnId: 't1' });
    expect(await b.cluster.runningTurn('s1')).toBeUndefined();

    // A finished turn followed later replays whole, end included.
    const again: ClusterTurnEvent[] = [];
    await b.cluster.follow('s1', 't1', (event) => again.push(event));
    expect(again).toEqual(seen);
  });

  it('close() stops the turns it follows: their reader connections close and their listeners get nothing more', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix, { followBlockMs: 200 });
    const observer = client();
    const lease = await a.cluster.lock('s1');
    cleanups.push(() => lease.release());
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't1' });
    expect(await b.cluster.runningTurn('s1')).toBe('t1');
    const connections = async (): Promise<number> => String(await observer.client('LIST')).trim().split('\n').length;
    const before = await connections();
    const seen: ClusterTurnEvent[] = [];
    await b.cluster.follow('s1', 't1', (event) => seen.push(event));
    await until(async () => (await connections()) === before + 1 || undefined, "the follower's connection", 5_000);
    await b.cluster.close();
    await until(async () => (await connections()) === before || undefined, "the follower's connection to close", 5_000);
    a.cluster.publish('s1', { type: 'turn-end', turnId: 't1' });
    // The end is in the stream (a live follower replays it), and a reader still running on the
    // closed replica would have read it within its block time: the closed one's listener got nothing.
    const replay: ClusterTurnEvent[] = [];
    cleanups.push(await a.cluster.follow('s1', 't1', (event) => replay.push(event)));
    await until(() => replay.at(-1)?.type === 'turn-end' || undefined, 'the end in the stream', 5_000);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(seen).toEqual([{ type: 'turn-start', turnId: 't1' }]);
  });

  it('announces each turn start to the watchers of its session on every replica, until they stop watching', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    const onB: string[] = [];
    const onA: string[] = [];
    const otherSession: string[] = [];
    const stopB = await b.cluster.watchTurns('s1', (turnId) => onB.push(turnId));
    const stopSecondB = await b.cluster.watchTurns('s1', (turnId) => onB.push(`second:${turnId}`));
    const stopA = await a.cluster.watchTurns('s1', (turnId) => onA.push(turnId));
    cleanups.push(stopA);
    cleanups.push(await b.cluster.watchTurns('s2', (turnId) => otherSession.push(turnId)));
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't1' });
    a.cluster.publish('s1', { type: 'turn-part', turnId: 't1', part: { type: 'text-delta', delta: 'x' } });
    a.cluster.publish('s1', { type: 'turn-end', turnId: 't1' });
    await until(() => (onB.length === 2 && onA.length === 1) || undefined, 'the start to reach both replicas');
    expect(onB).toEqual(['t1', 'second:t1']);
    expect(onA).toEqual(['t1']);
    // The announced turn is there to follow.
    const events: ClusterTurnEvent[] = [];
    await b.cluster.follow('s1', 't1', (event) => events.push(event));
    expect(events.map((event) => event.type)).toEqual(['turn-start', 'turn-part', 'turn-end']);

    stopB();
    stopB();
    b.cluster.publish('s1', { type: 'turn-start', turnId: 't2' });
    await until(() => onA.length === 2 || undefined, 'the second start');
    expect(onB).toEqual(['t1', 'second:t1', 'second:t2']);
    stopSecondB();
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't3' });
    await until(() => onA.length === 3 || undefined, 'the third start');
    expect(onB).toEqual(['t1', 'second:t1', 'second:t2']);
    expect(otherSession).toEqual([]);
    expect(a.reports.concat(b.reports)).toEqual([]);
  });

  it('ends a followed turn as lost when its replica lets go of the session without ending it', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix, { followBlockMs: 100 });
    const lease = await a.cluster.lock('s1');
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't1' });
    a.cluster.publish('s1', { type: 'turn-part', turnId: 't1', part: { type: 'start' } });
    const seen: ClusterTurnEvent[] = [];
    cleanups.push(await b.cluster.follow('s1', 't1', (event) => seen.push(event)));
    await lease.release();
    await until(() => seen.at(-1)?.type === 'turn-end' || undefined, 'the lost turn to end');
    expect(seen.at(-1)).toEqual({ type: 'turn-end', turnId: 't1', lost: true });
    expect(await b.cluster.runningTurn('s1')).toBeUndefined();
    // Following a turn that is not the latest one ends at once.
    const other: ClusterTurnEvent[] = [];
    await b.cluster.follow('s1', 'another', (event) => other.push(event));
    expect(other).toEqual([{ type: 'turn-end', turnId: 'another', lost: true }]);
  });
});

const entry = (id: string, text: string): IHistoryEntry => ({ id, timestamp: '2026-01-01T00:00:00.000Z', category: 'chat', type: 'user', data: { role: 'user', content: text } });
const record = (id: string, texts: string[]): ISessionRecord => ({
  id,
  cwd: '/srv',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: new Date().toISOString(),
  history: texts.map((text, index) => entry(`e${index}`, text)),
  messages: texts.map((text) => ({ role: 'user' as const, content: text })),
});

/** Replica A reaching Redis through a proxy that can freeze (a partition) and heal, with a short lock TTL. */
async function partitionedReplica(prefix: string, observer: Redis) {
  const proxy = await frozenProxy(observer.options.port!);
  cleanups.push(() => proxy.close());
  const redis = new Redis({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  cleanups.push(() => redis.disconnect());
  const store = new RedisSessionStore({ redis, prefix });
  return { proxy, store, cluster: new RedisSessionCluster({ redis, store, lockTtlMs: 400 }) };
}

describe.runIf(hasRedisServer)('RedisSessionCluster: the lease fences saves and turn events (real redis-server)', () => {
  it('a save sent by a replica whose lease was lost cannot land after another replica took the session, and that replica saves its turn', async () => {
    const prefix = prefixOf();
    const observer = client();
    const a = await partitionedReplica(prefix, observer);
    const b = replica(prefix, { lockTtlMs: 400 });
    await a.store.save(record('s1', ['first']), { appendedFrom: 0, rewritten: false, created: true });
    const leaseA = await a.cluster.lock('s1');
    // A's turn runs; the network between A and Redis stops forwarding, and A is told its lease is lost.
    a.proxy.freeze();
    await until(() => leaseA.signal.aborted || undefined, "A's lease to be declared lost", 5_000);
    // The aborted turn ends with a save (the kernel persists in the run's finally): it waits in A's socket.
    const savedByA = a.store.save(record('s1', ['first', 'partial turn on A'])).then(
      () => 'saved',
      (error: { code?: string; details?: { reason?: string } }) => `${error.code} ${error.details?.reason}`,
    );
    // B takes the session once A's key expired and loads it, as SessionHub.startTurn does.
    const leaseB = await b.cluster.lock('s1', { waitMs: 5_000 });
    cleanups.push(() => leaseB.release());
    await b.store.load('s1');
    a.proxy.heal();
    expect(await savedByA).toBe('session_conflict lease_lost');
    await b.store.save(record('s1', ['first', 'turn on B']));
    const stored = (await observer.lrange(`${prefix}:session:s1:history`, 0, -1)).map((json) => (JSON.parse(json) as { data: { content: string } }).data.content);
    expect(stored).toEqual(['first', 'turn on B']);
    await leaseA.release();
  });

  it('a save made without the lease while another replica holds the session is refused; without any lock it lands', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    await a.store.save(record('s1', ['first']), { appendedFrom: 0, rewritten: false, created: true });
    const lease = await b.cluster.lock('s1');
    await expect(a.store.save(record('s1', ['first', 'unlocked on A']))).rejects.toMatchObject({ code: 'session_conflict', details: { reason: 'locked' } });
    await lease.release();
    await a.store.save(record('s1', ['first', 'unlocked on A']));
    expect(await a.redis.llen(`${prefix}:session:s1:history`)).toBe(2);
  });

  it("a lost replica's late turn events do not reach the new owner's running turn nor end it for its followers", async () => {
    const prefix = prefixOf();
    const observer = client();
    const a = await partitionedReplica(prefix, observer);
    const b = replica(prefix, { lockTtlMs: 400 });
    const c = replica(prefix, { followBlockMs: 100 });
    const leaseA = await a.cluster.lock('s1');
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't1' });
    await until(async () => (await c.cluster.runningTurn('s1')) === 't1' || undefined, "t1's start");
    a.proxy.freeze();
    await until(() => leaseA.signal.aborted || undefined, "A's lease to be declared lost", 5_000);
    // runTurn on A after the loss: the abort part and the end are published, and wait in A's socket.
    a.cluster.publish('s1', { type: 'turn-part', turnId: 't1', part: { type: 'abort' } });
    a.cluster.publish('s1', { type: 'turn-end', turnId: 't1' });
    const leaseB = await b.cluster.lock('s1', { waitMs: 5_000 });
    cleanups.push(() => leaseB.release());
    b.cluster.publish('s1', { type: 'turn-start', turnId: 't2' });
    await until(async () => (await c.cluster.runningTurn('s1')) === 't2' || undefined, "t2's start");
    const seen: ClusterTurnEvent[] = [];
    cleanups.push(await c.cluster.follow('s1', 't2', (event) => seen.push(event)));
    a.proxy.heal();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await c.cluster.runningTurn('s1')).toBe('t2');
    expect(seen).toEqual([{ type: 'turn-start', turnId: 't2' }]);
    // Nor do they reach t1's stream: followed now, it ends as lost where A lost the session.
    const t1: ClusterTurnEvent[] = [];
    cleanups.push(await c.cluster.follow('s1', 't1', (event) => t1.push(event)));
    await until(() => t1.at(-1)?.type === 'turn-end' || undefined, "t1's lost end");
    expect(t1).toEqual([
      { type: 'turn-start', turnId: 't1' },
      { type: 'turn-end', turnId: 't1', lost: true },
    ]);
    await leaseA.release();
  });

  it('a follower that reaches a turn after the next turn started still reads it whole, to its own end', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix, { followBlockMs: 100 });
    const first = await a.cluster.lock('s1');
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't1' });
    a.cluster.publish('s1', { type: 'turn-part', turnId: 't1', part: { type: 'text-delta', delta: 'one' } });
    a.cluster.publish('s1', { type: 'turn-end', turnId: 't1' });
    await first.release();
    // The client's next prompt, at once: t2 starts before B's follower of t1 read anything.
    const second = await a.cluster.lock('s1');
    cleanups.push(() => second.release());
    a.cluster.publish('s1', { type: 'turn-start', turnId: 't2' });
    a.cluster.publish('s1', { type: 'turn-part', turnId: 't2', part: { type: 'text-delta', delta: 'two' } });
    await until(async () => (await b.cluster.runningTurn('s1')) === 't2' || undefined, "t2's start");
    const t1: ClusterTurnEvent[] = [];
    await b.cluster.follow('s1', 't1', (event) => t1.push(event));
    expect(t1).toEqual([
      { type: 'turn-start', turnId: 't1' },
      { type: 'turn-part', turnId: 't1', part: { type: 'text-delta', delta: 'one' } },
      { type: 'turn-end', turnId: 't1' },
    ]);
    // Only the latest turn stays long: the earlier one expires within minutes.
    const ttl = await a.redis.pttl(`${prefix}:session:s1:turn:t1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5 * 60 * 1000);
    expect(await a.redis.pttl(`${prefix}:session:s1:turn:t2`)).toBeGreaterThan(5 * 60 * 1000);
  });

  it('one stored record that cannot be read is left out of the listings and reported once, naming it', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    await a.store.save({ ...record('good', ['hi']), serverOwner: 'alice' }, { appendedFrom: 0, rewritten: false, created: true });
    // A hash edited by hand (or written by another version), and an index member that is no session id.
    await a.redis.hset(`${prefix}:session:bad`, 'meta', '{not json', 'revision', '1');
    await a.redis.zadd(`${prefix}:sessions`, Date.now(), 'bad', Date.now(), 'not an id');
    expect((await a.cluster.heads()).map((head) => head.id)).toEqual(['good']);
    expect((await a.cluster.heads()).map((head) => head.id)).toEqual(['good']);
    expect(a.reports).toHaveLength(2);
    expect(a.reports.find((report) => report.includes('"bad"'))).toContain('not JSON');
    expect(a.reports.some((report) => report.includes('"not an id"'))).toBe(true);
    const warnings: string[] = [];
    const store = new RedisSessionStore({ redis: a.redis, prefix, report: (error, operation) => warnings.push(`${operation}: ${String(error)}`) });
    expect((await store.list()).map((stored) => stored.id)).toEqual(['good']);
    expect(warnings).toHaveLength(2);
  });
});
