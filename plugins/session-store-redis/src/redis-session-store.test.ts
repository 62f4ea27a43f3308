import { randomUUID } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import type { IHistoryEntry, ISessionRecord, Message } from '@tessera/contracts';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { hasRedisServer, startRedis, until, type TestRedis } from '../../background-bullmq/src/testing/redis-server.test-helper.js';
import { openRedis } from './redis-connection.js';
import { RedisSessionStore } from './redis-session-store.js';

let server: TestRedis | undefined;
const clients: Redis[] = [];

beforeAll(async () => {
  if (hasRedisServer) server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
});

function client(): Redis {
  const redis = new Redis({ host: '127.0.0.1', port: server!.port, maxRetriesPerRequest: 1 });
  clients.push(redis);
  return redis;
}

/** A store as one process has it: its own connection and its own remembered revisions. */
function store(prefix: string): RedisSessionStore {
  return new RedisSessionStore({ redis: client(), prefix });
}

const prefixOf = (): string => `t${randomUUID().slice(0, 8)}`;

function user(text: string, at = '2026-01-01T00:00:00.000Z'): IHistoryEntry<Message> {
  return { id: randomUUID(), timestamp: at, category: 'chat', type: 'user', data: { role: 'user', content: text } };
}

function event(type: string): IHistoryEntry {
  return { id: randomUUID(), timestamp: '2026-01-01T00:00:00.000Z', category: 'event', type, data: { note: type } };
}

function record(id: string, history: IHistoryEntry[], updatedAt = '2026-01-01T00:00:00.000Z'): ISessionRecord {
  return {
    id,
    cwd: '/srv/project',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt,
    messages: history.filter((entry) => entry.category === 'chat').map((entry) => entry.data as Message),
    history,
    systemPrompt: 'You help.',
    serverOwner: 'alice',
  };
}

describe.runIf(hasRedisServer)('RedisSessionStore (real redis-server)', () => {
  it('stores a new session, appends only new entries, and another process loads every entry in order', async () => {
    const prefix = prefixOf();
    const a = store(prefix);
    const history = [user('one'), event('tool-summary'), user('two')];
    await a.save(record('s1', history), { appendedFrom: 0, rewritten: false, created: true });
    expect(a.revision('s1')).toBe(1);

    // A hundred more entries, then one: the second save sends only the one.
    for (let index = 0; index < 100; index += 1) history.push(user(`entry ${index}`));
    await a.save(record('s1', history), { appendedFrom: 3, rewritten: false });
    const sent = vi.spyOn((a as unknown as { redis: Redis }).redis, 'evalsha');
    history.push(user('last'));
    await a.save(record('s1', history), { appendedFrom: 103, rewritten: false });
    const args = sent.mock.calls[0]!.map(String);
    expect(args.filter((arg) => arg.includes('"content"'))).toHaveLength(2); // the new entry and its message
    expect(args.some((arg) => arg.includes('entry 5'))).toBe(false);
    sent.mockRestore();

    const b = store(prefix);
    const loaded = await b.load('s1');
    expect(loaded).toEqual(record('s1', history));
    expect(b.revision('s1')).toBe(3);
  });

  it('replaces the stored history when the session rewrote it (a compaction)', async () => {
    const prefix = prefixOf();
    const a = store(prefix);
    await a.save(record('s2', [user('one'), user('two'), user('three')]), { appendedFrom: 0, rewritten: false, created: true });
    const summary = [user('[Context Summary] one two three')];
    await a.save(record('s2', summary), { appendedFrom: 0, rewritten: true });
    expect((await store(prefix).load('s2'))!.history).toEqual(summary);
    // A shorter history without the flag is caught too: it is not an append of what was stored.
    const other = [user('other')];
    await a.save(record('s2', other));
    expect((await store(prefix).load('s2'))!.messages).toEqual([{ role: 'user', content: 'other' }]);
  });

  it('lists newest updatedAt first without counting as a load, and deletes', async () => {
    const prefix = prefixOf();
    const a = store(prefix);
    await a.save(record('old', [user('x')], '2026-01-01T00:00:00.000Z'), { appendedFrom: 0, rewritten: false, created: true });
    await a.save(record('new', [user('y')], '2026-03-01T00:00:00.000Z'), { appendedFrom: 0, rewritten: false, created: true });
    await a.save(record('mid', [user('z')], '2026-02-01T00:00:00.000Z'), { appendedFrom: 0, rewritten: false, created: true });
    const b = store(prefix);
    expect((await b.list()).map((entry) => entry.id)).toEqual(['new', 'mid', 'old']);
    expect(b.revision('new')).toBeUndefined();

    await a.save(record('old', [user('x'), user('again')], '2026-04-01T00:00:00.000Z'));
    expect((await b.list()).map((entry) => entry.id)).toEqual(['old', 'new', 'mid']);

    await b.delete('mid');
    await b.delete('never-stored');
    expect(await b.load('mid')).toBeUndefined();
    expect((await b.list()).map((entry) => entry.id)).toEqual(['old', 'new']);
  });

  it('refuses a save from a stale copy with session_conflict and keeps the newer record', async () => {
    const prefix = prefixOf();
    const first = store(prefix);
    const second = store(prefix);
    await first.save(record('shared', [user('one')]), { appendedFrom: 0, rewritten: false, created: true });
    const mine = (await first.load('shared'))!;
    const theirs = (await second.load('shared'))!;
    await second.save({ ...theirs, history: [...theirs.history, user('from B')], messages: [...theirs.messages, { role: 'user', content: 'from B' }] });
    expect(await first.isCurrent('shared')).toBe(false);
    expect(await second.isCurrent('shared')).toBe(true);

    const stale = { ...mine, history: [...mine.history, user('from A')], messages: [...mine.messages, { role: 'user' as const, content: 'from A' }] };
    await expect(first.save(stale, { appendedFrom: 1, rewritten: false })).rejects.toMatchObject({ code: 'session_conflict', recoverable: true });
    expect((await store(prefix).load('shared'))!.history.map((entry) => (entry.data as { content: string }).content)).toEqual(['one', 'from B']);
    // A stale copy with nothing new (a session ending untouched) is not a conflict.
    await expect(first.save(mine)).resolves.toBeUndefined();

    // Loaded again, the copy is current and its save goes through.
    const fresh = (await first.load('shared'))!;
    expect(await first.isCurrent('shared')).toBe(true);
    await first.save({ ...fresh, history: [...fresh.history, user('from A')], messages: [...fresh.messages, { role: 'user', content: 'from A' }] });
    expect((await store(prefix).load('shared'))!.history).toHaveLength(3);
  });

  it('an unchanged copy saves nothing, even when it lists other tool schemas (a copy resumed on another replica)', async () => {
    const prefix = prefixOf();
    const a = store(prefix);
    const b = store(prefix);
    await a.save({ ...record('s1', [user('one')]), toolSchemas: [{ name: 'Read', description: 'reads', parameters: { type: 'object' } }, { name: 'tessera_command_model', description: 'a command', parameters: { type: 'object' } }] });
    const loaded = (await b.load('s1'))!;
    // B's copy ends untouched, its tools listed without the command tools: the stored revision stays A's.
    await b.save({ ...loaded, toolSchemas: [{ name: 'Read', description: 'reads', parameters: { type: 'object' } }], updatedAt: '2026-01-02T00:00:00.000Z' });
    expect(await b.storedRevision('s1')).toBe(1);
    // A's next save is not refused as stale.
    await a.save({ ...record('s1', [...loaded.history, user('two')]), toolSchemas: loaded.toolSchemas });
    expect(await a.storedRevision('s1')).toBe(2);
    // A real change of another field is saved.
    await a.save({ ...record('s1', [...loaded.history, user('two')]), name: 'named' });
    expect((await b.load('s1'))!.name).toBe('named');
  });

  it('a discarded copy is never saved, until the session is loaded again', async () => {
    const prefix = prefixOf();
    const a = store(prefix);
    const b = store(prefix);
    await a.save(record('s1', [user('one')]));
    const loaded = (await b.load('s1'))!;
    b.discard('s1');
    await b.save({ ...loaded, history: [...loaded.history, user('from a discarded copy')] });
    expect(await b.storedRevision('s1')).toBe(1);
    const again = (await b.load('s1'))!;
    await b.save({ ...again, history: [...again.history, user('two')] });
    expect((await a.load('s1'))!.history.map((entry) => (entry.data as { content: string }).content)).toEqual(['one', 'two']);
  });

  it('runs saves of one session from one process one after another (none is refused as stale)', async () => {
    const prefix = prefixOf();
    const a = store(prefix);
    const history = [user('one')];
    await a.save(record('busy', history), { appendedFrom: 0, rewritten: false, created: true });
    const renamed = { ...record('busy', history), name: 'renamed' };
    const longer = record('busy', [...history, user('two')]);
    await Promise.all([a.save(renamed), a.save(longer, { appendedFrom: 1, rewritten: false })]);
    expect(a.revision('busy')).toBe(3);
    expect((await store(prefix).load('busy'))!.history).toHaveLength(2);
  });

  it('refuses to overwrite a stored session this process never loaded', async () => {
    const prefix = prefixOf();
    await store(prefix).save(record('taken', [user('one')]), { appendedFrom: 0, rewritten: false, created: true });
    const other = store(prefix);
    await expect(other.save(record('taken', [user('another')]), { appendedFrom: 0, rewritten: false, created: true })).rejects.toMatchObject({ code: 'session_conflict' });
    // After release, this process's copy is forgotten: a save must load first.
    const owner = store(prefix);
    await owner.load('taken');
    owner.release('taken');
    expect(await owner.isCurrent('taken')).toBe(false);
    await expect(owner.save(record('taken', [user('one'), user('two')]))).rejects.toMatchObject({ code: 'session_conflict' });
  });

  it('refuses invalid session ids before they reach a key, and keeps every key under the prefix', async () => {
    const prefix = prefixOf();
    const a = store(prefix);
    const redis = client();
    for (const id of ['../escape', 'a:b', '', 'x'.repeat(129), '*']) {
      await expect(a.save(record(id, [user('x')]))).rejects.toMatchObject({ code: 'invalid_session_id' });
      await expect(a.load(id)).rejects.toMatchObject({ code: 'invalid_session_id' });
      await expect(a.delete(id)).rejects.toMatchObject({ code: 'invalid_session_id' });
    }
    await expect(a.save({ ...record('bad-date', []), updatedAt: 'yesterday' })).rejects.toMatchObject({ code: 'invalid_session_record' });
    expect(await redis.keys(`${prefix}*`)).toEqual([]);

    await a.save(record('kept', [user('x')]), { appendedFrom: 0, rewritten: false, created: true });
    const keys = await redis.keys('*');
    const mine = keys.filter((key) => key.startsWith(`${prefix}:`));
    expect(mine.sort()).toEqual([`${prefix}:session:kept`, `${prefix}:session:kept:history`, `${prefix}:session:kept:messages`, `${prefix}:sessions`]);
    expect(keys.filter((key) => key.includes('kept') && !key.startsWith(`${prefix}:`))).toEqual([]);
  });

  it('fails with session_store_unavailable, not a crash, when Redis does not answer', async () => {
    const warnings: string[] = [];
    // Nothing listens on port 1: every connection attempt is refused.
    const { redis } = openRedis({ host: '127.0.0.1', port: 1, maxRetriesPerRequest: 1, retryStrategy: () => 20 }, (message) => warnings.push(message));
    clients.push(redis);
    const unreachable = new RedisSessionStore({ redis, prefix: 'down' });
    await expect(unreachable.load('s1')).rejects.toMatchObject({ code: 'session_store_unavailable', category: 'io', recoverable: true });
    await expect(unreachable.save(record('s1', [user('x')]), { appendedFrom: 0, rewritten: false, created: true })).rejects.toMatchObject({ code: 'session_store_unavailable' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Redis connection failed .*reconnecting/);
  });

  it('a command Redis ran whose reply the dropped connection lost fails instead of being run again after the reconnection', async () => {
    // A loopback proxy whose `cut()` stops passing replies, then closes the connection.
    const pairs: Array<[Socket, Socket]> = [];
    const proxy = createServer((inbound) => {
      const outbound = connect(server!.port, '127.0.0.1');
      for (const socket of [inbound, outbound]) socket.on('error', () => undefined);
      inbound.pipe(outbound);
      outbound.pipe(inbound);
      pairs.push([inbound, outbound]);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      // The package's defaults but a shorter command timeout (what fails the dropped command).
      const { redis } = openRedis({ host: '127.0.0.1', port: (proxy.address() as { port: number }).port, retryStrategy: () => 20, commandTimeout: 500 }, () => undefined);
      clients.push(redis);
      const key = `${prefixOf()}:appended`;
      await redis.ping();
      for (const [inbound, outbound] of pairs) outbound.unpipe(inbound);
      const appended = redis.rpush(key, 'part').then(
        () => 'answered',
        () => 'failed',
      );
      const observer = client();
      await until(async () => ((await observer.llen(key)) === 1 ? true : undefined), 'Redis to run the command');
      for (const [inbound, outbound] of pairs.splice(0)) {
        inbound.destroy();
        outbound.destroy();
      }
      expect(await appended).toBe('failed');
      await redis.ping();
      expect(await observer.llen(key)).toBe(1);
    } finally {
      proxy.close();
    }
  });

  it('while Redis is away: waits that double (0.2, 0.4, 0.8 s…), saves refused as session_store_unavailable, one warning each way', async () => {
    const own = await startRedis();
    try {
      const warnings: string[] = [];
      // The package's defaults: no retry option given.
      const { redis } = openRedis({ host: '127.0.0.1', port: own.port }, (message) => warnings.push(message));
      clients.push(redis);
      const waits: number[] = [];
      redis.on('reconnecting', (delay: number) => waits.push(delay));
      const away = new RedisSessionStore({ redis, prefix: 'backoff' });
      await away.save(record('before', [user('x')]), { appendedFrom: 0, rewritten: false, created: true });
      // Down for 2 s: three reconnection attempts (0.2 + 0.4 + 0.8 s) fail, the fourth (1.6 s later) finds it back.
      const back = own.restart(2000);
      await until(() => (warnings.length > 0 ? true : undefined), 'the outage warning');
      expect(warnings).toEqual([expect.stringMatching(/Redis connection failed .*reconnecting with backoff/)]);
      await expect(away.save(record('during', [user('y')]), { appendedFrom: 0, rewritten: false, created: true })).rejects.toMatchObject({ code: 'session_store_unavailable', recoverable: true });
      await back;
      await until(() => (warnings.includes('Redis connection is back.') ? true : undefined), 'the recovery notice');
      await away.save(record('after', [user('z')]), { appendedFrom: 0, rewritten: false, created: true });
      expect(await away.load('after')).toMatchObject({ id: 'after' });
      expect(waits.slice(0, 3)).toEqual([200, 400, 800]);
      expect(waits.every((wait, index) => wait <= 5_000 && (index === 0 || wait >= waits[index - 1]!))).toBe(true);
      expect(warnings).toHaveLength(2);
    } finally {
      await own.stop();
    }
  }, 20_000);
});
