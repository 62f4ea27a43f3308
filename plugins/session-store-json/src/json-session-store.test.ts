import { mkdtemp, readdir, readFile, rm, writeFile, chmod, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Diagnostics, SessionStore, type Diagnostic, type DiagnosticReport } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { InMemorySessionStore } from '@tessera/kernel/testing';
import { testPreset } from '@tessera/preset-test';
import { InvalidSessionIdError, JsonSessionStore, jsonSessionStore, SessionRecordError, type JsonSessionRecord } from './index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-json-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const record = (id: string, updatedAt = '2026-01-01T00:00:00.000Z'): JsonSessionRecord => ({
  id,
  cwd: '/work',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt,
  messages: [{ role: 'user', content: 'hi' }],
  history: [{ id: 'e1', timestamp: '2026-01-01T00:00:00.000Z', category: 'chat', type: 'user', data: { role: 'user', content: 'hi' } }],
});

describe('JsonSessionStore', () => {
  it('round-trips every field of the spec table, plus unknown extension fields', async () => {
    const store = new JsonSessionStore({ baseDir: join(dir, 'nested', 'sessions') });
    const full: JsonSessionRecord = {
      ...record('s1'),
      name: 'my session',
      systemPrompt: 'be brief',
      toolSchemas: [{ name: 'Read', description: 'reads', parameters: { type: 'object' } }],
      backgroundTasks: [{ id: 'task_1' }],
      backgroundTaskEvents: [{ type: 'background_task_created' }],
      backgroundJobGroups: [{ id: 'g' }],
      backgroundJobGroupEvents: [{ type: 'created' }],
      memoryEvents: [{ type: 'saved' }],
      usedMemoryReferences: [{ topic: 't' }],
      contextReferences: [{ path: 'CLAUDE.md' }],
      sandboxSnapshotId: 'snap-1',
      futureField: { kept: true },
    };
    await store.save(full);
    expect(await store.load('s1')).toEqual(full);
    expect(store.getFilePath('s1')).toBe(join(dir, 'nested', 'sessions', 's1.json'));
    expect((await stat(store.getFilePath('s1'))).mode & 0o777).toBe(0o600);
  });

  it('load of a missing id is undefined; delete is a no-op when missing', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    expect(await store.load('nope')).toBeUndefined();
    await store.delete('nope');
    await store.save(record('gone'));
    await store.delete('gone');
    expect(await store.load('gone')).toBeUndefined();
  });

  it('lists newest first, skipping and reporting malformed files', async () => {
    const diagnostics: Diagnostic[] = [];
    const store = new JsonSessionStore({ baseDir: dir, onDiagnostic: (d) => diagnostics.push(d) });
    await store.save(record('old', '2026-01-01T00:00:00.000Z'));
    await store.save(record('new', '2026-03-01T00:00:00.000Z'));
    await store.save(record('mid', '2026-02-01T00:00:00.000Z'));
    await writeFile(join(dir, 'broken.json'), '{\n  "id": "broken",\n  oops\n}');
    await writeFile(join(dir, 'wrong-shape.json'), JSON.stringify({ ...record('wrong-shape'), messages: 'x' }));
    await writeFile(join(dir, 'other-id.json'), JSON.stringify(record('someone-else')));
    await writeFile(join(dir, '.s1.json.123.tmp'), 'partial');
    await writeFile(join(dir, 'notes.txt'), 'not a session');
    expect((await store.list()).map((entry) => entry.id)).toEqual(['new', 'mid', 'old']);
    expect(diagnostics.map((d) => d.file.split('/').pop()).sort()).toEqual(['broken.json', 'other-id.json', 'wrong-shape.json']);
    const broken = diagnostics.find((d) => d.file.endsWith('broken.json'))!;
    expect(broken).toMatchObject({ severity: 'error', line: 3 });
    expect(broken.message).toContain('not valid JSON');
    expect(diagnostics.find((d) => d.file.endsWith('wrong-shape.json'))!.path).toBe('messages');
    // Nothing was deleted or rewritten by reading.
    expect(await readFile(join(dir, 'broken.json'), 'utf8')).toContain('oops');
  });

  it('reports skipped files as a process warning by default', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    await writeFile(join(dir, 'bad.json'), '[');
    const warnings: string[] = [];
    const listener = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', listener);
    try {
      expect(await store.list()).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    expect(warnings.some((message) => message.includes('bad.json'))).toBe(true);
  });

  it('list() of a directory that does not exist yet is empty', async () => {
    expect(await new JsonSessionStore({ baseDir: join(dir, 'absent') }).list()).toEqual([]);
  });

  it('load() of a malformed file throws a located error instead of returning garbage', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    await writeFile(join(dir, 'bad.json'), '{"id": "bad",');
    await expect(store.load('bad')).rejects.toBeInstanceOf(SessionRecordError);
    await writeFile(join(dir, 'swap.json'), JSON.stringify(record('other')));
    await expect(store.load('swap')).rejects.toThrow(/holds session "other"/);
  });

  it('rejects ids that could escape the directory, before touching the file system', async () => {
    const store = new JsonSessionStore({ baseDir: join(dir, 'sessions') });
    const bad = ['../escape', '..', 'a/b', 'a\\b', '/etc/passwd', '.hidden', '', 'a..b', 'x\0y', 'C:evil', 'a'.repeat(129), 42];
    for (const id of bad) {
      await expect(store.load(id as string)).rejects.toBeInstanceOf(InvalidSessionIdError);
      await expect(store.delete(id as string)).rejects.toBeInstanceOf(InvalidSessionIdError);
      await expect(store.save({ ...record('x'), id: id as string })).rejects.toBeInstanceOf(InvalidSessionIdError);
    }
    expect(await readdir(dir)).toEqual([]);
    for (const id of ['550e8400-e29b-41d4-a716-446655440000', 'session_1.v2', 'A']) expect(() => store.getFilePath(id)).not.toThrow();
  });

  it('refuses to save a record missing required fields, naming the field', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    const { history: _history, ...withoutHistory } = record('x');
    await expect(store.save(withoutHistory as JsonSessionRecord)).rejects.toThrow(/"history"/);
    await expect(store.save({ ...record('x'), backgroundTasks: 'no' as never })).rejects.toThrow(/backgroundTasks/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes atomically: no temp files remain and a failed write keeps the previous file', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    await store.save(record('a'));
    await store.save({ ...record('a'), name: 'second' });
    expect(await readdir(dir)).toEqual(['a.json']);
    if (process.getuid?.() !== 0) {
      await chmod(dir, 0o500);
      try {
        await expect(store.save({ ...record('a'), name: 'third' })).rejects.toThrow();
      } finally {
        await chmod(dir, 0o700);
      }
      expect((await store.load('a'))!.name).toBe('second');
      expect(await readdir(dir)).toEqual(['a.json']);
    }
  });

  it('concurrent saves of one session leave one complete record', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    await Promise.all(Array.from({ length: 20 }, (_, index) => store.save({ ...record('busy'), name: `n${index}` })));
    expect((await store.load('busy'))!.name).toMatch(/^n\d+$/);
    expect(await readdir(dir)).toEqual(['busy.json']);
  });

  it('backfills history when loading a legacy record without it', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    const { history: _history, ...legacy } = record('legacy');
    await writeFile(join(dir, 'legacy.json'), JSON.stringify(legacy));
    const loaded = await store.load('legacy');
    expect(loaded!.history).toEqual([
      { id: 'legacy-m0', timestamp: legacy.createdAt, category: 'chat', type: 'user', data: { role: 'user', content: 'hi' } },
    ]);
  });
});

describe('jsonSessionStore plugin', () => {
  it('replaces the test preset store; the Session saves after each run and the record loads back', async () => {
    const kernel = await createKernel({
      plugins: testPreset({ turns: [{ text: 'hello' }], replace: [jsonSessionStore({ baseDir: dir })] }),
    });
    expect(kernel.describe().plugins.map((plugin) => plugin.name)).not.toContain('session-store-memory');
    const session = kernel.createSession({ sessionId: 'kernel-run', systemMessage: 'sys' });
    await session.run('hi');
    const saved = await new JsonSessionStore({ baseDir: dir }).load('kernel-run');
    expect(saved).toMatchObject({ id: 'kernel-run', systemPrompt: 'sys' });
    expect(saved!.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(saved!.history).toHaveLength(2);
    await kernel.shutdown();
  });

  it('makes a plugin with no I/O: nothing under baseDir until the first save', async () => {
    const baseDir = join(dir, 'sessions');
    const plugin = jsonSessionStore({ baseDir });
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'hello' }], replace: [plugin] }) });
    const session = kernel.createSession({ sessionId: 'later' });
    expect(await readdir(dir)).toEqual([]);
    await session.run('hi');
    expect(await readdir(baseDir)).toEqual(['later.json']);
    await kernel.shutdown();
  });

  it('the same plugin value composed into two kernels in a row gives each its own store, and both save', async () => {
    const plugins = testPreset({ turns: [{ text: 'hello' }], replace: [jsonSessionStore({ baseDir: dir })] });
    const first = await createKernel({ plugins });
    const firstStore = first.get(SessionStore);
    await first.createSession({ sessionId: 'one' }).run('hi');
    await first.shutdown();
    const second = await createKernel({ plugins });
    expect(second.get(SessionStore)).toBeInstanceOf(JsonSessionStore);
    expect(second.get(SessionStore)).not.toBe(firstStore);
    await second.createSession({ sessionId: 'two' }).run('hi');
    await second.shutdown();
    expect((await readdir(dir)).sort()).toEqual(['one.json', 'two.json']);
  });

  it('binds a given store as it is', async () => {
    const store = new JsonSessionStore({ baseDir: dir });
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonSessionStore(store)] }) });
    expect(kernel.get(SessionStore)).toBe(store);
    await kernel.shutdown();
  });

  it("reports skipped files to the kernel's Diagnostics reporter", async () => {
    await writeFile(join(dir, 'bad.json'), '{ nope');
    const reports: DiagnosticReport[] = [];
    const recorder = definePlugin({ name: 'recorder', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(report) }) });
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonSessionStore({ baseDir: dir })], plugins: [recorder] }) });
    expect(await kernel.get(SessionStore).list()).toEqual([]);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ code: 'TESSERA_SESSION_STORE', source: 'session-store-json', file: join(dir, 'bad.json') });
    expect(reports[0]!.message).toMatch(/^Skipped a session file: not valid JSON/);
    expect(kernel.describe().plugins.find((plugin) => plugin.name === 'session-store-json')?.optional).toEqual(['Diagnostics']);
    await kernel.shutdown();
  });

  it('checks options when the plugin is made', () => {
    expect(() => jsonSessionStore({ baseDir: '' })).toThrow(/baseDir/);
    expect(() => jsonSessionStore({ onDiagnostic: 'no' as never })).toThrow(/onDiagnostic/);
  });

  it('kernel.container.rebind(SessionStore) after createKernel reaches sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], replace: [jsonSessionStore({ baseDir: dir })] }) });
    const before = kernel.createSession({ sessionId: 'before' });
    const replacement = new InMemorySessionStore();
    kernel.container.rebind(SessionStore).toConstantValue(replacement);
    const after = kernel.createSession({ sessionId: 'after' });
    await before.run('x');
    await after.run('y');
    expect((await replacement.list()).map((saved) => saved.id)).toEqual(['after']);
    expect(await readdir(dir)).toEqual(['before.json']);
    await kernel.shutdown();
  });
});
