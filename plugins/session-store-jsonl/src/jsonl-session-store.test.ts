import { appendFile, copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Diagnostics, SessionStore, type DiagnosticReport, type ISessionRecord, type Message } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { InMemorySessionStore } from '@tessera/kernel/testing';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileSessionStorage } from './file-session-storage.js';
import { JsonlSessionStore } from './jsonl-session-store.js';
import { jsonlSessionStore } from './plugin.js';
import { SessionManager } from './session-manager.js';

let dir: string;
const opts = () => ({ agentDir: dir, terminalId: null, onWarning: () => undefined });
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const user = (text: string): Message => ({ role: 'user', content: text });
const reply = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }], state: 'complete', stopReason: 'end_turn' });
function record(messages: Message[], extra: Partial<ISessionRecord> = {}): ISessionRecord {
  return { id: 'sess-1', cwd: '/proj', createdAt: 't', updatedAt: 't', messages, history: [], ...extra };
}
/** The lines of session `id`'s file while its store stays open (each save has flushed its writes). */
async function fileLinesOpen(id: string): Promise<string[]> {
  const [info] = (await SessionManager.listAll(opts())).filter((item) => item.id === id);
  return (await readFile(info?.path as string, 'utf8')).trim().split('\n');
}
async function fileLines(store: JsonlSessionStore, id: string): Promise<string[]> {
  const [info] = (await SessionManager.listAll(opts())).filter((item) => item.id === id);
  await store.close();
  return (await readFile(info?.path as string, 'utf8')).trim().split('\n');
}

describe('JsonlSessionStore', () => {
  it('persists a kernel session through testPreset({ replace })', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'hello there' }], replace: [jsonlSessionStore(opts())] }) });
    expect(kernel.describe().plugins.some((plugin) => plugin.name === 'session-store-jsonl')).toBe(true);
    const session = kernel.createSession({ cwd: '/proj', systemMessage: 'be brief' });
    await session.run('hi');
    await kernel.shutdown();

    const loaded = await new JsonlSessionStore(opts()).load(session.sessionId);
    expect(loaded?.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(loaded?.systemPrompt).toBe('be brief');
    expect(loaded?.cwd).toBe('/proj');
    expect(loaded?.history.map((entry) => entry.type)).toEqual(['user', 'assistant']);
    const [info] = await SessionManager.list('/proj', opts());
    expect(info?.id).toBe(session.sessionId);
    expect(info?.firstMessage).toBe('hi');
  });

  it('writes the prompt-and-schemas entry again only when they change (the same objects, or equal new ones, write nothing)', async () => {
    const store = new JsonlSessionStore(opts());
    const schemas = [{ name: 'Read', description: 'reads', parameters: { type: 'object' } }];
    const metaLines = async () => (await fileLinesOpen('sess-1')).filter((line) => line.includes('"tessera.session-record"'));
    const messages = [user('a'), reply('b')];
    await store.save(record(messages, { systemPrompt: 'one', toolSchemas: [...schemas] }));
    await store.save(record([...messages, user('c'), reply('d')], { systemPrompt: 'one', toolSchemas: [...schemas] }));
    // Equal content in new objects: compared, found equal, nothing written.
    await store.save(record([...messages, user('c'), reply('d')], { systemPrompt: 'one', toolSchemas: schemas.map((schema) => ({ ...schema })) }));
    expect(await metaLines()).toHaveLength(1);
    await store.save(record([...messages, user('c'), reply('d')], { systemPrompt: 'two', toolSchemas: [...schemas] }));
    await store.save(record([...messages, user('c'), reply('d')], { systemPrompt: 'two', toolSchemas: [{ ...schemas[0]!, description: 'reads files' }] }));
    // An extension field is compared every time.
    await store.save(record([...messages, user('c'), reply('d')], { systemPrompt: 'two', toolSchemas: [{ ...schemas[0]!, description: 'reads files' }], label: 'x' }));
    const lines = await metaLines();
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines.at(-1)!).data).toEqual({ systemPrompt: 'two', toolSchemas: [{ name: 'Read', description: 'reads files', parameters: { type: 'object' } }], extensions: { label: 'x' } });
    const loaded = await new JsonlSessionStore(opts()).load('sess-1');
    expect(loaded).toMatchObject({ systemPrompt: 'two', label: 'x' });
  });

  it('a session that ends is released: its file closed, nothing kept in memory; saving it again appends', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'one' }, { text: 'two' }], replace: [jsonlSessionStore(opts())] }) });
    const store = kernel.get(SessionStore) as JsonlSessionStore;
    const release = vi.spyOn(store, 'release');
    const session = kernel.createSession({ cwd: '/proj' });
    await session.run('first');
    await session.shutdown();
    expect(release).toHaveBeenCalledWith(session.sessionId);
    // Released: the next load reads the file again, and a resumed session appends to it.
    const resumed = kernel.resumeSession((await store.load(session.sessionId))!);
    await resumed.run('second');
    await resumed.shutdown();
    await kernel.shutdown();
    const [info] = (await SessionManager.listAll(opts())).filter((item) => item.id === session.sessionId);
    const lines = (await readFile(info?.path as string, 'utf8')).trim().split('\n');
    expect(lines.filter((line) => line.includes('"role":"user"'))).toHaveLength(2);
    expect((await new JsonlSessionStore(opts()).load(session.sessionId))?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('finds sessions without listing every file per new session; sees files another process adds', async () => {
    const storage = new FileSessionStorage();
    const listings = vi.spyOn(storage, 'listFilesSync');
    const store = new JsonlSessionStore({ ...opts(), storage });
    await Promise.all(Array.from({ length: 40 }, (_, index) => store.save(record([user(`q${index}`), reply(`a${index}`)], { id: `many-${index}` }))));
    // One listing builds the index; this store's own new files keep it current.
    expect(listings.mock.calls.length).toBeLessThanOrEqual(2);
    const other = new JsonlSessionStore(opts());
    await other.save(record([user('from elsewhere'), reply('ok')], { id: 'other-process' }));
    await other.close();
    expect((await store.load('other-process'))?.messages).toEqual([user('from elsewhere'), reply('ok')]);
    for (let index = 0; index < 40; index += 1) expect((await store.load(`many-${index}`))?.messages).toEqual([user(`q${index}`), reply(`a${index}`)]);
    await store.close();
  });

  it('a new session costs two stats to index, however many project folders there are; changes by other writers are still seen', async () => {
    const storage = new FileSessionStorage();
    const warm = new JsonlSessionStore({ ...opts(), storage });
    // 30 project folders, then the index is built by a lookup.
    await Promise.all(Array.from({ length: 30 }, (_, index) => warm.save(record([user('q'), reply('a')], { id: `p-${index}`, cwd: `/proj-${index}` }))));
    expect(await warm.load('p-0')).toBeDefined();
    const stats = vi.spyOn(storage, 'statSync');
    const listings = vi.spyOn(storage, 'listDirsSync');
    // The first save of a new session, as a live session makes it (`created`).
    const created = { appendedFrom: 0, rewritten: false, created: true };
    await warm.save(record([user('new'), reply('one')], { id: 'fresh', cwd: '/proj-3' }), created);
    await warm.save(record([user('new'), reply('two')], { id: 'fresh-folder', cwd: '/proj-new' }), created);
    expect(listings).not.toHaveBeenCalled();
    expect(stats.mock.calls.length).toBeLessThanOrEqual(4);
    // Another writer adds a session in another folder: the next lookup sees the changed folder.
    const other = new JsonlSessionStore(opts());
    await other.save(record([user('from elsewhere'), reply('ok')], { id: 'elsewhere', cwd: '/proj-7' }));
    await other.close();
    expect((await warm.load('elsewhere'))?.messages).toEqual([user('from elsewhere'), reply('ok')]);
    expect((await warm.load('fresh-folder'))?.messages).toEqual([user('new'), reply('two')]);
    await warm.close();
  });

  it('a resumed pi session sends the model what pi would: the compaction summary and custom messages', async () => {
    const written = SessionManager.create('/proj', { ...opts(), sessionDir: join(dir, 'sessions', 'proj') });
    written.appendMessage({ role: 'user', content: 'old question', timestamp: 1 });
    written.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'old answer' }], api: 'anthropic-messages', provider: 'anthropic', model: 'm', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: 2 });
    const kept = written.appendMessage({ role: 'user', content: 'kept question', timestamp: 3 });
    written.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'kept answer' }], api: 'anthropic-messages', provider: 'anthropic', model: 'm', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: 4 });
    written.appendCompaction('SUMMARY OF THE OLD PART', kept, 1000);
    written.appendCustomMessageEntry('note', 'A NOTE FOR THE MODEL', true);
    await written.flush();
    const id = written.getSessionId();

    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'resumed answer' }], replace: [jsonlSessionStore(opts())] }) });
    const record = await kernel.get(SessionStore).load(id);
    const session = kernel.resumeSession(record!);
    await session.run('new question');
    const { ScriptedProvider } = await import('@tessera/plugin-provider-scripted');
    const provider = kernel.get(Symbol.for('tessera/Provider') as never) as InstanceType<typeof ScriptedProvider>;
    const sent = JSON.stringify(provider.requests[0]!.messages);
    expect(sent).toContain('SUMMARY OF THE OLD PART');
    expect(sent).toContain('A NOTE FOR THE MODEL');
    expect(sent).toContain('kept question');
    expect(sent).not.toContain('old question');
    await kernel.shutdown();
  });

  it('appends only the new tail of the messages', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user('a'), reply('b')]));
    await store.save(record([user('a'), reply('b'), user('c'), reply('d')]));
    const before = await fileLines(store, 'sess-1');
    const again = new JsonlSessionStore(opts());
    await again.save(record([user('a'), reply('b'), user('c'), reply('d'), user('e')]));
    const after = await fileLines(again, 'sess-1');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
    expect((await new JsonlSessionStore(opts()).load('sess-1'))?.messages).toEqual([user('a'), reply('b'), user('c'), reply('d'), user('e')]);
  });

  it('branches instead of rewriting when the history changes', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user('a'), reply('b'), user('c'), reply('d')]));
    await store.save(record([user('a'), reply('b'), user('x'), reply('y')]));
    await store.close();
    const loaded = await new JsonlSessionStore(opts()).load('sess-1');
    expect(loaded?.messages).toEqual([user('a'), reply('b'), user('x'), reply('y')]);
    const [info] = await SessionManager.listAll(opts());
    const manager = await SessionManager.open(info?.path as string, opts());
    expect(manager.getEntries().filter((entry) => entry.type === 'message')).toHaveLength(6);
  });

  it('keeps names, events and unknown record fields', async () => {
    const store = new JsonlSessionStore(opts());
    const event = { id: 'ev1', timestamp: 't', category: 'event' as const, type: 'tool-summary', data: { n: 1 } };
    await store.save(record([user('a'), reply('b')], { name: 'Named', history: [event], custom: { keep: true }, toolSchemas: [{ name: 't', description: 'd', parameters: {} }] }));
    await store.save(record([user('a'), reply('b')], { name: 'Named', history: [event], custom: { keep: true } }));
    await store.close();
    const loaded = await new JsonlSessionStore(opts()).load('sess-1');
    expect(loaded?.name).toBe('Named');
    expect(loaded?.custom).toEqual({ keep: true });
    expect(loaded?.history.filter((entry) => entry.category === 'event')).toEqual([event]);
  });

  it('lists and deletes records; rejects unsafe ids', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user('a'), reply('b')]));
    await store.save(record([user('c'), reply('d')], { id: 'sess-2' }));
    expect((await store.list()).map((item) => item.id).sort()).toEqual(['sess-1', 'sess-2']);
    await store.delete('sess-1');
    expect(await store.load('sess-1')).toBeUndefined();
    expect((await new JsonlSessionStore(opts()).list()).map((item) => item.id)).toEqual(['sess-2']);
    await expect(store.load('../../etc/passwd')).rejects.toMatchObject({ code: 'invalid_session_id' });
    await expect(store.save(record([], { id: '' }))).rejects.toMatchObject({ code: 'invalid_session_record' });
  });
});

describe('JsonlSessionStore: finding a session by id', () => {
  /** The file names under the one project directory. */
  async function fileNames(): Promise<string[]> {
    return (await fileInfo()).map((info) => basename(info.path)).sort();
  }
  const texts = (saved: ISessionRecord | undefined) =>
    saved?.messages.map((message) => (typeof message.content === 'string' ? message.content : (message.content[0] as { text: string }).text));

  for (const [short, long] of [
    ['abc', 'x_abc'],
    ['c', 'a_b_c'],
  ] as const) {
    it(`keeps ${short} and ${long} apart: load, list and delete of one never touch the other`, async () => {
      const store = new JsonlSessionStore(opts());
      await store.save(record([user(`to ${long}`), reply('b')], { id: long }));
      await store.save(record([user(`to ${short}`), reply('b')], { id: short }));
      await store.close();

      // A fresh store must find the files by name alone.
      const fresh = new JsonlSessionStore(opts());
      expect(texts(await fresh.load(short))).toEqual([`to ${short}`, 'b']);
      expect(texts(await fresh.load(long))).toEqual([`to ${long}`, 'b']);
      expect((await fresh.list()).map((saved) => saved.id).sort()).toEqual([short, long].sort());
      await fresh.close();

      const deleting = new JsonlSessionStore(opts());
      await deleting.delete(short);
      expect(await fileNames()).toEqual([expect.stringMatching(new RegExp(`Z_${long}\\.jsonl$`))]);
      expect(await deleting.load(short)).toBeUndefined();
      expect(texts(await deleting.load(long))).toEqual([`to ${long}`, 'b']);
      await deleting.close();

      // Saving the short id again makes its own file; the long one is not appended to.
      const again = new JsonlSessionStore(opts());
      const before = await readFile((await fileInfo())[0]!.path, 'utf8');
      await again.save(record([user(`new ${short}`), reply('c')], { id: short }));
      await again.close();
      expect(await readFile((await fileInfo()).find((info) => info.id === long)!.path, 'utf8')).toBe(before);
      expect(texts(await new JsonlSessionStore(opts()).load(short))).toEqual([`new ${short}`, 'c']);
      await new JsonlSessionStore(opts()).delete(long);
      expect((await fileInfo()).map((info) => info.id)).toEqual([short]);
    });
  }

  it('SessionTree operations on an id never open the file of an id ending in it', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user('long'), reply('b')], { id: 'x_abc' }));
    await store.close();
    const fresh = new JsonlSessionStore(opts());
    await expect(fresh.withSession('abc', (manager) => manager.getSessionId())).rejects.toMatchObject({ code: 'session_not_found' });
    expect(await fresh.withSession('x_abc', (manager) => manager.getSessionId())).toBe('x_abc');
    await fresh.close();
  });

  it('never opens (or moves aside) the one file named for an id when its first line is no header of that id', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user('real'), reply('b')], { id: 'real' }));
    await store.close();
    const [info] = await fileInfo();
    const folder = dirname(info!.path);
    const cases = {
      garbage: 'not json at all\n{"type":"message"}\n',
      // A valid header, but on line 2: the file's own first line is damaged.
      late: `{"type":"sess\n${JSON.stringify({ type: 'session', version: 3, id: 'late', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' })}\n`,
    };
    for (const [id, text] of Object.entries(cases)) await writeFile(join(folder, `2026-01-01T00-00-00-000Z_${id}.jsonl`), text);
    const fresh = new JsonlSessionStore(opts());
    for (const [id, text] of Object.entries(cases)) {
      expect(await fresh.load(id)).toBeUndefined();
      expect(await readFile(join(folder, `2026-01-01T00-00-00-000Z_${id}.jsonl`), 'utf8')).toBe(text);
    }
    expect((await readdir(folder)).filter((name) => name.includes('.corrupt-'))).toEqual([]);
    expect(texts(await fresh.load('real'))).toEqual(['real', 'b']);
    await fresh.close();
  });

  it('uses a file only when its header names the same session', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user('real'), reply('b')], { id: 'real' }));
    await store.close();
    const [info] = await fileInfo();
    // A copy named for session "copy" whose header still says "real".
    await copyFile(info!.path, join(dirname(info!.path), basename(info!.path).replace('_real.jsonl', '_copy.jsonl')));
    const warnings: string[] = [];
    const fresh = new JsonlSessionStore({ ...opts(), onWarning: (message: string) => void warnings.push(message) });
    expect(await fresh.load('copy')).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('named for session copy, but its header says session real')]);
    await fresh.delete('copy');
    expect(await fileNames()).toHaveLength(2);
    expect(texts(await fresh.load('real'))).toEqual(['real', 'b']);
    await fresh.close();
  });
});

describe('jsonlSessionStore plugin', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('makes a plugin with no I/O: nothing under agentDir until the first save', async () => {
    const agentDir = join(dir, 'agent');
    const plugin = jsonlSessionStore({ agentDir, terminalId: null });
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'hello' }], replace: [plugin] }) });
    const session = kernel.createSession({ cwd: '/proj' });
    expect(await readdir(dir)).toEqual([]);
    await session.run('hi');
    expect(await readdir(dir)).toEqual(['agent']);
    await kernel.shutdown();
  });

  it('the same plugin value composed into two kernels in a row: both write, and the first shutdown closes only its own store', async () => {
    const close = vi.spyOn(JsonlSessionStore.prototype, 'close');
    const plugins = testPreset({ turns: [{ text: 'one' }, { text: 'two' }], replace: [jsonlSessionStore(opts())] });
    const first = await createKernel({ plugins });
    const second = await createKernel({ plugins });
    const firstStore = first.get(SessionStore);
    const secondStore = second.get(SessionStore);
    expect(firstStore).toBeInstanceOf(JsonlSessionStore);
    expect(secondStore).not.toBe(firstStore);
    await first.createSession({ sessionId: 'first', cwd: '/proj' }).run('a');
    await first.shutdown();
    expect(close.mock.contexts).toEqual([firstStore]);

    await second.createSession({ sessionId: 'second', cwd: '/proj' }).run('b');
    await second.shutdown();
    expect(close.mock.contexts).toEqual([firstStore, secondStore]);
    const ids = (await SessionManager.listAll(opts())).map((info) => info.id).sort();
    expect(ids).toEqual(['first', 'second']);
  });

  it('a kernel that never used its store builds none and closes none', async () => {
    const close = vi.spyOn(JsonlSessionStore.prototype, 'close');
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonlSessionStore(opts())] }) });
    await kernel.shutdown();
    expect(close).not.toHaveBeenCalled();
    expect(await readdir(dir)).toEqual([]);
  });

  it('binds a given store as it is and closes its open files at kernel shutdown; the store stays usable', async () => {
    const store = new JsonlSessionStore(opts());
    const close = vi.spyOn(store, 'close');
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'x' }], replace: [jsonlSessionStore(store)] }) });
    expect(kernel.get(SessionStore)).toBe(store);
    await kernel.createSession({ sessionId: 'given', cwd: '/proj' }).run('hi');
    await kernel.shutdown();
    expect(close).toHaveBeenCalledTimes(1);
    expect((await store.load('given'))?.messages).toHaveLength(2);
    await store.close();
  });

  it("sends warnings to the kernel's Diagnostics reporter", async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user('a'), reply('b')]));
    const [info] = await fileInfo();
    await store.close();
    await appendFile(info!.path, '{ torn line\n');

    const reports: DiagnosticReport[] = [];
    const recorder = definePlugin({ name: 'recorder', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(report) }) });
    const { onWarning: _ignored, ...withoutSink } = opts();
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonlSessionStore(withoutSink)], plugins: [recorder] }) });
    expect((await kernel.get(SessionStore).load('sess-1'))?.messages).toHaveLength(2);
    expect(reports.length).toBeGreaterThan(0);
    expect(reports[0]).toMatchObject({ severity: 'warning', code: 'TESSERA_SESSION_WARNING', source: 'session-store-jsonl', file: info!.path });
    expect(reports[0]!.message.startsWith(info!.path)).toBe(false);
    await kernel.shutdown();
  });

  it('checks options when the plugin is made', () => {
    expect(() => jsonlSessionStore({ agentDir: '' })).toThrow(/agentDir/);
    expect(() => jsonlSessionStore({ onWarning: 1 as never })).toThrow(/onWarning/);
  });

  it('kernel.container.rebind(SessionStore) after createKernel reaches sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }, { text: 'c' }], replace: [jsonlSessionStore(opts())] }) });
    // Not built yet: a plain rebind.
    const early = new InMemorySessionStore();
    kernel.container.rebind(SessionStore).toConstantValue(early);
    await kernel.createSession({ sessionId: 'early', cwd: '/proj' }).run('x');
    expect((await early.list()).map((saved) => saved.id)).toEqual(['early']);
    await kernel.shutdown();

    // Built and used: releasing it is asynchronous, so swap it with rebindAsync.
    const close = vi.spyOn(JsonlSessionStore.prototype, 'close');
    const used = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }], replace: [jsonlSessionStore(opts())] }) });
    const before = used.createSession({ sessionId: 'before', cwd: '/proj' });
    await before.run('x');
    const replacement = new InMemorySessionStore();
    (await used.container.rebindAsync(SessionStore)).toConstantValue(replacement);
    expect(close).toHaveBeenCalledTimes(1);
    const after = used.createSession({ sessionId: 'after', cwd: '/proj' });
    await after.run('y');
    expect((await replacement.list()).map((saved) => saved.id)).toEqual(['after']);
    expect((await SessionManager.listAll(opts())).map((info) => info.id)).toEqual(['before']);
    await used.shutdown();
  });
});

async function fileInfo() {
  return SessionManager.listAll(opts());
}

