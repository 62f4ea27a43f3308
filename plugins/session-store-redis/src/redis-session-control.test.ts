import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { until } from '../../background-bullmq/src/testing/redis-server.test-helper.js';
import { hasRedisServer, useClusterRedis } from './cluster.test-helper.js';
import { RedisSessionCluster } from './redis-session-cluster.js';

const { cleanups, connect, replica: makeReplica, prefixOf: prefixWith } = useClusterRedis();
const replica = (prefix: string, options: { controlTimeoutMs?: number } = {}) => makeReplica(prefix, options);
const prefixOf = (): string => prefixWith('k');

describe.runIf(hasRedisServer)('RedisSessionCluster: control requests (real redis-server)', () => {
  it('reaches the replica serving the session and brings its answer back, each to its own sender', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    const c = replica(prefix);
    const received: unknown[] = [];
    const stop = await b.cluster.serveControl('s1', (message) => {
      received.push(message);
      return { echoed: message };
    });
    expect(await a.cluster.control('s1', { type: 'abort', owner: 'alice' })).toEqual({ served: true, answer: { echoed: { type: 'abort', owner: 'alice' } } });
    expect(received).toEqual([{ type: 'abort', owner: 'alice' }]);

    // Many at once from two senders: every answer reaches the request that asked for it.
    const asks = Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? a : c).cluster.control('s1', { n: index }));
    expect(await Promise.all(asks)).toEqual(Array.from({ length: 40 }, (_, index) => ({ served: true, answer: { echoed: { n: index } } })));

    // Another session is not served; after stop, neither is this one.
    expect(await a.cluster.control('s2', { n: 1 })).toEqual({ served: false });
    stop();
    await until(async () => (await a.cluster.control('s1', { n: 2 })).served === false || undefined, 'the session to stop being served');

    // Nothing was stored: channels are not keys.
    expect(await a.redis.keys(`${prefix}:*`)).toEqual([]);
  });

  it('a replica that stops serving answers "not served" to a request already on its way, so the sender does not wait for the timeout', async () => {
    const prefix = prefixOf();
    const a = replica(prefix, { controlTimeoutMs: 3_000 });
    const b = replica(prefix);
    const c = replica(prefix);
    // Both requests are published before b reads either; handling the first stops b serving s1,
    // so b gets the second after it stopped serving s1 and before Redis has its UNSUBSCRIBE.
    const window = async (): Promise<void> => {
      let stopS1: () => void = () => undefined;
      const stopS0 = await b.cluster.serveControl('s0', () => {
        stopS1();
        return 'stopped serving s1';
      });
      cleanups.push(stopS0);
      stopS1 = await b.cluster.serveControl('s1', () => 'b answered');
    };

    await window();
    expect(await Promise.all([a.cluster.control('s0', {}), a.cluster.control('s1', {})])).toEqual([{ served: true, answer: 'stopped serving s1' }, { served: false }]);

    // When another replica got the request too, its answer is the one the sender gets.
    cleanups.push(await c.cluster.serveControl('s1', () => 'c answered'));
    await window();
    expect(await Promise.all([a.cluster.control('s0', {}), a.cluster.control('s1', {})])).toEqual([{ served: true, answer: 'stopped serving s1' }, { served: true, answer: 'c answered' }]);
    expect([...a.reports, ...b.reports, ...c.reports]).toEqual([]);
  });

  it('a turn start that reaches a replica after its watchers left is ignored, not taken for a control request', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    const watched: string[] = [];
    const stopWatching = await b.cluster.watchTurns('s1', (turnId) => watched.push(turnId));
    let handled = false;
    cleanups.push(
      await b.cluster.serveControl('s0', () => {
        stopWatching();
        handled = true;
        return 'stopped watching s1';
      }),
    );
    // Both published before b reads either: the turn start arrives after its watcher left, before the UNSUBSCRIBE.
    const replyTo = `${prefix}:control:replies:${randomUUID()}`;
    const [controlReceivers, turnReceivers] = await Promise.all([
      a.redis.publish(`${prefix}:session:s0:control`, JSON.stringify({ id: 'r1', replyTo, message: {} })),
      a.redis.publish(`${prefix}:session:s1:turns`, 'turn-1'),
    ]);
    expect([controlReceivers, turnReceivers]).toEqual([1, 1]);
    await until(() => handled || undefined, 'the control request to be handled');
    // A well-formed request after both is answered: b has processed everything before it.
    expect(await a.cluster.control('s0', {})).toEqual({ served: true, answer: 'stopped watching s1' });
    expect(watched).toEqual([]);
    expect(b.reports).toEqual([]);
  });

  it('an async handler answers later; a handler that throws is control_failed with its message', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    let release: (() => void) | undefined;
    cleanups.push(
      await b.cluster.serveControl('s1', async (message) => {
        if ((message as { fail?: boolean }).fail) throw new Error('no such request here');
        await new Promise<void>((resolve) => (release = resolve));
        return 'late';
      }),
    );
    const waiting = a.cluster.control('s1', {});
    await until(() => release, 'the handler to be called');
    release!();
    expect(await waiting).toEqual({ served: true, answer: 'late' });
    await expect(a.cluster.control('s1', { fail: true })).rejects.toMatchObject({ code: 'control_failed', recoverable: true, message: expect.stringContaining('no such request here') });
  });

  it('a serving replica that dies mid-request is control_timeout, and afterwards the session is not served', async () => {
    const prefix = prefixOf();
    const a = replica(prefix, { controlTimeoutMs: 300 });
    const b = replica(prefix);
    let taken = false;
    await b.cluster.serveControl('s1', () => {
      taken = true;
      return new Promise(() => undefined);
    });
    const waiting = a.cluster.control('s1', { type: 'abort' });
    await until(() => taken || undefined, 'the request to reach the serving replica');
    // The serving replica goes away with the request in hand (its connections close).
    await b.cluster.close();
    b.redis.disconnect();
    await expect(waiting).rejects.toMatchObject({ code: 'control_timeout', message: expect.stringContaining('did not answer within 300 ms') });
    await until(async () => (await a.cluster.control('s1', {})).served === false || undefined, 'the dead replica to drop its subscription');

    // A serving replica that hangs: the per-call timeout applies.
    const c = replica(prefix);
    cleanups.push(await c.cluster.serveControl('s2', () => new Promise(() => undefined)));
    await expect(a.cluster.control('s2', {}, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'control_timeout', message: expect.stringContaining('100 ms') });
  });

  it('a requester that closes fails its waiting requests at once', async () => {
    const prefix = prefixOf();
    const a = replica(prefix, { controlTimeoutMs: 60_000 });
    const b = replica(prefix);
    let taken = false;
    cleanups.push(
      await b.cluster.serveControl('s1', () => {
        taken = true;
        return new Promise(() => undefined);
      }),
    );
    const waiting = a.cluster.control('s1', {});
    await until(() => taken || undefined, 'the request to reach the serving replica');
    await a.cluster.close();
    await expect(waiting).rejects.toMatchObject({ code: 'control_failed', message: expect.stringContaining('shutting down') });
    await expect(a.cluster.control('s1', {})).rejects.toThrow(/closed/);
  });

  it('ignores a malformed request and one whose replies channel is outside the prefix', async () => {
    const prefix = prefixOf();
    const a = replica(prefix);
    const b = replica(prefix);
    const received: unknown[] = [];
    cleanups.push(await b.cluster.serveControl('s1', (message) => received.push(message)));
    const spy = connect();
    const leaked: string[] = [];
    spy.on('message', (channel: string) => leaked.push(channel));
    await spy.subscribe('elsewhere');
    expect(await a.redis.publish(`${prefix}:session:s1:control`, 'not json')).toBe(1);
    expect(await a.redis.publish(`${prefix}:session:s1:control`, JSON.stringify({ id: 'x', replyTo: 'elsewhere', message: 1 }))).toBe(1);
    await until(() => (b.reports.length >= 2 ? true : undefined), 'both requests to be reported');
    expect(b.reports.every((report) => report.startsWith('serve a control request'))).toBe(true);
    expect(received).toEqual([]);
    // A well-formed request after them is served, and nothing went to the foreign channel.
    expect(await a.cluster.control('s1', 'ok')).toEqual({ served: true, answer: 1 });
    expect(leaked).toEqual([]);
  });

  it('refuses an invalid session id before it becomes a channel name', async () => {
    const a = replica(prefixOf());
    await expect(a.cluster.control('../x', {})).rejects.toMatchObject({ code: 'invalid_session_id' });
    await expect(a.cluster.serveControl('a b', () => undefined)).rejects.toMatchObject({ code: 'invalid_session_id' });
  });
});
