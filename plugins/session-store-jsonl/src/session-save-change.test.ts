import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IHistoryEntry, ISessionRecord, Message } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonlSessionStore } from './jsonl-session-store.js';
import { jsonlSessionStore } from './plugin.js';
import { SessionManager } from './session-manager.js';

let dir: string;
const opts = () => ({ agentDir: dir, terminalId: null, onWarning: () => undefined });
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-change-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const user = (text: string): Message => ({ role: 'user', content: text });
const reply = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }], state: 'complete', stopReason: 'end_turn' });
const chat = (id: string, message: Message): IHistoryEntry => ({ id, timestamp: '2025-01-01T00:00:00.000Z', category: 'chat', type: message.role, data: message });
const event = (id: string): IHistoryEntry => ({ id, timestamp: '2025-01-01T00:00:00.000Z', category: 'event', type: 'tool-summary', data: { id } });

/** A record as a kernel session makes it: messages are the chat entries of history. */
function record(history: IHistoryEntry[]): ISessionRecord {
  const messages = history.filter((entry) => entry.category === 'chat').map((entry) => entry.data as Message);
  return { id: 'sess-1', cwd: '/proj', createdAt: 't', updatedAt: 't', messages, history };
}
const turn = (n: number): IHistoryEntry[] => [chat(`u${n}`, user(`q${n}`)), chat(`a${n}`, reply(`r${n}`))];

async function lines(id = 'sess-1'): Promise<string[]> {
  const [info] = (await SessionManager.listAll(opts())).filter((item) => item.id === id);
  return (await readFile(info?.path as string, 'utf8')).trim().split('\n');
}
const messageTexts = (saved: ISessionRecord | undefined) =>
  saved?.messages.map((message) => (typeof message.content === 'string' ? message.content : (message.content[0] as { text: string }).text));

describe('JsonlSessionStore.save with a SessionRecordChange', () => {
  it('appends the new history entries, in order, and leaves every earlier line as it was', async () => {
    const store = new JsonlSessionStore(opts());
    const first = [...turn(1), event('e1')];
    await store.save(record(first), { appendedFrom: 0, rewritten: false });
    const before = await lines();
    const second = [...first, ...turn(2), event('e2')];
    await store.save(record(second), { appendedFrom: first.length, rewritten: false });
    const after = await lines();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((line) => JSON.parse(line).type)).toEqual(['message', 'message', 'custom']);
    await store.close();

    const loaded = await new JsonlSessionStore(opts()).load('sess-1');
    expect(messageTexts(loaded)).toEqual(['q1', 'r1', 'q2', 'r2']);
    expect(loaded?.history.filter((entry) => entry.category === 'event').map((entry) => entry.id)).toEqual(['e1', 'e2']);
  });

  it('trusts a change that lines up: earlier entries are not compared again', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record(turn(1)), { appendedFrom: 0, rewritten: false });
    // The prefix differs from what was saved, but the change says only turn 2 is new.
    const edited = [chat('u1', user('edited')), chat('a1', reply('r1')), ...turn(2)];
    await store.save(record(edited), { appendedFrom: 2, rewritten: false });
    await store.close();
    expect(messageTexts(await new JsonlSessionStore(opts()).load('sess-1'))).toEqual(['q1', 'r1', 'q2', 'r2']);
  });

  it('continues a resumed session (first save in a new store) by appending', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record(turn(1)), { appendedFrom: 0, rewritten: false });
    await store.close();

    const again = new JsonlSessionStore(opts());
    const loaded = (await again.load('sess-1'))!;
    const before = await lines();
    await again.save(record([...loaded.history, ...turn(2)]), { appendedFrom: loaded.history.length, rewritten: false });
    const after = await lines();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 2);
    await again.close();
    expect(messageTexts(await new JsonlSessionStore(opts()).load('sess-1'))).toEqual(['q1', 'r1', 'q2', 'r2']);
  });

  it('rewritten: compares and branches from the last shared message; the old tail stays in the file', async () => {
    const store = new JsonlSessionStore(opts());
    const full = [...turn(1), ...turn(2)];
    await store.save(record(full), { appendedFrom: 0, rewritten: false });
    const compacted = [...turn(1), chat('s', reply('summary'))];
    await store.save(record(compacted), { appendedFrom: 0, rewritten: true });
    await store.save(record([...compacted, ...turn(3)]), { appendedFrom: compacted.length, rewritten: false });
    await store.close();

    expect(messageTexts(await new JsonlSessionStore(opts()).load('sess-1'))).toEqual(['q1', 'r1', 'summary', 'q3', 'r3']);
    const entries = (await lines()).slice(1).map((line) => JSON.parse(line));
    expect(entries.filter((entry) => entry.type === 'message')).toHaveLength(7);
  });

  it.each([
    ['behind the store (the store already has more)', 0],
    ['ahead of the store (entries it never saw)', 3],
  ])('falls back to comparing when appendedFrom is %s: nothing duplicated, nothing dropped', async (_case, appendedFrom) => {
    const store = new JsonlSessionStore(opts());
    await store.save(record(turn(1)), { appendedFrom: 0, rewritten: false });
    const history = [...turn(1), ...turn(2), ...turn(3)];
    await store.save(record(history), { appendedFrom, rewritten: false });
    await store.close();
    expect(messageTexts(await new JsonlSessionStore(opts()).load('sess-1'))).toEqual(['q1', 'r1', 'q2', 'r2', 'q3', 'r3']);
    expect((await lines()).slice(1).filter((line) => JSON.parse(line).type === 'message')).toHaveLength(6);
  });

  it('falls back when the entry before appendedFrom is not the one the store saved last', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record(turn(1)), { appendedFrom: 0, rewritten: false });
    // Another writer's history of the same length: the boundary id differs.
    const other = [chat('x1', user('q1')), chat('x2', reply('other')), ...turn(2)];
    await store.save(record(other), { appendedFrom: 2, rewritten: false });
    await store.close();
    expect(messageTexts(await new JsonlSessionStore(opts()).load('sess-1'))).toEqual(['q1', 'other', 'q2', 'r2']);
  });

  it('a failed save is retried by the session with the old appendedFrom: the store compares, no duplicates', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record(turn(1)), { appendedFrom: 0, rewritten: false });
    await store.save(record([...turn(1), ...turn(2)]), { appendedFrom: 2, rewritten: false });
    // As if the session never saw the previous save succeed.
    await store.save(record([...turn(1), ...turn(2), ...turn(3)]), { appendedFrom: 2, rewritten: false });
    await store.close();
    expect(messageTexts(await new JsonlSessionStore(opts()).load('sess-1'))).toEqual(['q1', 'r1', 'q2', 'r2', 'q3', 'r3']);
  });

  it('a kernel session appends each turn after the lines of the previous ones', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'one' }, { text: 'two' }], replace: [jsonlSessionStore(opts())] }) });
    const session = kernel.createSession({ sessionId: 'live', cwd: '/proj' });
    await session.run('first');
    const before = await lines('live');
    await session.run('second');
    const after = await lines('live');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((line) => JSON.parse(line).message?.role)).toEqual(['user', 'assistant']);
    await kernel.shutdown();
  });
});
