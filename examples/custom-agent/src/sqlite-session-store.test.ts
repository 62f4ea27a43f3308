import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore, type ISessionRecord } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { scriptedProvider } from '@tessera/plugin-provider-scripted';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SessionRecordCorruptError, SqliteSessionStore, sqliteSessionStore } from './sqlite-session-store.js';

const heldHandles: object[] = [];
const database = (): string => join(mkdtempSync(join(tmpdir(), 'relnotes-store-')), 'nested', 'sessions.db');

const record = (id: string, updatedAt: string, extra: Partial<ISessionRecord> = {}): ISessionRecord => ({
  id,
  cwd: '/repo',
  createdAt: '2025-03-01T00:00:00.000Z',
  updatedAt,
  messages: [{ role: 'user', content: [{ type: 'text', text: `hello ${id}` }] }],
  history: [],
  ...extra,
});

describe('SqliteSessionStore', () => {
  it('saves, loads, lists newest first and deletes; a new connection sees the same sessions', () => {
    const path = database();
    const store = new SqliteSessionStore(path);
    store.save(record('a', '2025-03-01T10:00:00.000Z'));
    store.save(record('b', '2025-03-02T10:00:00.000Z', { name: 'v1.1 notes', labels: ['kept'] }));
    store.save(record('a', '2025-03-03T10:00:00.000Z'));
    expect(store.list().map((stored) => stored.id)).toEqual(['a', 'b']);
    expect(store.load('b')).toMatchObject({ name: 'v1.1 notes', labels: ['kept'] });
    expect(store.load('missing')).toBeUndefined();
    store.close();

    const reopened = new SqliteSessionStore(path);
    expect(reopened.load('a')?.updatedAt).toBe('2025-03-03T10:00:00.000Z');
    reopened.delete('a');
    expect(reopened.list().map((stored) => stored.id)).toEqual(['b']);
    reopened.close();
  });

  it('names the file and the session when a stored row is not a record', () => {
    const path = database();
    const store = new SqliteSessionStore(path);
    store.save(record('a', '2025-03-01T10:00:00.000Z'));
    // Kept reachable: with better-sqlite3 12 on Node 24.19+, an idle GC of a wrapper aborts the process.
    const raw = new Database(path);
    raw.exec("UPDATE sessions SET record = '{\"id\":\"a\"}' WHERE id = 'a'");
    heldHandles.push(raw);
    raw.close();
    expect(() => store.load('a')).toThrow(SessionRecordCorruptError);
    expect(() => store.load('a')).toThrow(`Session a in ${path} cannot be read`);
    store.close();
  });

  it('is one connection per kernel, closed when the kernel shuts down', async () => {
    const path = database();
    const plugin = sqliteSessionStore({ path });
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [{ text: 'ok' }] }), plugin] });
    await kernel.createSession({ sessionId: 's1', cwd: '/repo' }).run('hi');
    const store = kernel.get(SessionStore) as SqliteSessionStore;
    expect(store.load('s1')?.messages).toHaveLength(2);
    await kernel.shutdown();
    expect(() => store.list()).toThrow(/database connection is not open/);
    expect(() => sqliteSessionStore({ path: '' })).toThrow(/path must be a file path/);
  });
});
