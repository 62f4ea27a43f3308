import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { globToRegExp, compilePathFilter } from './glob-pattern.js';
import { globTool } from './glob-tool.js';
import { grepTool } from './grep-tool.js';
import { tempDir, text, toolContext } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;

async function put(path: string, content: string | Buffer, ageSeconds = 0): Promise<string> {
  const full = join(dir, path);
  await mkdir(dirname(full), { recursive: true });
  await writeFile(full, content);
  if (ageSeconds) {
    const when = new Date(Date.now() - ageSeconds * 1000);
    await utimes(full, when, when);
  }
  return full;
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  await put('.gitignore', 'build/\n*.log\n');
  await put('src/a.ts', 'export const alpha = 1;\nconst Beta = 2;\n// TODO: alpha again\n', 300);
  await put('src/b.tsx', 'const alpha = <div/>;\n', 200);
  await put('src/deep/c.ts', 'nothing here\n', 100);
  await put('src/deep/.gitignore', 'secret.ts\n');
  await put('src/deep/secret.ts', 'alpha hidden by nested gitignore\n');
  await put('lib/d.js', 'function alpha() {}\n');
  await put('build/out.ts', 'alpha in build\n');
  await put('debug.log', 'alpha in log\n');
  await put('node_modules/pkg/index.ts', 'alpha in deps\n');
  await put('image.bin', Buffer.from([0x61, 0x6c, 0x70, 0x68, 0x61, 0, 1, 2]));
});
afterEach(async () => cleanup());

describe('Glob', () => {
  it('matches recursively, newest first, skipping ignored and heavy folders', async () => {
    const result = await globTool().execute({ pattern: '**/*.ts' }, toolContext(dir));
    expect(result.data?.filenames).toEqual([join(dir, 'src/deep/c.ts'), join(dir, 'src/a.ts')]);
    expect(text(result)).toBe(`${join(dir, 'src/deep/c.ts')}\n${join(dir, 'src/a.ts')}`);
  });

  it('supports braces and a search path (relative to the cwd)', async () => {
    const result = await globTool().execute({ pattern: '*.{ts,tsx}', path: 'src' }, toolContext(dir));
    expect(result.data?.filenames).toEqual([join(dir, 'src/b.tsx'), join(dir, 'src/a.ts')]);
  });

  it('can be told to include ignored files', async () => {
    const result = await globTool({ respectGitignore: false, excludeDirectories: [] }).execute({ pattern: '**/*.ts' }, toolContext(dir));
    expect(result.data?.filenames).toEqual(expect.arrayContaining([join(dir, 'build/out.ts'), join(dir, 'node_modules/pkg/index.ts'), join(dir, 'src/deep/secret.ts')]));
  });

  it('bounds the result count with a notice', async () => {
    const result = await globTool({ maxResults: 1 }).execute({ pattern: '**/*' }, toolContext(dir));
    expect(result.data).toMatchObject({ truncated: true, filenames: [expect.any(String)] });
    expect(text(result)).toContain('Results are truncated');
  });

  it('says when nothing matched, and refuses patterns that climb out', async () => {
    expect(text(await globTool().execute({ pattern: '**/*.rs' }, toolContext(dir)))).toBe('No files found');
    expect((await globTool().execute({ pattern: '../**/*' }, toolContext(dir))).errorCode).toBe('invalid_pattern');
    expect((await globTool().execute({ pattern: '/etc/*' }, toolContext(dir))).errorCode).toBe('invalid_pattern');
    const absolute = await globTool().execute({ pattern: join(dir, 'src', '*.ts') }, toolContext(dir));
    expect(absolute.data?.filenames).toEqual([join(dir, 'src/a.ts')]);
  });
});

describe('Grep', () => {
  it('lists files with matches by default, newest first, skipping ignored, heavy and binary files', async () => {
    const result = await grepTool().execute({ pattern: 'alpha' }, toolContext(dir));
    expect(result.data?.filenames).toEqual([join(dir, 'lib/d.js'), join(dir, 'src/b.tsx'), join(dir, 'src/a.ts')]);
    expect(text(result)).toMatch(/^Found 3 files\n/);
  });

  it('shows content with line numbers, -i and context lines', async () => {
    const result = await grepTool().execute({ pattern: 'beta', '-i': true, output_mode: 'content', '-B': 1, path: 'src/a.ts' }, toolContext(dir));
    const file = join(dir, 'src/a.ts');
    expect(text(result)).toBe(`${file}-1-export const alpha = 1;\n${file}:2:const Beta = 2;`);
    const around = await grepTool().execute({ pattern: 'Beta', output_mode: 'content', '-C': 1, '-n': false, path: 'src/a.ts' }, toolContext(dir));
    expect(text(around)).toBe(`${file}-export const alpha = 1;\n${file}:const Beta = 2;\n${file}-// TODO: alpha again`);
  });

  it('separates distant context groups with --', async () => {
    await put('ctx.txt', ['m1', 'x', 'x', 'x', 'x', 'm2'].join('\n'));
    const result = await grepTool().execute({ pattern: '^m', output_mode: 'content', '-A': 1, path: 'ctx.txt' }, toolContext(dir));
    const file = join(dir, 'ctx.txt');
    expect(text(result)).toBe(`${file}:1:m1\n${file}-2-x\n--\n${file}:6:m2`);
  });

  it('counts matching lines per file', async () => {
    const result = await grepTool().execute({ pattern: 'alpha', output_mode: 'count', path: 'src' }, toolContext(dir));
    expect(text(result)).toBe(`${join(dir, 'src/a.ts')}:2\n${join(dir, 'src/b.tsx')}:1\nFound 3 total occurrences across 2 files.`);
  });

  it('filters by glob and by type', async () => {
    const byGlob = await grepTool().execute({ pattern: 'alpha', glob: '*.tsx' }, toolContext(dir));
    expect(byGlob.data?.filenames).toEqual([join(dir, 'src/b.tsx')]);
    const byType = await grepTool().execute({ pattern: 'alpha', type: 'js' }, toolContext(dir));
    expect(byType.data?.filenames).toEqual([join(dir, 'lib/d.js')]);
    const excluded = await grepTool().execute({ pattern: 'alpha', glob: '!*.ts' }, toolContext(dir));
    expect(excluded.data?.filenames).toEqual([join(dir, 'lib/d.js'), join(dir, 'src/b.tsx')]);
    expect((await grepTool().execute({ pattern: 'x', type: 'klingon' }, toolContext(dir))).errorCode).toBe('invalid_pattern');
  });

  it('matches across lines in multiline mode only', async () => {
    await put('multi.ts', 'function f(\n  a,\n  b\n) {}\n');
    const plain = await grepTool().execute({ pattern: 'f\\(.*b', path: 'multi.ts' }, toolContext(dir));
    expect(plain.data?.numFiles).toBe(0);
    const multi = await grepTool().execute({ pattern: 'f\\(.*b', multiline: true, output_mode: 'content', path: 'multi.ts' }, toolContext(dir));
    const file = join(dir, 'multi.ts');
    expect(text(multi)).toBe(`${file}:1:function f(\n${file}:2:  a,\n${file}:3:  b`);
  });

  it('does not report a line match for a match that only spans lines', async () => {
    await put('span.txt', 'a\nb\n');
    expect((await grepTool().execute({ pattern: 'a\\sb', path: 'span.txt' }, toolContext(dir))).data?.numFiles).toBe(0);
  });

  it('applies head_limit and reports truncation', async () => {
    const result = await grepTool().execute({ pattern: 'alpha', output_mode: 'content', head_limit: 2 }, toolContext(dir));
    expect(text(result).split('\n')).toHaveLength(3);
    expect(result.data?.truncated).toBe(true);
  });

  it('streams large files in pieces with correct line numbers', async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => (i === 54_321 ? 'needle here' : `filler line ${i}`));
    await put('huge.txt', lines.join('\n'));
    const result = await grepTool().execute({ pattern: 'needle', output_mode: 'content', '-B': 1, path: 'huge.txt' }, toolContext(dir));
    const file = join(dir, 'huge.txt');
    expect(text(result)).toBe(`${file}-54321-filler line 54320\n${file}:54322:needle here`);
  });

  it('explains an invalid regex and accepts a leading (?i)', async () => {
    const bad = await grepTool().execute({ pattern: 'foo(' }, toolContext(dir));
    expect(bad.errorCode).toBe('invalid_pattern');
    const inline = await grepTool().execute({ pattern: '(?i)BETA' }, toolContext(dir));
    expect(inline.data?.filenames).toEqual([join(dir, 'src/a.ts')]);
  });

  it('stops when the run is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await grepTool().execute({ pattern: 'alpha' }, toolContext(dir, { signal: controller.signal }));
    expect(result.errorCode).toBe('aborted');
  });

  it('skips files without the required literal but still finds matches in ones with it', async () => {
    await put('lit/a.txt', 'xx handleFoo_123 yy\n');
    await put('lit/b.txt', 'handle nothing\n');
    const result = await grepTool().execute({ pattern: 'handle[A-Z][a-z]+_[0-9]{3}', path: 'lit', output_mode: 'content' }, toolContext(dir));
    expect(text(result)).toBe(`${join(dir, 'lit/a.txt')}:1:xx handleFoo_123 yy`);
  });

  it('searches inside an excluded folder when pointed at it', async () => {
    const result = await grepTool().execute({ pattern: 'alpha', path: 'node_modules' }, toolContext(dir));
    expect(result.data?.filenames).toEqual([join(dir, 'node_modules/pkg/index.ts')]);
  });

  it('searches inside a gitignored folder when pointed at it, its name-only rules still applying', async () => {
    await put('.gitignore', 'build/\n*.log\nnode_modules/\n/only-at-root.ts\n');
    await put('build/trace.log', 'alpha in a log\n');
    await put('build/only-at-root.ts', 'alpha: an anchored rule elsewhere does not apply here\n');
    const inBuild = await grepTool().execute({ pattern: 'alpha', path: 'build' }, toolContext(dir));
    expect(inBuild.data?.filenames?.sort()).toEqual([join(dir, 'build/only-at-root.ts'), join(dir, 'build/out.ts')]);
    const inDeps = await grepTool().execute({ pattern: 'alpha', path: 'node_modules/pkg' }, toolContext(dir));
    expect(inDeps.data?.filenames).toEqual([join(dir, 'node_modules/pkg/index.ts')]);
  });
});

describe('glob patterns', () => {
  it.each([
    ['**/*.ts', 'a/b/c.ts', true],
    ['**/*.ts', 'c.ts', true],
    ['src/**', 'src/x/y', true],
    ['*.ts', 'a/c.ts', false],
    ['*.{ts,tsx}', 'c.tsx', true],
    ['file?.[ch]', 'file1.c', true],
    ['[!a]*', 'abc', false],
    ['a.b', 'axb', false],
  ])('%s ~ %s → %s', (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });

  it('matches names for slash-free globs and paths otherwise', () => {
    const filter = compilePathFilter('*.ts, src/**/*.md !*.test.ts');
    expect(filter.matches('deep/x.ts', 'x.ts')).toBe(true);
    expect(filter.matches('deep/x.test.ts', 'x.test.ts')).toBe(false);
    expect(filter.matches('src/a/b.md', 'b.md')).toBe(true);
    expect(filter.matches('docs/b.md', 'b.md')).toBe(false);
  });
});
