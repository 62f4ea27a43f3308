import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Diagnostics, type DiagnosticReport } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HistoryStorage, toFtsQuery } from './history-storage.js';
import { promptHistory, PromptHistory } from './plugin.js';

let dir: string;
let storage: HistoryStorage;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-history-'));
  storage = new HistoryStorage({ path: join(dir, 'history.db') });
});
afterEach(async () => {
  await storage.close();
  await rm(dir, { recursive: true, force: true });
});

// better-sqlite3 wrappers this test makes stay reachable (see `retain` in history-storage.ts).
const handles: object[] = [];
const keep = <T extends object>(handle: T): T => (handles.push(handle), handle);

describe('HistoryStorage', () => {
  it('creates the schema in WAL mode with a trigger-fed FTS5 index', async () => {
    storage.add('hello world', '/p');
    await storage.flush();
    const db = keep(new Database(join(dir, 'history.db'), { readonly: true }));
    expect(keep(db.prepare('PRAGMA journal_mode')).pluck().get()).toBe('wal');
    const names = (keep(db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table','trigger')")).all() as { name: string }[]).map((row) => row.name);
    expect(names).toEqual(expect.arrayContaining(['history', 'history_fts']));
    expect(names.some((name) => name.startsWith('history_ai'))).toBe(true);
    expect(keep(db.prepare('SELECT prompt, cwd, typeof(created_at) AS t FROM history')).get()).toEqual({ prompt: 'hello world', cwd: '/p', t: 'integer' });
    db.close();
  });

  it('does not insert synchronously, and trims and skips empty and consecutive duplicate prompts', async () => {
    storage.add('  first  ');
    expect(storage.getRecent()).toEqual([]);
    storage.add('first');
    storage.add('   ');
    storage.add('second');
    storage.add('first');
    await storage.flush();
    expect(storage.getRecent().map((entry) => entry.prompt)).toEqual(['first', 'second', 'first']);
  });

  it('remembers the last prompt across reopen', async () => {
    storage.add('same');
    await storage.close();
    storage = new HistoryStorage({ path: join(dir, 'history.db') });
    storage.add('same');
    await storage.flush();
    expect(storage.getRecent()).toHaveLength(1);
  });

  it('returns recent prompts newest first with clamped limits', async () => {
    for (let index = 0; index < 5; index += 1) storage.add(`p${index}`);
    await storage.flush();
    expect(storage.getRecent(2).map((entry) => entry.prompt)).toEqual(['p4', 'p3']);
    expect(storage.getRecent(-5)).toEqual([]);
    expect(storage.getRecent(1e9)).toHaveLength(5);
    expect(storage.getRecent(Number.NaN)).toEqual([]);
  });

  it('searches with quoted prefix tokens ANDed together', async () => {
    storage.add('refactor the session manager');
    storage.add('write session tests');
    storage.add('unrelated');
    await storage.flush();
    expect(storage.search('sess').map((entry) => entry.prompt)).toEqual(['write session tests', 'refactor the session manager']);
    expect(storage.search('sess refac').map((entry) => entry.prompt)).toEqual(['refactor the session manager']);
    expect(storage.search('sess', 1)).toHaveLength(1);
    expect(toFtsQuery('a "b')).toBe('"a"* """b"*');
  });

  it('returns [] for bad queries instead of throwing', async () => {
    storage.add('text');
    await storage.flush();
    for (const query of ['', '   ', '"', 'AND OR NOT', '(*)', 'col:val', '\u0000', 'NEAR(', undefined as unknown as string]) {
      expect(() => storage.search(query)).not.toThrow();
      expect(Array.isArray(storage.search(query))).toBe(true);
    }
    expect(storage.search('"')).toEqual([]);
  });

  it('rebuilds the index for rows that existed before it', async () => {
    await storage.close();
    const path = join(dir, 'old.db');
    const db = keep(new Database(path));
    db.exec("CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, prompt TEXT NOT NULL, created_at INTEGER NOT NULL DEFAULT (unixepoch()), cwd TEXT); INSERT INTO history(prompt) VALUES ('legacy prompt');");
    db.close();
    storage = new HistoryStorage({ path });
    expect(storage.search('legacy').map((entry) => entry.prompt)).toEqual(['legacy prompt']);
  });
});

describe('promptHistory plugin', () => {
  it('records the prompts of kernel sessions', async () => {
    const history = new HistoryStorage({ path: join(dir, 'plugin.db') });
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'ok' }], plugins: [promptHistory(history)] }) });
    const session = kernel.createSession({ cwd: '/proj' });
    await session.run('remember me');
    await history.flush();
    expect(history.getRecent()).toEqual([expect.objectContaining({ prompt: 'remember me', cwd: '/proj' })]);
    expect(kernel.get(PromptHistory)).toBe(history);
    await kernel.shutdown();
    // A given storage is the caller's: the kernel does not close it.
    history.add('after shutdown');
    await history.flush();
    expect(history.getRecent(1)[0]!.prompt).toBe('after shutdown');
    await history.close();
  });

  it('makes a plugin with no I/O: no directory or database until the first prompt', async () => {
    const path = join(dir, 'nested', 'history.db');
    const plugin = promptHistory({ path });
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'ok' }], plugins: [plugin] }) });
    const session = kernel.createSession({ cwd: '/proj' });
    expect(existsSync(join(dir, 'nested'))).toBe(false);
    await session.run('first prompt');
    expect(existsSync(path)).toBe(true);
    await kernel.shutdown();
    const reopened = new HistoryStorage({ path });
    expect(reopened.getRecent().map((entry) => entry.prompt)).toEqual(['first prompt']);
    await reopened.close();
  });

  it('the same plugin value composed into two kernels in a row: each has its own storage, both record, each shutdown closes only its own', async () => {
    const close = vi.spyOn(HistoryStorage.prototype, 'close');
    const path = join(dir, 'shared.db');
    const plugin = promptHistory({ path });
    const first = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }], plugins: [plugin] }) });
    const second = await createKernel({ plugins: testPreset({ turns: [{ text: 'b' }], plugins: [plugin] }) });
    await first.createSession().run('from the first');
    await second.createSession().run('from the second');
    const firstStorage = first.get(PromptHistory);
    const secondStorage = second.get(PromptHistory);
    expect(firstStorage).not.toBe(secondStorage);
    await first.shutdown();
    expect(close.mock.contexts).toEqual([firstStorage]);
    await second.shutdown();
    expect(close.mock.contexts).toEqual([firstStorage, secondStorage]);
    close.mockRestore();
    const reopened = new HistoryStorage({ path });
    expect(reopened.getRecent().map((entry) => entry.prompt).sort()).toEqual(['from the first', 'from the second']);
    await reopened.close();
  });

  it("reports a failed insert, and a database that cannot be opened, to the kernel's Diagnostics reporter; the turn goes on", async () => {
    const reports: DiagnosticReport[] = [];
    const recorder = definePlugin({ name: 'recorder', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(report) }) });
    const blocker = join(dir, 'blocker');
    await writeFile(blocker, 'x');
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'ok' }], plugins: [promptHistory({ path: join(blocker, 'history.db') }), recorder] }) });
    expect(await kernel.createSession().run('hi')).toBe('ok');
    expect(reports).toEqual([expect.objectContaining({ severity: 'warning', code: 'TESSERA_HISTORY_WARNING', source: 'prompt-history' })]);
    expect(kernel.describe().plugins.find((plugin) => plugin.name === 'prompt-history')).toMatchObject({ provides: ['PromptHistory'], optional: ['Diagnostics'] });
    await kernel.shutdown();

    const memory = await createKernel({ plugins: testPreset({ turns: [{ text: 'ok' }], plugins: [promptHistory({ path: ':memory:' }), recorder] }) });
    const storage = memory.get(PromptHistory);
    await storage.close();
    (storage as unknown as { add(prompt: string): void }).add('into a closed database');
    await storage.flush();
    expect(reports.at(-1)).toMatchObject({ code: 'TESSERA_HISTORY_WARNING', message: expect.stringMatching(/Could not record prompt history/) });
    await memory.shutdown();
  });

  it('checks options when the plugin is made', () => {
    expect(() => promptHistory({ path: '' })).toThrow(/path/);
    expect(() => promptHistory({ onWarning: 'x' as never })).toThrow(/onWarning/);
  });

  it('kernel.container.rebind(PromptHistory) after createKernel reaches sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], plugins: [promptHistory({ path: join(dir, 'k.db') })] }) });
    const replacement = new HistoryStorage({ path: ':memory:' });
    kernel.container.rebind(PromptHistory).toConstantValue(replacement);
    await kernel.createSession().run('to the replacement');
    await replacement.flush();
    expect(replacement.getRecent().map((entry) => entry.prompt)).toEqual(['to the replacement']);
    await kernel.shutdown();
    await replacement.close();
    expect(existsSync(join(dir, 'k.db'))).toBe(false);
  });
});
