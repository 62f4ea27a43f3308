import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStorage } from './file-session-storage.js';
import { MemorySessionStorage } from './memory-session-storage.js';
import { SessionManager } from './session-manager.js';
import type { SessionStorage } from './session-storage.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-storage-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each([
  ['FileSessionStorage', () => new FileSessionStorage()],
  ['MemorySessionStorage', () => new MemorySessionStorage()],
] as const)('%s', (_name, make) => {
  it('reads, writes, lists, renames and unlinks', async () => {
    const storage: SessionStorage = make();
    const base = join(dir, _name);
    storage.ensureDirSync(base);
    expect(storage.readTextSync(join(base, 'none'))).toBeUndefined();
    expect(await storage.readText(join(base, 'none'))).toBeUndefined();
    await storage.writeText(join(base, 'a.jsonl'), 'héllo\nworld\n');
    storage.writeTextSync(join(base, 'b.txt'), 'x');
    expect(storage.listFilesSync(base, '*.jsonl')).toEqual(['a.jsonl']);
    expect(storage.listFilesSync(base, '*').sort()).toEqual(['a.jsonl', 'b.txt']);
    expect(storage.listFilesSync(base, 'b.txt')).toEqual(['b.txt']);
    expect(storage.listDirsSync(dir)).toContain(_name);
    expect(await storage.readTextPrefix(join(base, 'a.jsonl'), 1)).toBe('h');
    expect(await storage.readTextTail(join(base, 'a.jsonl'), 6)).toBe('world\n');
    expect(storage.statSync(join(base, 'a.jsonl'))?.isFile).toBe(true);
    expect(storage.statSync(join(base, 'missing'))).toBeUndefined();
    let text = '';
    for await (const chunk of storage.readTextChunks(join(base, 'a.jsonl'))) text += chunk;
    expect(text).toBe('héllo\nworld\n');
    await storage.rename(join(base, 'a.jsonl'), join(base, 'c.jsonl'));
    expect(await storage.exists(join(base, 'a.jsonl'))).toBe(false);
    expect(storage.existsSync(join(base, 'c.jsonl'))).toBe(true);
    await storage.unlink(join(base, 'c.jsonl'));
    await expect(storage.unlink(join(base, 'c.jsonl'))).rejects.toThrow();
    await storage.fsyncDir(base);
  });

  it('writers append or truncate, in order', async () => {
    const storage: SessionStorage = make();
    const file = join(dir, `${_name}-w.jsonl`);
    storage.writeTextSync(file, 'first\n');
    const appender = storage.openWriter(file, { flags: 'a' });
    appender.writeLine('second');
    appender.writeLine('third');
    await appender.fsync();
    await appender.close();
    expect(await storage.readText(file)).toBe('first\nsecond\nthird\n');
    const truncator = storage.openWriter(file, { flags: 'w' });
    truncator.writeLine('only');
    await truncator.close();
    expect(await storage.readText(file)).toBe('only\n');
    expect(truncator.getError()).toBeUndefined();
  });
});

describe('FileSessionStorage details', () => {
  it('drops a partial UTF-8 character at prefix and tail boundaries', async () => {
    const storage = new FileSessionStorage();
    const file = join(dir, 'utf8.txt');
    await writeFile(file, 'aéb');
    expect(await storage.readTextPrefix(file, 2)).toBe('a');
    expect(await storage.readTextTail(file, 2)).toBe('b');
  });

  it('reports a writer open failure through flush and getError', async () => {
    const writer = new FileSessionStorage().openWriter(join(dir, 'no', 'such', 'dir', 'f'), { flags: 'a' });
    writer.writeLine('x');
    await expect(writer.flush()).rejects.toThrow(/ENOENT/);
    expect(writer.getError()).toBeDefined();
  });

  it('creates a file (opened off the event loop) with the lines written before the open finished, in order; an existing one is refused', async () => {
    const storage = new FileSessionStorage();
    const file = join(dir, 'created.jsonl');
    const creator = storage.openWriter(file, { flags: 'wx' });
    creator.writeLine('one');
    creator.writeLine('two');
    await creator.fsync();
    creator.writeLine('three');
    await creator.close();
    expect(await storage.readText(file)).toBe('one\ntwo\nthree\n');
    const again = storage.openWriter(file, { flags: 'wx' });
    again.writeLine('never');
    await expect(again.flush()).rejects.toThrow(/EEXIST/);
    expect(() => again.writeLine('after')).toThrow(/EEXIST/);
    await expect(again.close()).rejects.toThrow(/EEXIST/);
    expect(await storage.readText(file)).toBe('one\ntwo\nthree\n');
  });
});

describe('MemorySessionStorage with SessionManager', () => {
  it('persists a session through the storage abstraction', async () => {
    const storage = new MemorySessionStorage();
    const session = SessionManager.create('/mem', { storage, agentDir: '/agent', terminalId: null });
    session.appendMessage({ role: 'user', content: 'q' });
    session.appendMessage({ role: 'assistant', content: [] });
    await session.flush();
    const text = storage.readTextSync(session.getSessionFile() as string) ?? '';
    expect(text.trim().split('\n')).toHaveLength(3);
    expect((await SessionManager.open(session.getSessionFile() as string, { storage, terminalId: null })).getEntries()).toHaveLength(2);
    expect(await SessionManager.list('/mem', { storage, agentDir: '/agent' })).toHaveLength(1);
  });

  it('inMemory sessions never write', async () => {
    const storage = new MemorySessionStorage();
    const session = SessionManager.inMemory('/mem', { storage });
    session.appendMessage({ role: 'assistant', content: [] });
    await session.flush();
    expect(session.getSessionFile()).toBeUndefined();
    expect(storage.listDirsSync('/')).toEqual([]);
  });
});
