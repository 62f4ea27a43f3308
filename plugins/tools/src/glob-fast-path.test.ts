import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileNamePattern, newestMatchingFiles } from './glob-fast-path.js';
import { globTool, literalParentheses, newestMatches, splitStaticPrefix } from './glob-tool.js';
import { IgnoreRules } from './ignore-rules.js';
import { NewestFiles } from './newest-files.js';
import { tempDir, toolContext } from './test-support.js';

describe('compileNamePattern', () => {
  it.each([
    ['**/*.ts', ['a.ts', '.ts', '..ts', '.a.ts', 'a b.ts'], ['a.tsx', 'ts', 'a.ts.bak']],
    ['**/*.{ts,tsx}', ['a.ts', 'b.tsx', '.tsx'], ['a.js', 'a.tsxx']],
    ['**/package.json', ['package.json'], ['package.jsonc', 'apackage.json', 'package-json']],
    ['**/?.ts', ['a.ts', '..ts'], ['ab.ts', '.ts']],
    ['**/*', ['a', '.hidden', 'a.b.c'], []],
    ['**/*a*', ['a', 'xax', '.a.ts'], ['b', 'ts']],
    ['**/file?-*.{test.ts,spec.ts}', ['file1-x.test.ts', 'file2-.spec.ts'], ['file-x.test.ts', 'file1-x.ts']],
  ])('%s', (pattern, matching, other) => {
    const matches = compileNamePattern(pattern);
    expect(matches).toBeDefined();
    for (const name of matching) expect(matches!(name), name).toBe(true);
    for (const name of other) expect(matches!(name), name).toBe(false);
  });

  it.each([
    'src/**/*.ts', '*.ts', '**/', '**/**', '**/**.ts', '**/a/**/*.ts', '**/src/*.ts', '**/*.[jt]s', '**/!(a).ts',
    '**/@(a|b).ts', '**/+(a).ts', '**/{a}', '**/{a,{b,c}}', '**/{1..3}.ts', '**/{a,}.ts', '**/*.{ts', '**/\\*.ts',
    '!**/*.ts', '**/a b.ts', '**/*.t$', '**/(a).ts', '**/a,b.ts',
  ])('leaves %s to fast-glob', (pattern) => {
    expect(compileNamePattern(pattern)).toBeUndefined();
  });
});

describe('NewestFiles', () => {
  /** Deterministic pseudo-random numbers, so failures reproduce. */
  function random(seed: number): () => number {
    return () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
  }

  const reference = (files: Array<{ path: string; mtimeMs: number }>, limit: number) =>
    [...files].sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1)).slice(0, limit);

  it.each([
    ['random times', 0, 5_000, 100],
    ['ascending times (every file newer than the last)', 1, 3_000, 50],
    ['descending times', 2, 3_000, 50],
    ['few distinct times (ties decided by path)', 3, 4_000, 100],
    ['fewer files than the limit', 4, 30, 100],
    ['a limit of one', 5, 1_000, 1],
  ])('keeps the newest, newest first, ties by path: %s', (_label, kind, total, limit) => {
    const next = random(kind + 7);
    const files: Array<{ path: string; mtimeMs: number }> = [];
    for (let index = 0; index < total; index += 1) {
      const mtimeMs =
        kind === 1 ? index : kind === 2 ? total - index : kind === 3 ? Math.floor(next() * 3) * 1000.5 : Math.floor(next() * 1e9) / 7;
      files.push({ path: `/p/${Math.floor(next() * 1e6).toString(36)}-${index}`, mtimeMs });
    }
    const newest = new NewestFiles(limit);
    for (const file of files) newest.offer(file.path, file.mtimeMs);
    expect(newest.count).toBe(total);
    expect(newest.sorted()).toEqual(reference(files, limit));
  });

  it('counts but keeps nothing with a limit of zero', () => {
    const newest = new NewestFiles(0);
    newest.offer('/a', 1);
    newest.offer('/b', 2);
    expect(newest.count).toBe(2);
    expect(newest.sorted()).toEqual([]);
  });

  it('stays correct when thousands of files share one time', () => {
    const newest = new NewestFiles(10);
    const paths = Array.from({ length: 3_000 }, (_, index) => `/same/${(3_000 - index).toString().padStart(5, '0')}`);
    for (const path of paths) newest.offer(path, 42);
    newest.offer('/newer', 43);
    expect(newest.sorted().map((entry) => entry.path)).toEqual(['/newer', ...[...paths].sort().slice(0, 9)]);
  });
});

describe('Glob fast path against fast-glob', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let age = 0;

  async function put(path: string, content = 'x'): Promise<void> {
    const full = join(dir, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
    // Distinct times, so the order is fully determined by modification time.
    age += 1;
    const when = new Date(Date.UTC(2024, 0, 1) + age * 1000);
    await utimes(full, when, when);
  }

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    age = 0;
    for (const name of ['a.ts', '.ts', '..ts', '.a.ts', 'a.tsx', 'a b.ts', 'a.ts.bak', 'package.json', 'b.js', 'x-1.test.ts']) await put(name);
    await put('.gitignore', 'ignored/\n*.log\ngen-*.ts\n!gen-keep.ts\n');
    await put('src/deep/c.ts');
    await put('src/deep/gen-1.ts');
    await put('src/deep/gen-keep.ts');
    await put('src/deep/.gitignore', 'secret.ts\n');
    await put('src/deep/secret.ts');
    await put('src/deep/more/secret.ts');
    await put('src/.hidden/h.ts');
    await put('src/pkg/package.json');
    await put('src/notes.log');
    await put('ignored/i.ts');
    await put('node_modules/m/index.ts');
    await put('.git/hooks/h.ts');
    await mkdir(join(dir, 'dir.ts'));
    await put('dir.ts/inside.ts');
    await symlink(join(dir, 'a.ts'), join(dir, 'link.ts'));
    await symlink(join(dir, 'src'), join(dir, 'src-link'));
  });
  afterEach(async () => cleanup());

  const patterns = ['**/*.ts', '**/*', '**/*.{ts,tsx}', '**/package.json', '**/?.ts', '**/*.log', '**/secret.ts', '**/gen-*.ts', '**/*.rs', '**/.*'];

  it.each(patterns)('%s: same files, same order, same count', async (pattern) => {
    expect(compileNamePattern(pattern)).toBeDefined();
    for (const options of [{}, { respectGitignore: false }, { respectGitignore: false, excludeDirectories: [] }]) {
      for (const limit of [1000, 3]) {
        const fast = await newestMatches(pattern, dir, IgnoreRules.create(dir, dir, options), limit);
        const general = await newestMatches(pattern, dir, IgnoreRules.create(dir, dir, options), limit, { fastPath: false });
        expect(fast).toEqual(general);
      }
    }
  });

  it('searches from a static prefix as from a path: rules above apply, a directory named explicitly is searched', async () => {
    await put('ignored/x.log');
    const glob = globTool({ statWorker: false });
    const paths = async (pattern: string) => {
      const result = await glob.execute({ pattern }, toolContext(dir));
      expect(result.success, `${pattern}: ${String(result.output)}`).toBe(true);
      return result.data!.filenames.map((path) => path.slice(dir.length + 1)).sort();
    };
    const everything = await paths('**/*.ts');
    expect(await paths('src/**/*.ts')).toEqual(everything.filter((path) => path.startsWith('src/')));
    expect(await paths('src/deep/*.ts')).toEqual(['src/deep/c.ts', 'src/deep/gen-keep.ts']);
    expect(await paths('src/deep/**')).toEqual(['src/deep/.gitignore', 'src/deep/c.ts', 'src/deep/gen-keep.ts']);
    for (const hidden of ['src/notes.log', 'src/deep/gen-1.ts', 'src/deep/secret.ts', 'src/deep/more/*.ts', 'missing/**/*.ts']) {
      expect(await paths(hidden), hidden).toEqual([]);
    }
    // Ignored and excluded directories are searched when named, their name-only rules (*.log) still applying.
    expect(await paths('ignored/*')).toEqual(['ignored/i.ts']);
    expect(await paths('ignored/i.ts')).toEqual(['ignored/i.ts']);
    expect(await paths('node_modules/**/*.ts')).toEqual(['node_modules/m/index.ts']);
    expect(await paths('.git/hooks/*.ts')).toEqual(['.git/hooks/h.ts']);
    const viaPath = await glob.execute({ pattern: '*', path: join(dir, 'ignored') }, toolContext(dir));
    expect(viaPath.data?.filenames).toEqual([join(dir, 'ignored', 'i.ts')]);
  });

  it('takes parentheses literally unless they open an extglob, and lists a directory given with a trailing slash', async () => {
    await put('app/(marketing)/about/page.tsx');
    await put('app/(shop)/cart/page.tsx');
    await put('app/marketing/about/page.tsx');
    await put('photos/photo (1).png');
    const glob = globTool({ statWorker: false });
    const paths = async (pattern: string) => {
      const result = await glob.execute({ pattern }, toolContext(dir));
      expect(result.success, `${pattern}: ${String(result.output)}`).toBe(true);
      return result.data!.filenames.map((path) => path.slice(dir.length + 1)).sort();
    };
    expect(await paths('app/(marketing)/about/page.tsx')).toEqual(['app/(marketing)/about/page.tsx']);
    expect(await paths('app/(marketing)/**/*.tsx')).toEqual(['app/(marketing)/about/page.tsx']);
    expect(await paths('**/(marketing)/**/page.tsx')).toEqual(['app/(marketing)/about/page.tsx']);
    expect(await paths('app/@(marketing|\\(shop\\))/**/page.tsx')).toEqual(['app/(shop)/cart/page.tsx', 'app/marketing/about/page.tsx']);
    expect(await paths('**/photo (1).png')).toEqual(['photos/photo (1).png']);
    expect(await paths('app/')).toEqual(['app/(marketing)/about/page.tsx', 'app/(shop)/cart/page.tsx', 'app/marketing/about/page.tsx']);
    expect(literalParentheses('a/(b)/[(]x/\\(c\\)/!(d)/+(e|(f))')).toBe('a/\\(b\\)/[(]x/\\(c\\)/!(d)/+(e|\\(f\\))');
  });

  it('refuses a static prefix that leads out of the workspace through a link', async () => {
    const { dir: outside, cleanup: removeOutside } = await tempDir();
    try {
      await writeFile(join(outside, 'secret.ts'), 'x');
      await symlink(outside, join(dir, 'out-link'));
      const result = await globTool().execute({ pattern: 'out-link/**/*.ts' }, toolContext(dir));
      expect(result).toMatchObject({ success: false, errorCode: 'outside_workspace' });
    } finally {
      await removeOutside();
    }
  });

  it('splits the plain leading directories off a pattern', () => {
    expect(splitStaticPrefix('src/lib/**/*.ts')).toEqual({ prefix: 'src/lib', rest: '**/*.ts' });
    expect(splitStaticPrefix('src/a.ts')).toEqual({ prefix: 'src', rest: 'a.ts' });
    expect(splitStaticPrefix('a.ts')).toEqual({ prefix: '', rest: 'a.ts' });
    expect(splitStaticPrefix('pkg*/**/*.ts')).toEqual({ prefix: '', rest: 'pkg*/**/*.ts' });
    expect(splitStaticPrefix('src/{a,b}/*.ts')).toEqual({ prefix: 'src', rest: '{a,b}/*.ts' });
    expect(splitStaticPrefix('src/\\(x\\)/*.ts')).toEqual({ prefix: 'src', rest: '\\(x\\)/*.ts' });
    expect(splitStaticPrefix('./src/*.ts')).toEqual({ prefix: '', rest: './src/*.ts' });
  });

  it('loads the .gitignore files of directories a walk skipped when it enters a deeper one first', async () => {
    const { readdirSync } = await import('node:fs');
    const rules = IgnoreRules.create(dir, dir);
    const src = join(dir, 'src');
    // Straight into src/ (the root never read): the root's `*.log` still applies.
    const names = rules.filter(src, readdirSync(src, { withFileTypes: true })).map((entry) => entry.name).sort();
    expect(names).toEqual(['.hidden', 'deep', 'pkg']);
  });

  it('finds what the rules allow and nothing else', async () => {
    const found = await newestMatchingFiles(dir, compileNamePattern('**/*.ts')!, IgnoreRules.create(dir, dir), 1000);
    const relative = found.files.map((entry) => entry.path.slice(dir.length + 1)).sort();
    expect(relative).toEqual(['..ts', '.a.ts', '.ts', 'a b.ts', 'a.ts', 'dir.ts/inside.ts', 'src/.hidden/h.ts', 'src/deep/c.ts', 'src/deep/gen-keep.ts', 'x-1.test.ts']);
    expect(found.count).toBe(10);
  });

  it('applies the .gitignore files above the search root', async () => {
    const root = join(dir, 'src', 'deep');
    const found = await newestMatchingFiles(root, compileNamePattern('**/*.ts')!, IgnoreRules.create(root, dir), 1000);
    expect(found.files.map((entry) => entry.path)).toEqual([join(root, 'gen-keep.ts'), join(root, 'c.ts')]);
  });

  it('returns nothing for a search root that is a file or unreadable', async () => {
    const file = join(dir, 'a.ts');
    expect(await newestMatchingFiles(file, compileNamePattern('**/*')!, IgnoreRules.create(file, dir), 10)).toEqual({ files: [], count: 0 });
    expect(await newestMatchingFiles(join(dir, 'missing'), compileNamePattern('**/*')!, IgnoreRules.create(dir, dir), 10)).toEqual({ files: [], count: 0 });
  });
});
