import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSessionStorage } from './file-session-storage.js';
import { JsonlParser, parseJsonlLenient } from './jsonl.js';
import { MemorySessionStorage } from './memory-session-storage.js';
import { readSessionFile } from './session-loader.js';

const TEXT = '{"type":"a","t":"héllo ✓ 😀"}\n\n   \n{"type":"b","n":1}\nnot json\n[1]\n{"type":"c","ref":"MARK"}\n{"type":"d","torn":';

/** Feeds `text` as UTF-8 bytes cut every `size` bytes, reusing (and scribbling over) one buffer like the file reader does. */
function parseBytes(text: string, size: number, marker?: string) {
  const bytes = Buffer.from(text, 'utf8');
  const parser = new JsonlParser(marker);
  const reused = Buffer.alloc(size);
  for (let start = 0; start < bytes.length; start += size) {
    const length = bytes.copy(reused, 0, start, start + size);
    parser.pushBytes(reused.subarray(0, length));
    reused.fill(0x7b); // a caller may refill the buffer at once: the parser must have copied what it keeps
  }
  return parser.end();
}

describe('JsonlParser.pushBytes', () => {
  it('gives the same result as parsing the text, whatever the byte chunking (multi-byte characters split)', () => {
    const expected = new JsonlParser('MARK');
    expected.push(TEXT);
    const reference = expected.end();
    expect(reference.values).toHaveLength(3);
    expect(reference.tornTail).toBe(true);
    for (const size of [1, 2, 3, 5, 7, 16, 31, 64, 4096]) {
      const result = parseBytes(TEXT, size, 'MARK');
      expect(result, `chunk size ${size}`).toEqual(reference);
    }
  });

  it('keeps every complete line, reports a torn last line and lines longer than a chunk', () => {
    const long = JSON.stringify({ type: 'long', text: 'x'.repeat(10_000) });
    const result = parseBytes(`${long}\n{"type":"ok"}\n{"type":"cut`, 100);
    expect(result.values.map((value) => value.type)).toEqual(['long', 'ok']);
    expect((result.values[0] as { text: string }).text).toHaveLength(10_000);
    expect(result.lines).toEqual([1, 2]);
    expect(result.tornTail).toBe(true);
    expect(result.endsWithoutNewline).toBe(true);
    expect(result.problems).toEqual([{ line: 3, reason: 'incomplete last line (torn write), dropped' }]);
  });

  it('accepts a complete last line without a newline and trailing whitespace', () => {
    expect(parseBytes('{"type":"a"}\n{"type":"b"}', 4).values).toHaveLength(2);
    const spaced = parseBytes('{"type":"a"}\n  ', 4);
    expect(spaced.values).toHaveLength(1);
    expect(spaced.endsWithoutNewline).toBe(true);
    expect(spaced.tornTail).toBe(false);
  });

  it('accepts plain Uint8Array chunks', () => {
    const parser = new JsonlParser();
    parser.pushBytes(new TextEncoder().encode('{"type":"a"}\n'));
    expect(parser.end().values).toEqual([{ type: 'a' }]);
  });

  it('matches parseJsonlLenient on the text path', () => {
    expect(parseBytes(TEXT, 8)).toEqual(parseJsonlLenient(TEXT));
  });

  it('matches parseJsonlLenient on one large chunk (several decode windows, a line longer than one)', () => {
    const lines: string[] = [];
    for (let index = 0; index < 2000; index += 1) lines.push(index % 500 === 7 ? 'not json' : JSON.stringify({ type: 'm', index, text: `ü ${'x'.repeat(index % 400)}` }));
    lines.splice(1000, 0, JSON.stringify({ type: 'long', text: `MARK ${'y'.repeat(300_000)}` }), '', '{"type":"c","ref":"MARK"}');
    const text = `${lines.join('\n')}\n${TEXT}`;
    const parser = new JsonlParser('MARK');
    parser.pushBytes(Buffer.from(text, 'utf8'));
    const reference = new JsonlParser('MARK');
    reference.push(text);
    const expected = reference.end();
    expect(expected.marked.length).toBe(3);
    expect(parser.end()).toEqual(expected);
  });
});

describe('JsonlParser problems', () => {
  it("keeps a damaged line's id and parentId when it still shows exactly one pair of them", () => {
    const lines = [
      // Tessera writes the links after the entry's fields, pi before them.
      '{"type":"message","message":{"role":"user","content" "x"},"id":"e1","parentId":"e0","timestamp":"t"}',
      '{"type":"message","id":"e2","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"',
      // Quoted inside a string, the keys are escaped: not a link.
      '{"type":"message","message":{"role":"user","content":"{\\"id\\":\\"q\\",\\"parentId\\":null}"} broken',
      // Two pairs: ambiguous.
      '{"type":"x","id":"a","parentId":"b","data":{"id":"c","parentId":"d"}',
      '{"id":"e5","parentId":"e4"}',
      'not json',
    ];
    const { problems } = parseJsonlLenient(`${lines.join('\n')}\n`);
    expect(problems.map((problem) => problem.link)).toEqual([{ id: 'e1', parentId: 'e0' }, { id: 'e2', parentId: null }, undefined, undefined, { id: 'e5', parentId: 'e4' }, undefined]);
    expect(problems.map((problem) => problem.line)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe('readSessionFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-jsonl-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the same entries from disk (byte chunks) and from memory (text chunks)', async () => {
    const header = JSON.stringify({ type: 'session', version: 3, id: 's1', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' });
    const body: string[] = [header];
    // Several read chunks' worth of lines, with multi-byte text, then a torn tail.
    for (let index = 0; index < 3000; index += 1) {
      body.push(JSON.stringify({ type: 'message', id: `e${index}`, parentId: index ? `e${index - 1}` : null, timestamp: 't', message: { role: 'user', content: `ü ${'x'.repeat(index % 300)}` } }));
    }
    const text = `${body.join('\n')}\n{"type":"message","id":"torn`;
    const file = join(dir, 's.jsonl');
    await writeFile(file, text);
    const memory = new MemorySessionStorage();
    memory.writeTextSync(file, text);
    const fromDisk = await readSessionFile(new FileSessionStorage(), file);
    const fromMemory = await readSessionFile(memory, file);
    expect(fromDisk.status).toBe('ok');
    expect(fromDisk).toEqual(fromMemory);
    if (fromDisk.status !== 'ok') return;
    expect(fromDisk.fileEntries).toHaveLength(3001);
    expect(fromDisk.tornTail).toBe(true);
  });

  it('loads the same from one whole read as from streamed chunks', async () => {
    const lines = [JSON.stringify({ type: 'session', version: 3, id: 's2', timestamp: 't', cwd: '/w' })];
    for (let index = 0; index < 2000; index += 1) lines.push(JSON.stringify({ type: 'message', id: `e${index}`, parentId: null, timestamp: 't', message: { role: 'user', content: `ü ${'x'.repeat(index % 300)}` } }));
    const file = join(dir, 'w.jsonl');
    await writeFile(file, `${lines.join('\n')}\n\nnot json\n{"type":"message","id":"torn`);
    // The default reads synchronously in chunks of one reused buffer (the file is larger than
    // a chunk, so lines and a two-byte character straddle chunk ends); the others read whole or stream.
    const storage = new FileSessionStorage();
    const whole = { ...storage, readBytesIfSmallSync: storage.readBytesIfSmallSync.bind(storage), exists: storage.exists.bind(storage) } as unknown as FileSessionStorage;
    const streaming = { readByteChunks: storage.readByteChunks.bind(storage), exists: storage.exists.bind(storage) } as unknown as FileSessionStorage;
    const chunked = await readSessionFile(storage, file);
    expect(chunked.status).toBe('ok');
    expect(chunked).toEqual(await readSessionFile(whole, file));
    expect(chunked).toEqual(await readSessionFile(streaming, file));
  });

  it('FileSessionStorage.readChunksIfSmallSync refills one buffer to the end, and leaves larger or missing files', async () => {
    const file = join(dir, 'chunks.jsonl');
    const text = 'ü'.repeat(200_000);
    await writeFile(file, text);
    const storage = new FileSessionStorage();
    const seen: Uint8Array[] = [];
    const parts: Buffer[] = [];
    expect(storage.readChunksIfSmallSync(file, 1_000_000, (chunk) => void (seen.push(chunk), parts.push(Buffer.from(chunk))))).toBe(true);
    expect(parts.length).toBeGreaterThan(1);
    expect(new Set(seen.map((chunk) => chunk.buffer)).size).toBe(1);
    expect(Buffer.concat(parts).toString('utf8')).toBe(text);
    const none = (): void => {
      throw new Error('called');
    };
    expect(storage.readChunksIfSmallSync(file, 399_999, none)).toBe(false);
    expect(storage.readChunksIfSmallSync(join(dir, 'missing.jsonl'), 1024, none)).toBe(false);
    expect(storage.readChunksIfSmallSync(dir, 1024, none)).toBe(false);
    await writeFile(join(dir, 'empty.jsonl'), '');
    expect(storage.readChunksIfSmallSync(join(dir, 'empty.jsonl'), 1024, none)).toBe(true);
  });

  it('FileSessionStorage.readBytesIfSmallSync reads small files whole and leaves larger or missing ones', async () => {
    const file = join(dir, 'small.jsonl');
    await writeFile(file, 'héllo\n');
    const storage = new FileSessionStorage();
    expect(Buffer.from(storage.readBytesIfSmallSync(file, 7) ?? []).toString('utf8')).toBe('héllo\n');
    expect(storage.readBytesIfSmallSync(file, 6)).toBeUndefined();
    expect(storage.readBytesIfSmallSync(join(dir, 'missing.jsonl'), 1024)).toBeUndefined();
    expect(storage.readBytesIfSmallSync(dir, 1024)).toBeUndefined();
  });

  it('FileSessionStorage.readByteChunks yields nothing for a missing file', async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of new FileSessionStorage().readByteChunks(join(dir, 'missing.jsonl'))) chunks.push(chunk);
    expect(chunks).toEqual([]);
  });
});
