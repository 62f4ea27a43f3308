import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore, SessionTree, type IHistoryEntry, type ISessionRecord, type Message, type SessionTreeNode } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonlSessionStore } from './jsonl-session-store.js';
import { JsonlSessionTree } from './jsonl-session-tree.js';
import { LEAF_MARKER_TYPE } from './leaf-marker.js';
import { jsonlSessionStore } from './plugin.js';
import { SessionManager } from './session-manager.js';

let dir: string;
let stores: JsonlSessionStore[] = [];
const opts = () => ({ agentDir: dir, terminalId: null, onWarning: () => undefined });
/** A store closed after the test. */
function newStore(): JsonlSessionStore {
  const store = new JsonlSessionStore(opts());
  stores.push(store);
  return store;
}
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-tree-'));
});
afterEach(async () => {
  for (const store of stores) await store.close();
  stores = [];
  await rm(dir, { recursive: true, force: true });
});

const user = (text: string): Message => ({ role: 'user', content: text });
const reply = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }], state: 'complete', stopReason: 'end_turn' });
const chat = (message: Message, id = `h${Math.random().toString(36).slice(2)}`): IHistoryEntry => ({ id, timestamp: new Date().toISOString(), category: 'chat', type: message.role, data: message });
function record(id: string, messages: Message[], cwd = '/proj'): ISessionRecord {
  return { id, cwd, createdAt: 't', updatedAt: 't', messages, history: messages.map((message) => chat(message)) };
}
const texts = (saved: ISessionRecord | undefined) =>
  saved?.messages.map((message) => (typeof message.content === 'string' ? message.content : (message.content[0] as { text: string }).text));
async function fileOf(id: string): Promise<string> {
  const [info] = (await SessionManager.listAll(opts())).filter((item) => item.id === id);
  return info?.path as string;
}
/** Depth-first ids and previews of a tree. */
function walk(nodes: SessionTreeNode[], depth = 0): string[] {
  return nodes.flatMap((node) => [`${'  '.repeat(depth)}${node.entry.preview ?? node.entry.type}${node.entry.label ? ` #${node.entry.label}` : ''}`, ...walk(node.children, depth + 1)]);
}

/** A session a1 → b1 → a2 → b2 on disk; returns the tree, the store and the message entry ids. */
async function seeded() {
  const store = newStore();
  await store.save(record('s1', [user('a1'), reply('b1'), user('a2'), reply('b2')]));
  const tree = new JsonlSessionTree(store);
  const ids = idsOnPath(await tree.tree('s1'));
  return { store, tree, ids };
}
function idsOnPath(nodes: SessionTreeNode[]): string[] {
  const ids: string[] = [];
  for (let node = nodes[0]; node; node = node.children[node.children.length - 1]) if (node.entry.type === 'message') ids.push(node.entry.id);
  return ids;
}

describe('JsonlSessionTree', () => {
  it('lists sessions newest first, with counts and names, and filters by cwd', async () => {
    const store = newStore();
    await store.save(record('old', [user('x'), reply('y')], '/a'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.save({ ...record('new', [user('p'), reply('q'), user('r')], '/b'), name: 'Newest' });
    await store.close();
    // A fresh store reads the files; the first one stays open in another.
    const tree = new JsonlSessionTree(newStore());
    await tree.load('old');
    const all = await tree.list();
    expect(all.map((info) => [info.id, info.cwd, info.messageCount, info.name])).toEqual([
      ['new', '/b', 3, 'Newest'],
      ['old', '/a', 2, undefined],
    ]);
    expect(all[0]!.updatedAt >= all[0]!.createdAt).toBe(true);
    expect((await tree.list({ cwd: '/a' })).map((info) => info.id)).toEqual(['old']);
  });

  it('leaves a file it cannot read out of the list, with a warning', async () => {
    const warnings: string[] = [];
    const store = newStore();
    await store.save(record('ok', [user('x'), reply('y')]));
    const future = join(dir, 'sessions', '--proj--', '2030-01-01T00-00-00-000Z_future.jsonl');
    await writeFile(future, `${JSON.stringify({ type: 'session', version: 99, id: 'future', timestamp: '2030-01-01T00:00:00.000Z', cwd: '/proj' })}\n`);
    const other = new JsonlSessionStore({ ...opts(), onWarning: (message: string) => void warnings.push(message) });
    stores.push(other);
    expect((await new JsonlSessionTree(other).list()).map((info) => info.id)).toEqual(['ok']);
    expect(warnings).toEqual([expect.stringContaining('future.jsonl: left out of the session list')]);
  });

  it('loads the record along the branch and shows the tree with roles and previews', async () => {
    const { tree } = await seeded();
    expect(texts(await tree.load('s1'))).toEqual(['a1', 'b1', 'a2', 'b2']);
    expect(await tree.load('missing')).toBeUndefined();
    const [root] = await tree.tree('s1');
    expect(root?.entry).toMatchObject({ type: 'message', role: 'user', preview: 'a1', parentId: null });
    expect(walk(await tree.tree('s1'))).toEqual(['a1', '  b1', '    a2', '      b2']);
  });

  it('branch moves the leaf; the next append starts a branch there; a reload sees both', async () => {
    const { store, tree, ids } = await seeded();
    const [, b1] = ids;
    await tree.branch('s1', b1!);
    expect(await tree.leaf('s1')).toBe(b1);
    expect(texts(await tree.load('s1'))).toEqual(['a1', 'b1']);

    // Persisted without an append: a new store resumes at the branch point.
    await store.close();
    const reloaded = new JsonlSessionTree(newStore());
    expect(await reloaded.leaf('s1')).toBe(b1);
    expect(texts(await reloaded.load('s1'))).toEqual(['a1', 'b1']);
    expect(walk(await reloaded.tree('s1'))).toEqual(['a1', '  b1', '    a2', '      b2']);

    const appended = await reloaded.append('s1', [chat(user('c2')), chat(reply('d2'))]);
    expect(appended).toHaveLength(2);
    const manager = await SessionManager.open(await fileOf('s1'), opts());
    await manager.close();
    expect(manager.getEntry(appended[0]!)?.parentId).toBe(b1);
    expect(manager.getLeafId()).toBe(appended[1]);
    expect(walk(await reloaded.tree('s1'))).toEqual(['a1', '  b1', '    a2', '      b2', '    c2', '      d2']);
    await reloaded.store.close();

    const third = new JsonlSessionTree(newStore());
    expect(await third.leaf('s1')).toBe(appended[1]);
    expect(texts(await third.load('s1'))).toEqual(['a1', 'b1', 'c2', 'd2']);
  });

  it('branch writes one leaf marker under the branch point that pi readers resume through, and none when the file already ends there', async () => {
    const { store, tree, ids } = await seeded();
    const file = await fileOf('s1');
    const before = (await readFile(file, 'utf8')).trim().split('\n');
    await tree.branch('s1', ids[3]!);
    await tree.branch('s1', ids[1]!);
    await tree.branch('s1', ids[1]!);
    await store.close();
    const after = (await readFile(file, 'utf8')).trim().split('\n');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
    expect(JSON.parse(after.at(-1)!)).toMatchObject({ type: 'custom', customType: LEAF_MARKER_TYPE, parentId: ids[1] });
    // A plain pi reader takes the marker as its leaf: the same branch.
    const pi = await SessionManager.open(file, opts());
    await pi.close();
    expect(pi.getBranch().map((entry) => entry.id)).toEqual([ids[0], ids[1], pi.getLeafId()]);
  });

  it('appends history entries after the leaf and returns one id per entry (the last toolResult for a tool batch)', async () => {
    const { tree, ids } = await seeded();
    const toolCall: Message = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }, { type: 'tool_use', id: 't2', name: 'read', input: {} }], state: 'complete', stopReason: 'tool_use' };
    const results: Message = {
      role: 'tool',
      content: [
        { type: 'tool_result', toolUseId: 't1', toolName: 'read', content: 'one', isError: false },
        { type: 'tool_result', toolUseId: 't2', toolName: 'read', content: 'two', isError: false },
      ],
    };
    const event: IHistoryEntry = { id: 'ev', timestamp: 't', category: 'event', type: 'tool-summary', data: { n: 2 } };
    const appended = await tree.append('s1', [chat(user('more')), chat(toolCall), chat(results), event]);
    expect(appended).toHaveLength(4);
    expect(await tree.leaf('s1')).toBe(appended[3]);
    const manager = await SessionManager.open(await fileOf('s1'), opts());
    await manager.close();
    expect(manager.getEntry(appended[0]!)?.parentId).toBe(ids[3]);
    expect(manager.getEntry(appended[2]!)).toMatchObject({ type: 'message', message: { role: 'toolResult', toolCallId: 't2' } });
    const loaded = await tree.load('s1');
    expect(loaded?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'tool']);
    expect(loaded?.history.at(-1)).toEqual(event);
    await expect(tree.append('s1', [{ category: 'chat' } as IHistoryEntry])).rejects.toMatchObject({ code: 'invalid_history_entry' });
  });

  it('sets and clears labels', async () => {
    const { tree, ids } = await seeded();
    await tree.setLabel('s1', ids[1]!, 'checkpoint');
    expect(walk(await tree.tree('s1'))).toContain('  b1 #checkpoint');
    await tree.setLabel('s1', ids[1]!, undefined);
    expect(walk(await tree.tree('s1')).some((line) => line.includes('#checkpoint'))).toBe(false);
    // Labels are entries on the branch; the conversation is unchanged.
    expect(texts(await tree.load('s1'))).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('forks root → entry into a new session file and leaves the original untouched', async () => {
    const { store, tree, ids } = await seeded();
    await tree.setLabel('s1', ids[0]!, 'start');
    const original = await readFile(await fileOf('s1'), 'utf8');
    const forked = await tree.fork('s1', ids[1]!, { name: 'Fork' });
    expect(forked).not.toBe('s1');
    expect(texts(await tree.load(forked))).toEqual(['a1', 'b1']);
    expect(walk(await tree.tree(forked))).toEqual(['a1 #start', '  b1', '    start']);
    expect(await readFile(await fileOf('s1'), 'utf8')).toBe(original);
    await store.close();

    const fresh = new JsonlSessionTree(newStore());
    const info = (await fresh.list()).find((item) => item.id === forked);
    expect(info).toMatchObject({ name: 'Fork', messageCount: 2, cwd: '/proj' });
    const header = JSON.parse((await readFile(await fileOf(forked), 'utf8')).split('\n')[0]!);
    expect(header.parentSession).toBe(await fileOf('s1'));
    expect(await fresh.fork('s1', ids[0]!, { newSessionId: 'chosen' })).toBe('chosen');
    await expect(fresh.fork('s1', ids[0]!, { newSessionId: 'chosen' })).rejects.toMatchObject({ code: 'session_exists' });
    await expect(fresh.fork('s1', ids[0]!, { newSessionId: '../x' })).rejects.toMatchObject({ code: 'invalid_session_id' });
  });

  it('rejects invalid ids, unknown sessions and unknown entries with typed errors', async () => {
    const { tree } = await seeded();
    for (const call of [
      () => tree.load('../etc'),
      () => tree.tree('../etc'),
      () => tree.leaf('a/b'),
      () => tree.branch('..', 'x'),
      () => tree.append('', []),
      () => tree.setLabel('/abs', 'x', 'l'),
      () => tree.fork('x/../y', 'x'),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'invalid_session_id' });
    }
    await expect(tree.tree('nope')).rejects.toMatchObject({ code: 'session_not_found', details: { sessionId: 'nope' } });
    await expect(tree.append('nope', [])).rejects.toMatchObject({ code: 'session_not_found' });
    await expect(tree.fork('nope', 'x')).rejects.toMatchObject({ code: 'session_not_found' });
    for (const call of [() => tree.branch('s1', 'missing'), () => tree.setLabel('s1', 'missing', 'l'), () => tree.fork('s1', 'missing')]) {
      await expect(call()).rejects.toMatchObject({ code: 'session_entry_not_found', details: { entryId: 'missing', sessionId: 's1' } });
    }
  });

  it('a live session keeps saving correctly after the tree moved its leaf', async () => {
    const { store, tree, ids } = await seeded();
    await tree.branch('s1', ids[1]!);
    // The session still holds a1..b2 and saves a new turn with a change that no longer lines up.
    const history = [user('a1'), reply('b1'), user('a2'), reply('b2'), user('a3'), reply('b3')];
    await store.save(record('s1', history), { appendedFrom: 4, rewritten: false });
    expect(texts(await tree.load('s1'))).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
  });
});

describe('jsonlSessionStore plugin: SessionTree', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('SessionTree and SessionStore of one kernel share one store', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'hello' }], replace: [jsonlSessionStore(opts())] }) });
    const tree = kernel.get(SessionTree);
    expect(tree).toBeInstanceOf(JsonlSessionTree);
    expect((tree as JsonlSessionTree).store).toBe(kernel.get(SessionStore));
    expect(kernel.describe().plugins.find((plugin) => plugin.name === 'session-store-jsonl')?.provides).toEqual(['SessionStore', 'SessionTree']);
    const session = kernel.createSession({ sessionId: 'k1', cwd: '/proj' });
    await session.run('hi');
    expect(texts(await tree.load('k1'))).toEqual(['hi', 'hello']);
    expect((await tree.list()).map((info) => info.id)).toEqual(['k1']);
    await kernel.shutdown();
  });

  it('a kernel that resolved only SessionTree closes its store once at shutdown', async () => {
    const close = vi.spyOn(JsonlSessionStore.prototype, 'close');
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonlSessionStore(opts())] }) });
    const tree = kernel.get(SessionTree) as JsonlSessionTree;
    expect(await tree.list()).toEqual([]);
    await kernel.shutdown();
    expect(close.mock.contexts).toEqual([tree.store]);
  });

  it('a given store backs both tokens', async () => {
    const store = newStore();
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonlSessionStore(store)] }) });
    expect(kernel.get(SessionStore)).toBe(store);
    expect((kernel.get(SessionTree) as JsonlSessionTree).store).toBe(store);
    await kernel.shutdown();
  });
});
