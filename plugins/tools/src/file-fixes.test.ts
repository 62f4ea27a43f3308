import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dominantLineBreak } from './edit-match.js';
import { editTool } from './edit-tool.js';
import { readTool } from './read-tool.js';
import { InMemorySandboxClient } from './sandbox/in-memory-sandbox-client.js';
import type { ISandboxFileStat } from './sandbox/sandbox-client.js';
import { ToolSessionState } from './session-state.js';
import { tempDir, text, toolContext } from './test-support.js';
import { SandboxWorkspaceFiles, decodeText } from './workspace-files.js';
import { writeTool } from './write-tool.js';

let dir: string;
let cleanup: () => Promise<void>;
let state: ToolSessionState;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('tessera-file-fixes-'));
  state = new ToolSessionState();
});
afterEach(async () => cleanup());

async function readFirst(name: string, content: string | Buffer): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, content);
  const read = await readTool({ state }).execute({ file_path: file }, toolContext(dir));
  expect(read.success).toBe(true);
  return file;
}

function utf16be(value: string): Buffer {
  return Buffer.from(value, 'utf16le').swap16();
}

describe('Edit and Read on files that are not plain UTF-8', () => {
  it('refuses to Edit a Latin-1 file instead of turning its bytes into U+FFFD', async () => {
    const original = Buffer.from('caf\xE9 = 1\nx = 2\n', 'latin1');
    const file = join(dir, 'legacy.py');
    await writeFile(file, original);
    const read = await readTool({ state }).execute({ file_path: file }, toolContext(dir));
    expect(read.success).toBe(true);
    expect(text(read)).toContain('not valid UTF-8');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'x = 2', new_string: 'x = 3' }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'unsupported_encoding' });
    expect(text(result)).toContain(file);
    expect(text(result)).toContain('Write');
    expect(await readFile(file)).toEqual(original);
  });

  it('keeps a UTF-8 byte order mark through an Edit', async () => {
    const file = await readFirst('bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a = 1\nb = 2\n')]));
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'b = 2', new_string: 'b = 3' }, toolContext(dir));
    expect(result.success).toBe(true);
    const bytes = await readFile(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe('a = 1\nb = 3\n');
  });

  it('reads UTF-16LE and UTF-16BE files with a BOM as text', async () => {
    const tool = readTool({ state });
    const le = join(dir, 'le.txt');
    await writeFile(le, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello\r\nwörld\r\n', 'utf16le')]));
    const leResult = await tool.execute({ file_path: le }, toolContext(dir));
    expect(leResult.success).toBe(true);
    expect(text(leResult)).toContain('UTF-16LE');
    expect(text(leResult)).toContain('     1\thello\n     2\twörld');
    expect(leResult.data).toMatchObject({ type: 'text', totalLines: 2 });

    const be = join(dir, 'be.txt');
    await writeFile(be, Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be('grüße\n')]));
    const beResult = await tool.execute({ file_path: be }, toolContext(dir));
    expect(beResult.success).toBe(true);
    expect(text(beResult)).toContain('     1\tgrüße');
  });

  it('still calls UTF-16 binary when the decoded text holds NUL characters', async () => {
    // A UTF-32LE BOM starts like UTF-16LE's and decodes to NULs.
    await writeFile(join(dir, 'wide.txt'), Buffer.from([0xff, 0xfe, 0, 0, 0x41, 0, 0, 0]));
    const result = await readTool({ state }).execute({ file_path: join(dir, 'wide.txt') }, toolContext(dir));
    expect(result.errorCode).toBe('binary_file');
  });

  it('refuses to Edit a UTF-16 file, leaving its bytes alone', async () => {
    const original = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('x = 2\n', 'utf16le')]);
    const file = await readFirst('wide.ini', original);
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'x = 2', new_string: 'x = 3' }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'unsupported_encoding' });
    expect(text(result)).toContain('UTF-16LE');
    expect(await readFile(file)).toEqual(original);
  });

  it('decodes text: strict UTF-8 keeps the BOM, odd UTF-16 tails show as U+FFFD', () => {
    expect(decodeText(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).toEqual({ text: '\uFEFFa', encoding: 'utf-8' });
    expect(decodeText(Buffer.from([0x61, 0xe9]))).toEqual({ text: 'a\uFFFD', encoding: 'unknown' });
    expect(decodeText(Buffer.from([0xfe, 0xff, 0x00, 0x61, 0x00]))).toEqual({ text: 'a\uFFFD', encoding: 'utf-16be' });
  });
});

/**
 * Without the regular-file check, Read blocks in open() on a FIFO. Opening the write end
 * (non-blocking, so it fails harmlessly while nobody reads) gives such a reader end of file,
 * so a regression fails its assertions instead of hanging the run.
 */
async function unblockingFifo<T>(fifo: string, run: () => T | Promise<T>): Promise<T> {
  const timer = setInterval(() => {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: no reader is waiting.
    }
  }, 500);
  try {
    return await run();
  } finally {
    clearInterval(timer);
  }
}

describe.skipIf(process.platform === 'win32')('FIFOs, sockets and devices', () => {
  it('Read, Edit and Write refuse a FIFO before opening it', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const read = await unblockingFifo(fifo, () => readTool({ state }).execute({ file_path: fifo }, toolContext(dir)));
    expect(read).toMatchObject({ success: false, errorCode: 'not_regular_file' });
    expect(text(read)).toContain(fifo);
    expect(text(read)).toContain('FIFO');
    const edit = await unblockingFifo(fifo, () => editTool({ state }).execute({ file_path: fifo, old_string: 'a', new_string: 'b' }, toolContext(dir)));
    expect(edit.errorCode).toBe('not_regular_file');
    const write = await unblockingFifo(fifo, () => writeTool({ state }).execute({ file_path: fifo, content: 'x' }, toolContext(dir)));
    expect(write.errorCode).toBe('not_regular_file');
    expect((await stat(fifo)).isFIFO()).toBe(true);
  });

  it('Read refuses a Unix socket', async () => {
    const socket = join(dir, 'sock');
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      const result = await readTool({ state }).execute({ file_path: socket }, toolContext(dir));
      expect(result.errorCode).toBe('not_regular_file');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('sandbox stats without an isFile flag count as regular files; an explicit false is honoured', async () => {
    const client = new InMemorySandboxClient({ files: { '/workspace/a.txt': 'a' } });
    const files = new SandboxWorkspaceFiles(client, '/workspace');
    expect(await files.stat('/workspace/a.txt')).toMatchObject({ isFile: true, isDirectory: false });
    expect(await files.stat('/workspace')).toMatchObject({ isFile: false, isDirectory: true });
    class PipeClient extends InMemorySandboxClient {
      override async stat(path: string): Promise<ISandboxFileStat | undefined> {
        const pipe = { size: 0, isDirectory: false, isFile: false };
        return path === '/workspace/pipe' ? pipe : super.stat(path);
      }
    }
    const options = { state, sandbox: { client: new PipeClient() } };
    expect((await readTool(options).execute({ file_path: '/workspace/pipe' }, toolContext(dir))).errorCode).toBe('not_regular_file');
  });
});

describe('Edit keeps one line ending', () => {
  it('gives new lines CRLF in a CRLF file even when old_string has no line break', async () => {
    const file = await readFirst('win.txt', 'a\r\nb\r\nc\r\n');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'c', new_string: 'c\nd\ne' }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('a\r\nb\r\nc\r\nd\r\ne\r\n');
  });

  it('converts every replacement with replace_all', async () => {
    const file = await readFirst('all.txt', 'x\r\ny\r\nx\r\n');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'x', new_string: 'x1\nx2', replace_all: true }, toolContext(dir));
    expect(result.data).toMatchObject({ replacements: 2 });
    expect(await readFile(file, 'utf8')).toBe('x1\r\nx2\r\ny\r\nx1\r\nx2\r\n');
  });

  it('accepts a CRLF old_string in a CRLF file and leaves LF files exactly as written', async () => {
    const crlf = await readFirst('crlf.txt', 'a\r\nb\r\n');
    await editTool({ state }).execute({ file_path: crlf, old_string: 'a\r\nb', new_string: 'A\nB' }, toolContext(dir));
    expect(await readFile(crlf, 'utf8')).toBe('A\r\nB\r\n');
    const lf = await readFirst('lf.txt', 'a\nb\n');
    await editTool({ state }).execute({ file_path: lf, old_string: 'b', new_string: 'b\nc' }, toolContext(dir));
    expect(await readFile(lf, 'utf8')).toBe('a\nb\nc\n');
  });

  it('picks the ending most of the file uses', () => {
    expect(dominantLineBreak('a\r\nb\nc\r\n')).toBe('\r\n');
    expect(dominantLineBreak('a\nb\r\nc\n')).toBe('\n');
    expect(dominantLineBreak('no breaks')).toBe('\n');
  });
});

describe('read-only files', () => {
  // The mode test (no write bit at all) refuses even for root, whom access(W_OK) always lets through.
  it('Write refuses a 0444 file instead of renaming over it', async () => {
    const file = await readFirst('locked.txt', 'keep\n');
    await chmod(file, 0o444);
    const result = await writeTool({ state }).execute({ file_path: file, content: 'replaced\n' }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'permission_denied' });
    expect(text(result)).toContain(file);
    expect(await readFile(file, 'utf8')).toBe('keep\n');
    expect((await stat(file)).mode & 0o777).toBe(0o444);
  });

  it('Edit refuses a 0444 file', async () => {
    const file = await readFirst('locked.ts', 'const x = 1;\n');
    await chmod(file, 0o444);
    const result = await editTool({ state }).execute({ file_path: file, old_string: '1', new_string: '2' }, toolContext(dir));
    expect(result.errorCode).toBe('permission_denied');
    expect(await readFile(file, 'utf8')).toBe('const x = 1;\n');
  });

  it('still writes files that have a write bit', async () => {
    const file = await readFirst('open.txt', 'v1');
    await chmod(file, 0o644);
    expect((await writeTool({ state }).execute({ file_path: file, content: 'v2' }, toolContext(dir))).success).toBe(true);
  });
});
