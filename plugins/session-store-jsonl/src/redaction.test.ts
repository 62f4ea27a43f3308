import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ISessionRecord, Message } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { redactSecretText } from '@tessera/plugin-session-logger';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonlSessionStore } from './jsonl-session-store.js';
import { serializeEntry } from './persist-transform.js';
import { jsonlSessionStore } from './plugin.js';
import { SessionManager } from './session-manager.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-store-redact-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const opts = (redact?: (text: string) => string) => ({ agentDir: dir, terminalId: null, onWarning: () => undefined, ...(redact ? { redact } : {}) });

// Fake credentials in vendor formats, assembled at run time (none is a real key).
const GITHUB = `ghp_${'a1B2c3D4e5F6g7H8i9J0'}${'k1L2m3N4o5P6q7R8'}`;
const ANTHROPIC = `sk-ant-api03-${'Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe'.repeat(2)}AA`;
const DB_URL_PASSWORD = 'Pa55-w0rd-db';

const user = (text: string): Message => ({ role: 'user', content: text });
const reply = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }], state: 'complete', stopReason: 'end_turn' });
const record = (messages: Message[]): ISessionRecord => ({ id: 'sess-r', cwd: '/proj', createdAt: 't', updatedAt: 't', messages, history: [] });

async function sessionFile(): Promise<string> {
  const [info] = await SessionManager.listAll(opts());
  return readFile(info!.path, 'utf8');
}

describe('JSONL session store: secrets in the conversation', () => {
  it('keeps the conversation as it was by default (resume needs it)', async () => {
    const store = new JsonlSessionStore(opts());
    await store.save(record([user(`push with ${GITHUB}`), reply('done')]));
    await store.close();
    expect(await sessionFile()).toContain(GITHUB);
  });

  it('redact: redactSecretText (the session logger\'s function) redacts what a kernel session writes', async () => {
    const kernel = await createKernel({
      plugins: testPreset({ turns: [{ text: [`Stored ANTHROPIC_API_KEY=${ANTHROPIC.slice(0, 30)}`, `${ANTHROPIC.slice(30)} for you.`] }], replace: [jsonlSessionStore(opts(redactSecretText))] }),
    });
    const session = kernel.createSession({ cwd: '/proj', systemMessage: 'sys' });
    await session.run(`deploy with ${GITHUB} to postgres://app:${DB_URL_PASSWORD}@db.internal/app`);
    // In memory, the live session keeps its full text.
    expect(JSON.stringify(session.getHistory())).toContain(GITHUB);
    await kernel.shutdown();

    const text = await sessionFile();
    for (const secret of [GITHUB, ANTHROPIC.slice(-20), DB_URL_PASSWORD]) expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED:github-token]');
    expect(text).toContain('ANTHROPIC_API_KEY=[REDACTED:anthropic-key]');
    expect(text).toContain('postgres://app:[REDACTED:url-password]@db.internal/app');

    // The file still loads: ids and links are untouched, the text is the redacted one.
    const loaded = await new JsonlSessionStore(opts(redactSecretText)).load(session.sessionId);
    expect(loaded?.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(loaded?.messages[0]).toEqual(user('deploy with [REDACTED:github-token] to postgres://app:[REDACTED:url-password]@db.internal/app'));
  });

  it('saving the live (unredacted) messages again to a reopened store appends, never forks', async () => {
    const messages = [user(`token ${GITHUB}`), reply('ok')];
    const first = new JsonlSessionStore(opts(redactSecretText));
    await first.save(record(messages));
    await first.close();
    const second = new JsonlSessionStore(opts(redactSecretText));
    await second.save(record([...messages, user('next'), reply('fine')]));
    await second.close();
    const [info] = await SessionManager.listAll(opts());
    const manager = await SessionManager.open(info!.path, opts());
    const entries = manager.getEntries().filter((entry) => entry.type === 'message');
    expect(entries).toHaveLength(4);
    // One linear chain: every message entry's parent is the entry before it on the path.
    expect(manager.getBranch().filter((entry) => entry.type === 'message')).toHaveLength(4);
    expect(await sessionFile()).not.toContain(GITHUB);
  });

  it('leaves tree links, image bytes, blob refs and signed blocks as they are', () => {
    const redact = (text: string): string => text.replace(/secret/g, '[gone]');
    const entry = {
      type: 'message',
      id: 'secret-id',
      parentId: 'secret-parent',
      timestamp: 'secret-time',
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a secret here' },
          { type: 'thinking', thinking: 'the secret thought', thinkingSignature: 'sig' },
          { type: 'image', data: 'c2VjcmV0secret', mimeType: 'image/png' },
          { type: 'toolCall', id: 'c1', name: 'run', arguments: { command: 'echo secret', list: ['secret'] } },
        ],
      },
    };
    const line = JSON.parse(serializeEntry(entry, undefined, redact)) as typeof entry;
    expect([line.id, line.parentId, line.timestamp]).toEqual(['secret-id', 'secret-parent', 'secret-time']);
    expect(line.message.content).toEqual([
      { type: 'text', text: 'a [gone] here' },
      { type: 'thinking', thinking: 'the secret thought', thinkingSignature: 'sig' },
      { type: 'image', data: 'c2VjcmV0secret', mimeType: 'image/png' },
      { type: 'toolCall', id: 'c1', name: 'run', arguments: { command: 'echo [gone]', list: ['[gone]'] } },
    ]);
    // The entry in memory is never changed.
    expect(entry.message.content[0]).toEqual({ type: 'text', text: 'a secret here' });
  });

  it('SessionManager applies it to summaries, custom data and the title too', async () => {
    const manager = SessionManager.create('/proj', opts(redactSecretText));
    manager.appendMessage({ role: 'user', content: `use ${GITHUB}`, timestamp: 0 } as never);
    manager.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'ok' }], timestamp: 0 } as never);
    manager.appendCustomEntry('note', { env: `API_KEY=${ANTHROPIC}` });
    manager.appendCompaction(`Summary: the user shared ${GITHUB}.`, manager.getLeafId()!, 100);
    manager.setSessionName(`Deploy with ${GITHUB}`);
    await manager.close();
    const text = await readFile(manager.getSessionFile()!, 'utf8');
    expect(text).not.toContain(GITHUB);
    expect(text).not.toContain(ANTHROPIC.slice(-20));
    expect(text).toContain('Summary: the user shared [REDACTED:github-token].');
    expect(text).toContain('"title":"Deploy with [REDACTED:github-token]"');
  });
});
