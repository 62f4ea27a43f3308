import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compilePathFilter } from './glob-pattern.js';
import { requiredLiteral } from './grep-engine.js';
import { grepTool } from './grep-tool.js';
import { tempDir, text, toolContext } from './test-support.js';

let dir: string;
let cleanup: () => Promise<void>;

async function put(path: string, content: string): Promise<string> {
  const full = join(dir, path);
  await mkdir(dirname(full), { recursive: true });
  await writeFile(full, content);
  return full;
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => cleanup());

describe('requiredLiteral never asks for text a match can lack', () => {
  // [pattern (RegExp source), flags, a text it matches]
  const cases: Array<[string, string, string]> = [
    // quantifier digits
    ['\\d{3,4}', '', 'phone 555-1234'],
    ['\\w{10,}', '', 'abcdefghijkl'],
    ['[0-9]{2,5}', '', '2024'],
    ['\\d{3}-\\d{4}', '', 'call 555-1234'],
    ['abc{0,2}d', '', 'abd'],
    ['x{0}yz{1}w', '', 'yzw'],
    ['ab{2}cde', '', 'abbcde'],
    ['(?:ab){2,}xyz', '', 'ababxyz'],
    // a `{` that is not a quantifier is a plain character
    ['a{1,2', '', 'a{1,2'],
    ['x{,3}', '', 'x{,3}'],
    // escapes with arguments
    ['\\x54ODO', '', 'TODO'],
    ['\\u0054ODO', '', 'TODO'],
    ['\\u{1F600}', 'u', 'smile 😀'],
    ['\\u{1F600}abc', 'u', '😀abc'],
    ['\\cIKLM', '', '\tKLM'],
    ['\\p{Lowercase}xyz', 'u', 'axyz'],
    ['\\P{Lowercase}xyz', 'u', 'Axyz'],
    ['\\p{L}{3}', 'u', 'héé'],
    ['(?<name>a)\\k<name>', '', 'aa'],
    ['(abc)\\1', '', 'abcabc'],
    ['(a)\\10xy', '', 'a\bxy'],
    ['\\101BC', '', 'ABC'],
    ['\\0123x', '', '\n3x'],
    ['\\0abc', '', '\0abc'],
    // lookarounds, classes, alternation inside groups, lazy quantifiers
    ['(?<=foo)bar', '', 'foobar'],
    ['(?<!x)abc(?=def)', '', 'abcdef'],
    ['(?=abcd)abc', '', 'abcd'],
    ['[\\]xyz]', '', 'y'],
    ['[\\]xyz]+end', '', ']end'],
    ['[\\]xyz]?abc', '', 'abc'],
    ['[^]]xyz', '', 'a]xyz'],
    ['(foo|bar)baz', '', 'barbaz'],
    ['x(?:abc|def)yz', '', 'xdefyz'],
    ['ab+?cd', '', 'abbcd'],
    ['colou?r', '', 'color'],
    ['foo\\.?bar', '', 'foobar'],
    ['a\\/b\\/c', '', 'a/b/c'],
    ['(?<year>\\d{4})-12-25', '', '2024-12-25'],
    ['\\bword\\b', '', 'a word here'],
  ];

  it.each(cases)('%s (%s) on %j', (pattern, flags, sample) => {
    expect(new RegExp(pattern, flags).test(sample)).toBe(true);
    const literal = requiredLiteral(pattern, flags);
    if (literal !== undefined) expect(sample).toContain(literal);
  });

  it('still finds the literal runs it can prove', () => {
    expect(requiredLiteral('\\d{3}-phone', '')).toBe('-phone');
    expect(requiredLiteral('abc{0,2}defg', '')).toBe('defg');
    expect(requiredLiteral('TODO\\x3a', '')).toBe('TODO');
    expect(requiredLiteral('\\.then\\(', '')).toBe('.then(');
  });
});

describe('Grep finds matches the required-literal shortcut used to skip', () => {
  it.each([
    ['\\d{3,4}', 'phone 555-1234'],
    ['\\w{10,}', 'abcdefghijkl'],
    ['[0-9]{2,5}', 'year 2024'],
    ['\\x54ODO', 'TODO: fix'],
    ['\\u0054ODO', 'TODO: fix'],
    ['\\cIKLM', 'tab\tKLM'],
    ['\\p{Lowercase}xyz', 'axyz'],
    ['(?<name>ab)\\k<name>', 'abab'],
    ['abc{0,2}d', 'abd'],
    ['[]xyz]+end', 'yend'],
  ])('%s on %j', async (pattern, line) => {
    const file = await put('small.txt', `first\n${line}\nlast\n`);
    const result = await grepTool().execute({ pattern, output_mode: 'content', path: 'small.txt' }, toolContext(dir));
    expect(text(result)).toBe(`${file}:2:${line}`);
  });
});

describe('Grep negated globs prune directories', () => {
  beforeEach(async () => {
    await put('src/app.ts', 'needle\n');
    await put('vendor/lib.ts', 'needle\n');
    await put('vendor/deep/more.js', 'needle\n');
    await put('src/vendor/nested.ts', 'needle\n');
    await put('docs/vendor', 'needle in a file named vendor\n');
  });

  const found = async (glob: string) =>
    ((await grepTool().execute({ pattern: 'needle', glob }, toolContext(dir))).data?.filenames ?? []).map((path) => path.slice(dir.length + 1)).sort();

  it('`!vendor` leaves out vendor folders at any depth and files named vendor', async () => {
    expect(await found('!vendor')).toEqual(['src/app.ts']);
  });

  it('`!vendor/` leaves out only folders', async () => {
    expect(await found('!vendor/')).toEqual(['docs/vendor', 'src/app.ts']);
  });

  it('`!**/vendor` leaves out vendor folders at any depth', async () => {
    expect(await found('!**/vendor')).toEqual(['src/app.ts']);
  });

  it('a path glob prunes only that folder', async () => {
    expect(await found('!src/vendor')).toEqual(['docs/vendor', 'src/app.ts', 'vendor/deep/more.js', 'vendor/lib.ts']);
  });

  it('positive globs still descend into every folder', async () => {
    expect(await found('*.ts')).toEqual(['src/app.ts', 'src/vendor/nested.ts', 'vendor/lib.ts']);
    expect(await found('vendor')).toEqual(['docs/vendor']);
  });

  it('combines with type, the glob alone pruning', async () => {
    const result = await grepTool().execute({ pattern: 'needle', type: 'ts', glob: '!vendor' }, toolContext(dir));
    expect(result.data?.filenames).toEqual([join(dir, 'src/app.ts')]);
  });

  it('compilePathFilter prunes only for exclusions', () => {
    const filter = compilePathFilter('*.ts !vendor/ !build');
    expect(filter.prunes?.('a/vendor', 'vendor')).toBe(true);
    expect(filter.prunes?.('build', 'build')).toBe(true);
    expect(filter.prunes?.('src', 'src')).toBe(false);
    expect(filter.prunes?.('x.ts', 'x.ts')).toBe(false);
    expect(filter.matches('vendor', 'vendor')).toBe(false);
    expect(filter.matches('src/x.ts', 'x.ts')).toBe(true);
  });
});

describe('multiline Grep with context lines', () => {
  const lines = ['l1', 'l2', 'start(', '  arg', ')', 'l6', 'l7', 'l8', 'l9', 'start(', ')', 'l12'];

  it('prints -B / -A context around each match, groups separated by --', async () => {
    const file = await put('m.txt', `${lines.join('\n')}\n`);
    const result = await grepTool().execute({ pattern: 'start\\(.*?\\)', multiline: true, output_mode: 'content', '-B': 1, '-A': 1, path: 'm.txt' }, toolContext(dir));
    expect(text(result)).toBe(
      [`${file}-2-l2`, `${file}:3:start(`, `${file}:4:  arg`, `${file}:5:)`, `${file}-6-l6`, '--', `${file}-9-l9`, `${file}:10:start(`, `${file}:11:)`, `${file}-12-l12`].join('\n'),
    );
  });

  it('joins touching groups, honours -C and -n false, and shows no line past the end', async () => {
    const file = await put('m.txt', `${lines.join('\n')}\n`);
    const result = await grepTool().execute({ pattern: 'start\\(.*?\\)', multiline: true, output_mode: 'content', '-C': 2, '-n': false, path: 'm.txt' }, toolContext(dir));
    expect(text(result)).toBe(
      ['l1', 'l2', 'start(', '  arg', ')', 'l6', 'l7', 'l8', 'l9', 'start(', ')', 'l12'].map((line, index) => `${file}${[2, 3, 4, 9, 10].includes(index) ? ':' : '-'}${line}`).join('\n'),
    );
  });

  it('separates files with -- as the line path does', async () => {
    const a = await put('a.txt', 'x\nfoo\nbar\ny\n');
    const b = await put('b.txt', 'foo\nbar\n');
    const result = await grepTool().execute({ pattern: 'foo\\nbar', multiline: true, output_mode: 'content', '-A': 1 }, toolContext(dir));
    expect(text(result)).toBe([`${a}:2:foo`, `${a}:3:bar`, `${a}-4-y`, '--', `${b}:1:foo`, `${b}:2:bar`].join('\n'));
  });
});
