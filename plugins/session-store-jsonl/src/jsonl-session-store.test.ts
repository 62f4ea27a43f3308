import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ISessionRecord, Message } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
    await expect(store.load('../../etc/passwd')).rejects.toMatchObject({ code: 'invalid_session_path_part' });
    await expect(store.save(record([], { id: '' }))).rejects.toMatchObject({ code: 'invalid_session_record' });
  });
});
