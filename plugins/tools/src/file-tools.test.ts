import { chmod, mkdir, readdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from './edit-tool.js';
import { readTool } from './read-tool.js';
import { ToolSessionState } from './session-state.js';
import { tempDir, text, toolContext } from './test-support.js';
import { writeTool } from './write-tool.js';

let dir: string;
let cleanup: () => Promise<void>;
let state: ToolSessionState;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  state = new ToolSessionState();
});
afterEach(async () => cleanup());

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('Read', () => {
  it('numbers lines like cat -n and records the read', async () => {
    await writeFile(join(dir, 'a.txt'), 'alpha\nbeta\ngamma\n');
    const result = await readTool({ state }).execute({ file_path: join(dir, 'a.txt') }, toolContext(dir));
    expect(text(result)).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
    expect(result.data).toMatchObject({ type: 'text', startLine: 1, numLines: 3, totalLines: 3 });
    expect(state.lastRead('session-1', join(dir, 'a.txt'))).toBeDefined();
  });

  it('honours offset and limit and says how to read on', async () => {
    await writeFile(join(dir, 'long.txt'), Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n'));
    const result = await readTool({ state }).execute({ file_path: join(dir, 'long.txt'), offset: 3, limit: 2 }, toolContext(dir));
    expect(text(result)).toBe('     3\tl3\n     4\tl4\n\n[Showing lines 3-4 of 10. Use offset=5 to read more.]');
  });

  it('reads 2,000 lines by default and cuts long lines', async () => {
    await writeFile(join(dir, 'big.txt'), Array.from({ length: 2500 }, () => 'x'.repeat(10)).join('\n'));
    await writeFile(join(dir, 'wide.txt'), 'y'.repeat(3000));
    const tool = readTool({ state });
    expect(text(await tool.execute({ file_path: join(dir, 'big.txt') }, toolContext(dir)))).toContain('Showing lines 1-2000 of 2500');
    const wide = text(await tool.execute({ file_path: join(dir, 'wide.txt') }, toolContext(dir)));
    expect(wide).toContain('[line truncated]');
    expect(wide.length).toBeLessThan(2100);
  });

  it('says when a file is empty', async () => {
    await writeFile(join(dir, 'empty.txt'), '');
    const result = await readTool({ state }).execute({ file_path: join(dir, 'empty.txt') }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(text(result)).toContain('contents are empty');
  });

  it('refuses binary files, directories and missing files with clear codes', async () => {
    await writeFile(join(dir, 'blob.dat'), Buffer.from([1, 2, 0, 3]));
    await writeFile(join(dir, 'nul.txt'), Buffer.from([65, 0, 66]));
    const tool = readTool({ state });
    expect((await tool.execute({ file_path: join(dir, 'blob.dat') }, toolContext(dir))).errorCode).toBe('binary_file');
    expect((await tool.execute({ file_path: join(dir, 'nul.txt') }, toolContext(dir))).errorCode).toBe('binary_file');
    expect((await tool.execute({ file_path: dir }, toolContext(dir))).errorCode).toBe('is_directory');
    const missing = await tool.execute({ file_path: join(dir, 'nope.txt') }, toolContext(dir));
    expect(missing.errorCode).toBe('not_found');
  });

  it('returns images as image blocks', async () => {
    await writeFile(join(dir, 'dot.png'), PNG);
    const result = await readTool({ state }).execute({ file_path: join(dir, 'dot.png') }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(result.output).toEqual([
      { type: 'text', text: expect.stringContaining('image/png') },
      { type: 'image', mediaType: 'image/png', data: PNG.toString('base64') },
    ]);
  });

  it('reads a Jupyter notebook cell by cell, outputs and images included, and records the read', async () => {
    const notebook = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { language_info: { name: 'python' } },
      cells: [
        { cell_type: 'markdown', id: 'intro', metadata: {}, source: ['# Title\n', 'Some *text*.'] },
        {
          cell_type: 'code', id: 'calc', execution_count: 2, metadata: {}, source: 'print(1 + 1)\n1 / 0',
          outputs: [
            { output_type: 'stream', name: 'stdout', text: ['2\n'] },
            { output_type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero', traceback: ['\u001b[0;31mZeroDivisionError\u001b[0m: division by zero'] },
          ],
        },
        {
          cell_type: 'code', id: 'plot', execution_count: 3, metadata: {}, source: 'plot()',
          outputs: [{ output_type: 'display_data', metadata: {}, data: { 'text/plain': '<Figure>', 'image/png': PNG.toString('base64') } }],
        },
      ],
    };
    const file = join(dir, 'analysis.ipynb');
    await writeFile(file, JSON.stringify(notebook, null, 1));
    const tool = readTool({ state });
    const result = await tool.execute({ file_path: file }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(result.data).toMatchObject({ type: 'notebook', numCells: 3 });
    const blocks = result.output as Array<{ type: string; text?: string; data?: string }>;
    const all = blocks.filter((block) => block.type === 'text').map((block) => block.text).join('\n');
    expect(all).toContain('3 cells, python');
    expect(all).toContain('<cell index="1" type="markdown" id="intro">\n# Title\nSome *text*.\n</cell>');
    expect(all).toContain('<cell index="2" type="code" id="calc" execution_count="2" language="python">\nprint(1 + 1)\n1 / 0');
    expect(all).toContain('<output type="stream" name="stdout">\n2\n');
    expect(all).toContain('ZeroDivisionError: division by zero');
    expect(all).not.toContain('\u001b[');
    expect(blocks.at(-1)).toEqual({ type: 'image', mediaType: 'image/png', data: PNG.toString('base64') });
    expect(state.lastRead('session-1', file)).toBeDefined();
    // offset / limit give the raw JSON lines, as for any text file.
    const raw = await tool.execute({ file_path: file, offset: 1, limit: 2 }, toolContext(dir));
    expect(text(raw)).toMatch(/^ {5}1\t\{\n {5}2\t "nbformat": 4,/);
  });

  it('shows an .ipynb that is not notebook JSON as text, with a notice', async () => {
    await writeFile(join(dir, 'broken.ipynb'), '{"cells": [\n');
    const result = await readTool({ state }).execute({ file_path: join(dir, 'broken.ipynb') }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(text(result)).toContain('not valid notebook JSON');
    expect(text(result)).toContain('     1\t{"cells": [');
  });

  it('explains how to get at the text of a PDF', async () => {
    await writeFile(join(dir, 'paper.pdf'), '%PDF-1.7\n');
    const result = await readTool({ state }).execute({ file_path: join(dir, 'paper.pdf') }, toolContext(dir));
    expect(result).toMatchObject({ success: false, errorCode: 'binary_file' });
    expect(text(result)).toContain('pdftotext');
  });

  it('requires an absolute path', async () => {
    const result = await readTool({ state }).execute({ file_path: 'a.txt' }, toolContext(dir));
    expect(result.errorCode).toBe('invalid_path');
    expect(text(result)).toContain(join(dir, 'a.txt'));
  });
});

describe('Write', () => {
  it('creates a file and its parent directories', async () => {
    const target = join(dir, 'deep', 'er', 'new.txt');
    const result = await writeTool({ state }).execute({ file_path: target, content: 'hello\n' }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(result.data).toMatchObject({ type: 'create', startLine: 1 });
    expect(await readFile(target, 'utf8')).toBe('hello\n');
  });

  it('refuses to overwrite a file that was not read in this session', async () => {
    await writeFile(join(dir, 'a.txt'), 'old');
    const result = await writeTool({ state }).execute({ file_path: join(dir, 'a.txt'), content: 'new' }, toolContext(dir));
    expect(result.errorCode).toBe('not_read');
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('old');
  });

  it('overwrites after a Read, atomically, keeping the file mode', async () => {
    const file = join(dir, 'run.sh');
    await writeFile(file, 'echo 1\n');
    await chmod(file, 0o750);
    await readTool({ state }).execute({ file_path: file }, toolContext(dir));
    const result = await writeTool({ state }).execute({ file_path: file, content: 'echo 2\n' }, toolContext(dir));
    expect(result.data).toMatchObject({ type: 'update', startLine: 1, structuredPatch: [{ lines: ['-echo 1', '+echo 2'] }] });
    expect(await readFile(file, 'utf8')).toBe('echo 2\n');
    expect((await stat(file)).mode & 0o777).toBe(0o750);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses when the file changed on disk after the Read', async () => {
    const file = join(dir, 'a.txt');
    await writeFile(file, 'one');
    await readTool({ state }).execute({ file_path: file }, toolContext(dir));
    await writeFile(file, 'two, by someone else');
    const result = await writeTool({ state }).execute({ file_path: file, content: 'three' }, toolContext(dir));
    expect(result.errorCode).toBe('stale_read');
    expect(await readFile(file, 'utf8')).toBe('two, by someone else');
  });

  it('accepts a file whose mtime changed but whose content did not', async () => {
    const file = join(dir, 'a.txt');
    await writeFile(file, 'same');
    await readTool({ state }).execute({ file_path: file }, toolContext(dir));
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    expect((await writeTool({ state }).execute({ file_path: file, content: 'next' }, toolContext(dir))).success).toBe(true);
  });

  it('keeps reads per session', async () => {
    const file = join(dir, 'a.txt');
    await writeFile(file, 'x');
    await readTool({ state }).execute({ file_path: file }, toolContext(dir, { sessionId: 'reader' }));
    const result = await writeTool({ state }).execute({ file_path: file, content: 'y' }, toolContext(dir, { sessionId: 'writer' }));
    expect(result.errorCode).toBe('not_read');
  });
});

describe('Edit', () => {
  async function readFirst(name: string, content: string): Promise<string> {
    const file = join(dir, name);
    await writeFile(file, content);
    await readTool({ state }).execute({ file_path: file }, toolContext(dir));
    return file;
  }

  it('replaces a unique string and reports startLine and a diff', async () => {
    const file = await readFirst('code.ts', 'a\nb\nconst x = 1;\nc\n');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'const x = 1;', new_string: 'const x = 2;' }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('a\nb\nconst x = 2;\nc\n');
    expect(result.data).toMatchObject({
      startLine: 3,
      replacements: 1,
      structuredPatch: [{ oldStart: 1, newStart: 1, lines: [' a', ' b', '-const x = 1;', '+const x = 2;', ' c'] }],
    });
  });

  it('refuses a non-unique old_string unless replace_all', async () => {
    const file = await readFirst('dup.txt', 'foo\nbar\nfoo\n');
    const tool = editTool({ state });
    const refused = await tool.execute({ file_path: file, old_string: 'foo', new_string: 'baz' }, toolContext(dir));
    expect(refused.errorCode).toBe('ambiguous_match');
    expect(text(refused)).toContain('Found 2 matches');
    expect(text(refused)).toContain('lines 1, 3');
    const all = await tool.execute({ file_path: file, old_string: 'foo', new_string: '$&baz', replace_all: true }, toolContext(dir));
    expect(all.data).toMatchObject({ replacements: 2, startLine: 1 });
    expect(await readFile(file, 'utf8')).toBe('$&baz\nbar\n$&baz\n');
  });

  it('refuses old_string == new_string', async () => {
    const file = await readFirst('same.txt', 'x');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'x', new_string: 'x' }, toolContext(dir));
    expect(result.errorCode).toBe('no_change');
  });

  it('names the closest line when old_string is not found', async () => {
    const file = await readFirst('near.ts', 'function one() {}\nfunction computeTotal(items) {\n  return 0;\n}\n');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'function computeTotals(items) {', new_string: 'x' }, toolContext(dir));
    expect(result.errorCode).toBe('no_match');
    expect(text(result)).toContain('closest match is line 2');
  });

  it('points out a whitespace-only mismatch', async () => {
    const file = await readFirst('indent.py', 'def f():\n    return 1\n');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'def f():\n  return 1', new_string: 'x' }, toolContext(dir));
    expect(text(result)).toContain('matches at line 1 if whitespace is ignored');
  });

  it('requires a prior Read and an unchanged file', async () => {
    const file = join(dir, 'unread.txt');
    await writeFile(file, 'abc');
    const tool = editTool({ state });
    expect((await tool.execute({ file_path: file, old_string: 'a', new_string: 'z' }, toolContext(dir))).errorCode).toBe('not_read');
    await readTool({ state }).execute({ file_path: file }, toolContext(dir));
    await writeFile(file, 'abcd');
    expect((await tool.execute({ file_path: file, old_string: 'a', new_string: 'z' }, toolContext(dir))).errorCode).toBe('stale_read');
  });

  it('allows consecutive edits without re-reading (its own writes count as read)', async () => {
    const file = await readFirst('seq.txt', 'one two');
    const tool = editTool({ state });
    expect((await tool.execute({ file_path: file, old_string: 'one', new_string: '1' }, toolContext(dir))).success).toBe(true);
    expect((await tool.execute({ file_path: file, old_string: 'two', new_string: '2' }, toolContext(dir))).success).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('1 2');
  });

  it('creates a missing file from an empty old_string, and refuses that on a non-empty file', async () => {
    const tool = editTool({ state });
    const created = await tool.execute({ file_path: join(dir, 'n', 'new.txt'), old_string: '', new_string: 'hi' }, toolContext(dir));
    expect(created.success).toBe(true);
    expect(await readFile(join(dir, 'n', 'new.txt'), 'utf8')).toBe('hi');
    const file = await readFirst('full.txt', 'content');
    expect((await tool.execute({ file_path: file, old_string: '', new_string: 'x' }, toolContext(dir))).success).toBe(false);
    expect((await tool.execute({ file_path: join(dir, 'missing.txt'), old_string: 'a', new_string: 'b' }, toolContext(dir))).errorCode).toBe('not_found');
  });

  it('matches "\\n" strings in a CRLF file and keeps its line endings', async () => {
    const file = await readFirst('win.txt', 'a\r\nb\r\nc\r\n');
    const result = await editTool({ state }).execute({ file_path: file, old_string: 'a\nb', new_string: 'A\nB' }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('A\r\nB\r\nc\r\n');
  });

  it('edits through a symlink that stays inside the workspace', async () => {
    await mkdir(join(dir, 'real'));
    await writeFile(join(dir, 'real', 't.txt'), 'v1');
    await symlink(join(dir, 'real'), join(dir, 'alias'));
    await readTool({ state }).execute({ file_path: join(dir, 'alias', 't.txt') }, toolContext(dir));
    const result = await editTool({ state }).execute({ file_path: join(dir, 'alias', 't.txt'), old_string: 'v1', new_string: 'v2' }, toolContext(dir));
    expect(result.success).toBe(true);
    expect(await readFile(join(dir, 'real', 't.txt'), 'utf8')).toBe('v2');
  });
});
