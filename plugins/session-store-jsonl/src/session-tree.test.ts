import { describe, expect, it } from 'vitest';
import { SessionManager } from './session-manager.js';
import type { SessionEntry } from './entries.js';
import { SessionTree } from './session-tree.js';
import { getPath } from './context.js';

const user = (text: string) => ({ role: 'user', content: text, timestamp: 1 });
const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }], provider: 'anthropic', model: 'claude-test', stopReason: 'stop', timestamp: 1 });

describe('SessionManager tree (in memory)', () => {
  it('chains every append type to the previous entry and advances the leaf', () => {
    const session = SessionManager.inMemory('/work');
    const ids = [
      session.appendMessage(user('a')),
      session.appendThinkingLevelChange('high'),
      session.appendModelChange('openai/gpt-4'),
      session.appendCompaction('sum', undefined, 10),
      session.appendCustomEntry('ext', { x: 1 }),
      session.appendCustomMessageEntry('ext', 'text', true),
      session.appendTtsrInjection(['r']),
      session.appendSessionInit({ systemPrompt: 'p', tools: ['read'] }),
      session.appendModeChange('plan'),
    ];
    const entries = session.getEntries();
    expect(entries.map((entry) => entry.parentId)).toEqual([null, ...ids.slice(0, -1)]);
    expect(session.getLeafId()).toBe(ids.at(-1));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toHaveLength(8);
    expect(entries[2]).toMatchObject({ model: 'openai/gpt-4', provider: 'openai', modelId: 'gpt-4' });
  });

  it('getBranch returns [], the full path or the path to an id', () => {
    const session = SessionManager.inMemory('/work');
    expect(session.getBranch()).toEqual([]);
    const a = session.appendMessage(user('a'));
    const b = session.appendMessage(assistant('b'));
    session.appendMessage(user('c'));
    expect(session.getBranch()).toHaveLength(3);
    expect(session.getBranch(b).map((entry) => entry.id)).toEqual([a, b]);
  });

  it('builds trees: empty, linear, forks and nesting', () => {
    const session = SessionManager.inMemory('/work');
    expect(session.getTree()).toEqual([]);
    const id1 = session.appendMessage(user('1'));
    const id2 = session.appendMessage(assistant('2'));
    const id3 = session.appendMessage(user('3'));
    const id4 = session.appendMessage(assistant('4'));
    let tree = session.getTree();
    expect(tree).toHaveLength(1);
    expect(tree[0]?.children[0]?.children[0]?.children[0]?.entry.id).toBe(id4);

    session.branch(id2);
    const id5 = session.appendMessage(user('5'));
    const id6 = session.appendMessage(assistant('6'));
    session.branch(id5);
    const id7 = session.appendMessage(assistant('7'));
    tree = session.getTree();
    const node2 = tree[0]?.children[0];
    expect(node2?.entry.id).toBe(id2);
    expect(node2?.children.map((child) => child.entry.id)).toEqual([id3, id5]);
    expect(node2?.children[0]?.children.map((child) => child.entry.id)).toEqual([id4]);
    expect(node2?.children[1]?.children.map((child) => child.entry.id)).toEqual([id6, id7]);
    expect(session.getChildren(id2).map((entry) => entry.id)).toEqual([id3, id5]);
    expect(id1).toBeTypeOf('string');
  });

  it('gives a node three children after three branches', () => {
    const session = SessionManager.inMemory('/work');
    const root = session.appendMessage(user('root'));
    for (const text of ['a', 'b', 'c']) {
      session.branch(root);
      session.appendMessage(assistant(text));
    }
    expect(session.getTree()[0]?.children).toHaveLength(3);
  });

  it('branch() rejects unknown ids and makes the next append a child', () => {
    const session = SessionManager.inMemory('/work');
    const id1 = session.appendMessage(user('1'));
    session.appendMessage(assistant('2'));
    expect(() => session.branch('nonexistent')).toThrow('Entry nonexistent not found');
    session.branch(id1);
    const id3 = session.appendMessage(assistant('3'));
    expect(session.getEntry(id3)?.parentId).toBe(id1);
  });

  it('resetLeaf() makes the next append a new root', () => {
    const session = SessionManager.inMemory('/work');
    session.appendMessage(user('1'));
    session.resetLeaf();
    expect(session.getLeafId()).toBeNull();
    expect(session.buildSessionContext().messages).toEqual([]);
    const root = session.appendMessage(user('2'));
    expect(session.getEntry(root)?.parentId).toBeNull();
    expect(session.getTree()).toHaveLength(2);
  });

  it('branchWithSummary leaves the leaf on the summary and drops the abandoned message from context', () => {
    const session = SessionManager.inMemory('/work');
    const id1 = session.appendMessage(user('1'));
    session.appendMessage(assistant('abandoned'));
    const summaryId = session.branchWithSummary(id1, 'tried something');
    expect(session.getLeafId()).toBe(summaryId);
    expect(session.getEntry(summaryId)).toMatchObject({ parentId: id1, fromId: id1, type: 'branch_summary' });
    const roles = session.buildSessionContext().messages.map((message) => message.role);
    expect(roles).toEqual(['user', 'branchSummary']);
    expect(session.getEntry(session.branchWithSummary(null, 'from root'))).toMatchObject({ parentId: null, fromId: 'root' });
  });

  it('createBranchedSession in memory keeps only the path and returns undefined', async () => {
    const session = SessionManager.inMemory('/work');
    const id1 = session.appendMessage(user('1'));
    const id2 = session.appendMessage(assistant('2'));
    const id3 = session.appendMessage(user('3'));
    session.appendMessage(assistant('4'));
    session.branch(id3);
    session.appendMessage(assistant('5'));
    await expect(session.createBranchedSession('nope')).rejects.toThrow('Entry nope not found');
    const oldId = session.getSessionId();
    expect(await session.createBranchedSession(id2)).toBeUndefined();
    expect(session.getEntries().map((entry) => entry.id)).toEqual([id1, id2]);
    expect(session.getSessionId()).not.toBe(oldId);
    expect(session.getHeader().parentSession).toBe(oldId);
  });

  it('createBranchedSession at a later entry keeps the branch path', async () => {
    const session = SessionManager.inMemory('/work');
    const id1 = session.appendMessage(user('1'));
    const id2 = session.appendMessage(assistant('2'));
    session.appendMessage(user('3'));
    const id4 = session.appendMessage(user('4'));
    session.branch(id2);
    const id5 = session.appendMessage(user('5'));
    session.branch(id4);
    await session.createBranchedSession(id5);
    expect(session.getEntries().map((entry) => entry.id)).toEqual([id1, id2, id5]);
    expect(session.getEntry(id5)?.parentId).toBe(id2);
  });

  it('custom entries are on the path but not in the context', () => {
    const session = SessionManager.inMemory('/work');
    session.appendMessage(user('1'));
    session.appendCustomEntry('state', { n: 1 });
    session.appendMessage(assistant('2'));
    expect(session.getBranch()).toHaveLength(3);
    expect(session.buildSessionContext().messages).toHaveLength(2);
  });

  it('newSession({ id }) puts the id in the header; parentSession is kept', () => {
    const session = SessionManager.inMemory('/work');
    session.newSession({ id: 'my-custom-id', parentSession: 'other' });
    expect(session.getHeader()).toMatchObject({ id: 'my-custom-id', parentSession: 'other', version: 3, cwd: '/work' });
    expect(() => session.newSession({ id: '../evil' })).toThrow(/Invalid session id/);
  });
});

describe('labels', () => {
  it('sets, gets and clears labels; the last one wins', () => {
    const session = SessionManager.inMemory('/work');
    const id = session.appendMessage(user('1'));
    session.appendLabelChange(id, 'first');
    session.appendLabelChange(id, 'checkpoint');
    expect(session.getLabel(id)).toBe('checkpoint');
    session.appendLabelChange(id, undefined);
    expect(session.getLabel(id)).toBeUndefined();
    const cleared = session.getEntries().at(-1) as Record<string, unknown>;
    expect('label' in cleared).toBe(false);
  });

  it('shows labels on tree nodes and keeps them out of the context', () => {
    const session = SessionManager.inMemory('/work');
    const id = session.appendMessage(user('1'));
    session.appendMessage(assistant('2'));
    session.appendLabelChange(id, 'start');
    expect(session.getTree()[0]?.label).toBe('start');
    expect(session.buildSessionContext().messages).toHaveLength(2);
  });

  it('rejects labels for unknown entries', () => {
    const session = SessionManager.inMemory('/work');
    expect(() => session.appendLabelChange('non-existent', 'x')).toThrow('Entry non-existent not found');
  });

  it('createBranchedSession re-creates on-path labels and drops off-path ones', async () => {
    const session = SessionManager.inMemory('/work');
    const id1 = session.appendMessage(user('1'));
    const id2 = session.appendMessage(assistant('2'));
    const id3 = session.appendMessage(user('3'));
    session.appendLabelChange(id1, 'one');
    session.appendLabelChange(id2, 'two');
    session.appendLabelChange(id3, 'three');
    await session.createBranchedSession(id2);
    const labels = session.getEntries().filter((entry) => entry.type === 'label');
    expect(labels).toHaveLength(2);
    expect(session.getLabel(id1)).toBe('one');
    expect(session.getLabel(id2)).toBe('two');
    expect(session.getLabel(id3)).toBeUndefined();
    const entries = session.getEntries();
    for (let index = 1; index < entries.length; index += 1) expect(entries[index]?.parentId).toBe(entries[index - 1]?.id);
  });
});

describe('SessionTree.adopt', () => {
  it('takes the array over without copying and indexes ids, labels, the assistant flag and the leaf', () => {
    const tree = new SessionTree();
    const entries = [
      { type: 'message', id: 'a', parentId: null, timestamp: 't1', message: user('q') },
      { type: 'message', id: 'b', parentId: 'a', timestamp: 't2', message: assistant('r') },
      { type: 'label', id: 'c', parentId: 'b', timestamp: 't3', targetId: 'a', label: 'start' },
    ] as SessionEntry[];
    tree.adopt(entries);
    expect(tree.entries).toBe(entries);
    expect(tree.byId.get('b')).toBe(entries[1]);
    expect(tree.getLabel('a')).toBe('start');
    expect(tree.hasAssistant).toBe(true);
    expect(tree.leafId).toBe('c');
    expect(tree.getChildren('a').map((entry) => entry.id)).toEqual(['b']);
    tree.add({ type: 'message', id: 'd', parentId: 'c', timestamp: 't4', message: user('next') } as SessionEntry);
    expect(tree.getBranch().map((entry) => entry.id)).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('SessionTree.getBranch', () => {
  const entry = (id: string, parentId: string | null): SessionEntry => ({ type: 'message', id, parentId, timestamp: 't', message: user(id) }) as SessionEntry;
  const ids = (path: SessionEntry[]): string[] => path.map((item) => item.id);

  it('gives the path getPath walks for chains, forks, duplicate ids, foreign roots and cycles (randomized)', () => {
    let seed = 7;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 400; trial += 1) {
      const count = 1 + Math.floor(random() * 12);
      const entries: SessionEntry[] = [];
      for (let index = 0; index < count; index += 1) {
        const roll = random();
        const previous = entries[index - 1]?.id ?? null;
        // Mostly a chain; sometimes a fork, a repeated id, a parent not in the file or a cycle.
        const parentId =
          roll < 0.7 ? previous : roll < 0.8 ? (entries[Math.floor(random() * index)]?.id ?? null) : roll < 0.88 ? 'missing' : roll < 0.94 ? `e${index + 1}` : null;
        const id = random() < 0.06 && index > 0 ? (entries[Math.floor(random() * index)]!.id) : `e${index}`;
        entries.push(entry(id, parentId));
      }
      const adopted = new SessionTree();
      adopted.adopt([...entries]);
      const appended = new SessionTree();
      for (const item of entries) appended.add(item);
      for (const tree of [adopted, appended]) {
        for (const target of new Set(entries.map((item) => item.id))) {
          expect(ids(tree.getBranch(target)), `trial ${trial}, to ${target}`).toEqual(ids(getPath(tree.byId.get(target)!, tree.byId)));
        }
        expect(ids(tree.getBranch())).toEqual(ids(getPath(tree.byId.get(tree.leafId!)!, tree.byId)));
      }
    }
  });

  it('gives a chain whose first entry hangs from a later one the path the walk stops with', () => {
    for (const first of ['c', 'b']) {
      const tree = new SessionTree();
      tree.adopt([entry('a', first), entry('b', 'a'), entry('c', 'b')]);
      expect(ids(tree.getBranch())).toEqual(ids(getPath(tree.byId.get('c')!, tree.byId)));
      expect(ids(tree.getBranch('b'))).toEqual(ids(getPath(tree.byId.get('b')!, tree.byId)));
    }
  });

  it('hands out a copy of the chain: changing it changes no entry list', () => {
    const tree = new SessionTree();
    tree.adopt([entry('a', null), entry('b', 'a'), entry('c', 'b')]);
    const path = tree.getBranch();
    expect(ids(path)).toEqual(['a', 'b', 'c']);
    path.pop();
    expect(ids(tree.getBranch())).toEqual(['a', 'b', 'c']);
    expect(tree.entries).toHaveLength(3);
  });

  it('walks the links again once an append leaves the chain, and from a moved leaf', () => {
    const tree = new SessionTree();
    tree.adopt([entry('a', null), entry('b', 'a'), entry('c', 'b')]);
    tree.add(entry('d', 'a'));
    expect(ids(tree.getBranch())).toEqual(['a', 'd']);
    expect(ids(tree.getBranch('c'))).toEqual(['a', 'b', 'c']);
    tree.add(entry('e', 'd'));
    expect(ids(tree.getBranch())).toEqual(['a', 'd', 'e']);
  });
});
