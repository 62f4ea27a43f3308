import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileBlobStore, MemoryBlobStore, parseBlobRef } from './blob-store.js';
import { MAX_PERSIST_CHARS, TRUNCATION_NOTICE, serializeEntry, truncateForPersistence } from './persist-transform.js';
import { SessionManager, type SessionManagerOptions } from './session-manager.js';

const image = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');

describe('truncation', () => {
  it('cuts strings over 500,000 chars to exactly the limit with the notice', () => {
    const cut = truncateForPersistence('a'.repeat(MAX_PERSIST_CHARS + 10));
    expect(cut).toHaveLength(MAX_PERSIST_CHARS);
    expect(cut.endsWith(TRUNCATION_NOTICE)).toBe(true);
    expect(truncateForPersistence('short')).toBe('short');
  });

  it('never splits a surrogate pair', () => {
    const keep = MAX_PERSIST_CHARS - TRUNCATION_NOTICE.length;
    const text = `${'a'.repeat(keep - 1)}😀${'b'.repeat(100)}`;
    const cut = truncateForPersistence(text);
    const body = cut.slice(0, -TRUNCATION_NOTICE.length);
    expect(body.endsWith('a')).toBe(true);
    expect(body).toHaveLength(keep - 1);
  });

  it('drops transient fields, recomputes lineCount and leaves the entry unchanged', () => {
    const entry = { type: 'message', message: { role: 'toolResult', content: 'x\n'.repeat(300_000), lineCount: 300_001, partialJson: '{', jsonlEvents: [1] } };
    const line = JSON.parse(serializeEntry(entry));
    expect(line.message.partialJson).toBeUndefined();
    expect(line.message.jsonlEvents).toBeUndefined();
    expect(line.message.content).toHaveLength(MAX_PERSIST_CHARS);
    expect(line.message.lineCount).toBe(line.message.content.split('\n').length);
    expect(entry.message.partialJson).toBe('{');
  });

  it('keeps signed blocks byte-exact', () => {
    const thinking = 't'.repeat(MAX_PERSIST_CHARS + 5);
    const line = JSON.parse(serializeEntry({ type: 'message', message: { role: 'assistant', content: [{ type: 'thinking', thinking, signature: 'sig' }] } }));
    expect(line.message.content[0].thinking).toBe(thinking);
  });
});

describe('blobs', () => {
  let dir: string;
  let options: SessionManagerOptions;
  let warnings: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-blobs-'));
    warnings = [];
    options = { agentDir: dir, terminalId: null, onWarning: (message) => warnings.push(message) };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('externalizes images of 1,024+ base64 chars and resolves them on load', async () => {
    const big = image(2000);
    const small = image(100);
    const session = SessionManager.create('/w', options);
    session.appendMessage({ role: 'user', content: [{ type: 'image', data: big, mimeType: 'image/png' }, { type: 'image', data: small, mimeType: 'image/png' }] });
    session.appendCustomMessageEntry('ext', [{ type: 'image', data: big, mimeType: 'image/png' } as { type: string }], true);
    session.appendMessage({ role: 'assistant', content: [], provider: 'p', model: 'm' });
    await session.close();
    const file = session.getSessionFile() as string;
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(big);
    expect(text).toContain(small);
    const hash = /blob:sha256:([0-9a-f]{64})/.exec(text)?.[1] as string;
    expect(await readdir(join(dir, 'blobs'))).toEqual([hash]);
    expect((await readFile(join(dir, 'blobs', hash))).toString('base64')).toBe(big);
    const reopened = await SessionManager.open(file, options);
    const [first, second] = reopened.getEntries();
    expect(first?.type === 'message' && (first.message.content as { data: string }[])[0]?.data).toBe(big);
    expect(second?.type === 'custom_message' && (second.content as unknown as { data: string }[])[0]?.data).toBe(big);
  });

  it('keeps a missing blob ref and warns; rejects a non-hex ref without touching paths', async () => {
    await writeFile(join(dir, 'secret'), 'do not read');
    const missing = `blob:sha256:${'a'.repeat(64)}`;
    const traversal = 'blob:sha256:../secret';
    const file = join(dir, 's.jsonl');
    const entry = (id: string, data: string) => JSON.stringify({ type: 'message', id, parentId: null, timestamp: 't', message: { role: 'user', content: [{ type: 'image', data, mimeType: 'x' }] } });
    await writeFile(file, `${JSON.stringify({ type: 'session', version: 3, id: 's', timestamp: 't', cwd: '/' })}\n${entry('aaaaaaaa', missing)}\n${entry('bbbbbbbb', traversal)}\n`);
    const session = await SessionManager.open(file, { ...options, blobStore: new FileBlobStore(join(dir, 'blobs')) });
    const datas = session.getEntries().map((item) => item.type === 'message' && (item.message.content as { data: string }[])[0]?.data);
    expect(datas).toEqual([missing, traversal]);
    expect(warnings.some((warning) => warning.includes('is missing'))).toBe(true);
    expect(warnings.some((warning) => warning.includes('invalid blob reference'))).toBe(true);
    expect(() => parseBlobRef(traversal)).toThrow(/64 lowercase hex/);
    expect(() => new FileBlobStore(dir).get('../secret')).toThrow(/64 lowercase hex/);
  });

  it('leaves non-canonical base64 inline', () => {
    const blobs = new MemoryBlobStore();
    const data = `${image(2000).slice(0, -4)}@@@@`;
    expect(JSON.parse(serializeEntry({ type: 'message', message: { content: [{ type: 'image', data }] } }, blobs)).message.content[0].data).toBe(data);
    expect(blobs.blobs.size).toBe(0);
  });
});
