import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ReadAccess, ShellDirectories, type ToolMessage } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from './edit-tool.js';
import { globTool, type GlobToolData } from './glob-tool.js';
import { grepTool, type GrepToolData } from './grep-tool.js';
import { lockedPathCount, withPathLock } from './path-lock.js';
import { builtinTools, webFetchToolPlugin } from './plugins.js';
import { readTool, type ReadToolData } from './read-tool.js';
import { ToolSessionState } from './session-state.js';
import { tempDir, text, toolContext } from './test-support.js';
import { writeTool } from './write-tool.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(async () => cleanup());

async function put(path: string, content: string): Promise<string> {
  const full = join(dir, path);
  await mkdir(dirname(full), { recursive: true });
  await writeFile(full, content);
  return full;
}

function toolResults(history: readonly unknown[]): Array<{ toolName: string; content: unknown; isError: boolean }> {
  return (history as ToolMessage[])
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content.map((block) => ({ toolName: block.toolName, content: block.content, isError: block.isError })));
}

/** A ReadAccess that denies everything under `secret/` of the cwd, and records each call. */
function fakeReadAccess(): ReadAccess & { calls: Array<{ cwd: string; sessionId: string }> } {
  const calls: Array<{ cwd: string; sessionId: string }> = [];
  return {
    calls,
    deniedPaths(context) {
      calls.push(context);
      const secret = join(context.cwd, 'secret') + '/';
      return (path) => path.startsWith(secret);
    },
  };
}

describe('ShellDirectories from builtinTools', () => {
  it('reports where each session’s Bash now runs, without creating state for other sessions', async () => {
    const state = new ToolSessionState();
    const kernel = await createKernel({
      plugins: [
        ...testPreset({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'mkdir -p sub && cd sub' } }] }, { text: 'Done.' }] }),
        ...builtinTools({ state }),
      ],
    });
    const shell = kernel.getOptional(ShellDirectories);
    expect(shell).toBeDefined();
    const session = kernel.createSession({ cwd: dir });
    expect(shell!.cwdFor(session.sessionId)).toBeUndefined();
    await session.run('go to sub');
    expect(shell!.cwdFor(session.sessionId)).toBe(join(dir, 'sub'));
    expect(shell!.cwdFor('no-such-session')).toBeUndefined();
    expect(state.has('no-such-session')).toBe(false);
    await kernel.shutdown();
  });

  it('is not bound when Bash is left out (nothing moves a shell then)', async () => {
    const kernel = await createKernel({ plugins: [...testPreset({ turns: [] }), ...builtinTools({ exclude: ['Bash'] })] });
    expect(kernel.getOptional(ShellDirectories)).toBeUndefined();
    await kernel.shutdown();
  });
});

describe('Glob and Grep honour Read deny rules', () => {
  beforeEach(async () => {
    await put('a.ts', 'export const token = 1;\n');
    await put('secret/key.ts', 'export const token = 2;\n');
    await put('secret/deeper/more.ts', 'export const token = 3;\n');
    await put('b.ts', 'export const token = 4;\n');
  });

  it('Glob leaves denied files out of results and counts, on both walks, asking once per call', async () => {
    const access = fakeReadAccess();
    const glob = globTool({ readAccess: access, statWorker: false });
    const patterns: Array<[string, number]> = [['**/*.ts', 2], ['{a,b,secret/key,secret/deeper/more}.ts', 2], ['*/**/*.ts', 0], ['secret/key.ts', 0]];
    for (const [pattern, expected] of patterns) {
      const result = await glob.execute({ pattern }, toolContext(dir, { sessionId: 's-glob' }));
      const data = result.data as GlobToolData;
      expect(data.filenames.every((path) => !path.includes('/secret/')), pattern).toBe(true);
      expect(data.numFiles, pattern).toBe(expected);
    }
    expect(access.calls).toEqual(patterns.map(() => ({ cwd: dir, sessionId: 's-glob' })));
  });

  it('Grep never searches denied files: not in names, lines or counts', async () => {
    const access = fakeReadAccess();
    const grep = grepTool({ readAccess: access });
    const files = await grep.execute({ pattern: 'token' }, toolContext(dir));
    expect((files.data as GrepToolData).filenames.sort()).toEqual([join(dir, 'a.ts'), join(dir, 'b.ts')]);
    const content = await grep.execute({ pattern: 'token', output_mode: 'content' }, toolContext(dir));
    expect(text(content)).not.toContain('secret');
    const count = await grep.execute({ pattern: 'token', output_mode: 'count' }, toolContext(dir));
    expect(count.data).toMatchObject({ numFiles: 2, numMatches: 2 });
    expect(text(count)).toContain('Found 2 total occurrences across 2 files.');
    const named = await grep.execute({ pattern: 'token', path: join(dir, 'secret/key.ts') }, toolContext(dir));
    expect(named.data).toMatchObject({ numFiles: 0, filenames: [] });
    expect(access.calls).toHaveLength(4);
  });

  it('searches everything when ReadAccess denies nothing (undefined) or is a lookup that finds none', async () => {
    const none: ReadAccess = { deniedPaths: () => undefined };
    const grep = await grepTool({ readAccess: none }).execute({ pattern: 'token' }, toolContext(dir));
    expect((grep.data as GrepToolData).numFiles).toBe(4);
    const glob = await globTool({ readAccess: () => undefined, statWorker: false }).execute({ pattern: '**/*.ts' }, toolContext(dir));
    expect((glob.data as GlobToolData).numFiles).toBe(4);
  });

  it('uses the ReadAccess service another plugin binds, in a composed kernel', async () => {
    const access = fakeReadAccess();
    const permissions = definePlugin({
      name: 'fake-read-access',
      provides: [ReadAccess],
      register({ bind }) {
        bind(ReadAccess).toConstantValue(access);
      },
    });
    const kernel = await createKernel({
      plugins: [
        ...testPreset({
          turns: [
            { toolCalls: [{ name: 'Glob', input: { pattern: '**/*.ts' } }, { name: 'Grep', input: { pattern: 'token', output_mode: 'count' } }] },
            { text: 'Done.' },
          ],
        }),
        ...builtinTools({ exclude: ['Bash', 'WebFetch', 'WebSearch'] }),
        permissions,
      ],
    });
    const session = kernel.createSession({ cwd: dir });
    await session.run('find tokens');
    const [glob, grep] = toolResults(session.getHistory());
    expect(glob).toMatchObject({ toolName: 'Glob', isError: false });
    expect(String(glob?.content)).not.toContain('secret');
    expect(String(glob?.content).split('\n').sort()).toEqual([join(dir, 'a.ts'), join(dir, 'b.ts')]);
    expect(String(grep?.content)).toContain('across 2 files');
    expect(access.calls).toEqual([
      { cwd: dir, sessionId: session.sessionId },
      { cwd: dir, sessionId: session.sessionId },
    ]);
    await kernel.shutdown();
  });
});

describe('concurrent Write and Edit of one file', () => {
  it('serialises the edits: the second sees the first (and is refused as stale), nothing is lost', async () => {
    const state = new ToolSessionState();
    const read = readTool({ state });
    const edit = editTool({ state });
    // Several files at once, so an interleaving that loses an update is all but certain without the lock.
    const paths = await Promise.all([0, 1, 2, 3, 4, 5].map((index) => put(`f${index}.txt`, 'alpha\nbeta\n')));
    for (const path of paths) {
      for (const session of ['A', 'B']) expect((await read.execute({ file_path: path }, toolContext(dir, { sessionId: session }))).success).toBe(true);
    }
    const results = await Promise.all(
      paths.flatMap((path) => [
        edit.execute({ file_path: path, old_string: 'alpha', new_string: 'ALPHA' }, toolContext(dir, { sessionId: 'A' })),
        edit.execute({ file_path: path, old_string: 'beta', new_string: 'BETA' }, toolContext(dir, { sessionId: 'B' })),
      ]),
    );
    for (const [index, path] of paths.entries()) {
      const [a, b] = [results[index * 2]!, results[index * 2 + 1]!];
      const content = await readFile(path, 'utf8');
      // The second edit sees the first's change: on a file system with fine-grained times its
      // read is stale and it is refused; where a same-size write keeps the mtime, it edits the
      // current content. Either way no edit that reported success is missing from the file.
      expect(a.success || b.success).toBe(true);
      for (const result of [a, b]) if (!result.success) expect(result.errorCode).toBe('stale_read');
      if (a.success) expect(content).toContain('ALPHA');
      if (b.success) expect(content).toContain('BETA');
    }
    expect(lockedPathCount()).toBe(0);
  });

  it('lets a Write and an Edit of the same file run one after the other', async () => {
    const state = new ToolSessionState();
    const path = await put('w.txt', 'one\n');
    await readTool({ state }).execute({ file_path: path }, toolContext(dir, { sessionId: 'A' }));
    await readTool({ state }).execute({ file_path: path }, toolContext(dir, { sessionId: 'B' }));
    // Sizes differ, so the loser's read is stale whatever the file system's time resolution.
    const [written, edited] = await Promise.all([
      writeTool({ state }).execute({ file_path: path, content: 'two two\n' }, toolContext(dir, { sessionId: 'A' })),
      editTool({ state }).execute({ file_path: path, old_string: 'one', new_string: 'eins' }, toolContext(dir, { sessionId: 'B' })),
    ]);
    const content = await readFile(path, 'utf8');
    if (written.success) {
      expect(edited.errorCode).toBe('stale_read');
      expect(content).toBe('two two\n');
    } else {
      expect(written.errorCode).toBe('stale_read');
      expect(content).toBe('eins\n');
    }
  });
});

describe('withPathLock', () => {
  it('runs holders of one path in order, other paths alongside, and releases on failure', async () => {
    const events: string[] = [];
    const step = (name: string, ms: number) => async () => {
      events.push(`${name}:start`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      events.push(`${name}:end`);
      return name;
    };
    const failing = withPathLock('/p', async () => {
      events.push('fail:start');
      throw new Error('boom');
    });
    const results = await Promise.allSettled([failing, withPathLock('/p', step('first', 20)), withPathLock('/p', step('second', 1)), withPathLock('/q', step('other', 1))]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    const p = events.filter((event) => !event.startsWith('other'));
    expect(p).toEqual(['fail:start', 'first:start', 'first:end', 'second:start', 'second:end']);
    expect(events.indexOf('other:end')).toBeLessThan(events.indexOf('first:end'));
    expect(lockedPathCount()).toBe(0);
  });
});

describe('Read output budget', () => {
  it('stops at the last whole line within maxOutputChars and says how to read on', async () => {
    const line = 'x'.repeat(1_500);
    const path = await put('wide.txt', `${Array.from({ length: 3_000 }, () => line).join('\n')}\n`);
    const read = readTool({ state: new ToolSessionState() });
    expect(read.maxResultChars).toBe(100_000);
    const result = await read.execute({ file_path: path }, toolContext(dir));
    const output = text(result);
    expect(output.length).toBeLessThanOrEqual(100_000);
    const data = result.data as ReadToolData;
    const last = data.numLines!;
    expect(last).toBeGreaterThan(60);
    expect(output.endsWith(`\n\n[Showing lines 1-${last} of 3000 (output limit). Use offset=${last + 1} to read more.]`)).toBe(true);
    // Whole lines only: the last numbered line is complete.
    const body = output.slice(0, output.lastIndexOf('\n\n['));
    expect(body.split('\n').at(-1)).toBe(`${String(last).padStart(6)}\t${line}`);
    const next = await read.execute({ file_path: path, offset: last + 1 }, toolContext(dir));
    expect(text(next).startsWith(`${String(last + 1).padStart(6)}\t`)).toBe(true);
  });

  it('takes a maxOutputChars option, and keeps the plain note when the line limit stops first', async () => {
    const path = await put('lines.txt', `${Array.from({ length: 100 }, (_, index) => `line ${index + 1} ${'y'.repeat(40)}`).join('\n')}\n`);
    const small = readTool({ state: new ToolSessionState(), maxOutputChars: 1_000 });
    expect(small.maxResultChars).toBe(1_000);
    const cut = text(await small.execute({ file_path: path }, toolContext(dir)));
    expect(cut.length).toBeLessThanOrEqual(1_000);
    expect(cut).toMatch(/\[Showing lines 1-\d+ of 100 \(output limit\)\. Use offset=\d+ to read more\.\]$/);
    const limited = text(await readTool({ state: new ToolSessionState() }).execute({ file_path: path, limit: 10 }, toolContext(dir)));
    expect(limited.endsWith('[Showing lines 1-10 of 100. Use offset=11 to read more.]')).toBe(true);
  });

  it('caps a notebook’s rendered text and keeps the images shown before the cut', async () => {
    const png = Buffer.from('iVBORw0KGgo=', 'base64').toString('base64');
    const cells = [
      { cell_type: 'code', source: 'plot()', outputs: [{ output_type: 'display_data', data: { 'image/png': png } }] },
      ...Array.from({ length: 40 }, (_, index) => ({
        cell_type: 'code',
        source: `print(${index})`,
        outputs: [{ output_type: 'stream', name: 'stdout', text: `${'z'.repeat(100)}\n`.repeat(50) }],
      })),
    ];
    const path = await put('big.ipynb', JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 }));
    const read = readTool({ state: new ToolSessionState(), maxOutputChars: 20_000 });
    const result = await read.execute({ file_path: path }, toolContext(dir));
    const blocks = result.output as Array<{ type: string; text?: string }>;
    const textLength = blocks.reduce((sum, block) => sum + (block.text?.length ?? 0), 0);
    expect(textLength).toBeLessThanOrEqual(20_000);
    expect(blocks.filter((block) => block.type === 'image')).toHaveLength(1);
    expect(blocks.at(-1)?.text).toMatch(/^\[Showing cells 1-\d+ of 41 \(output limit; the last one may be cut\)\. Use offset\/limit to read the raw JSON lines/);
    const roomy = await readTool({ state: new ToolSessionState(), maxOutputChars: 1_000_000 }).execute({ file_path: path }, toolContext(dir));
    expect(text(roomy)).not.toContain('output limit');
    expect(text(roomy)).toContain('print(39)');
  });
});

describe('WebFetch in a composed kernel', () => {
  it('accepts the deprecated useProvider option and does not borrow the kernel provider', async () => {
    const pages = new Map([['https://example.test/', '<p>The answer is 42.</p>']]);
    const fakeFetch = (async (url: string | URL | Request) =>
      new Response(pages.get(String(url)) ?? '', { status: 200, headers: { 'content-type': 'text/html' } })) as typeof fetch;
    const kernel = await createKernel({
      plugins: [
        ...testPreset({
          turns: [
            { toolCalls: [{ name: 'WebFetch', input: { url: 'https://example.test/', prompt: 'What is the answer?' } }] },
            ({ messages }) => ({ text: JSON.stringify(messages).includes('The answer is 42.') ? 'Forty-two.' : 'page missing' }),
          ],
        }),
        webFetchToolPlugin({ useProvider: true, fetch: fakeFetch, resolveHost: async () => ['93.184.216.34'] }),
      ],
    });
    const session = kernel.createSession({ cwd: dir });
    expect(await session.run('look it up')).toBe('Forty-two.');
    const [result] = toolResults(session.getHistory());
    expect(result).toMatchObject({ toolName: 'WebFetch', isError: false });
    expect(String(result?.content)).toContain('The answer is 42.');
    await kernel.shutdown();
  });
});
