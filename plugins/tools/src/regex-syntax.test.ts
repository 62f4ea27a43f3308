import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePattern, grepTool } from './grep-tool.js';
import { translateRipgrepPattern } from './regex-syntax.js';
import { tempDir, toolContext } from './test-support.js';

describe('translateRipgrepPattern', () => {
  it.each([
    ['plain (unchanged)', 'foo\\(bar\\)[a-z]+', 'foo\\(bar\\)[a-z]+', ''],
    ['inline flags', '(?is)a.b', 'a.b', 'is'],
    ['verbose mode strips blanks and comments, inside classes too', '(?x) a \\  b # comment\n[ c\\ ]', 'a b[c ]', ''],
    ['named groups', '(?P<year>\\d{4})-(?P<month>\\d\\d)', '(?<year>\\d{4})-(?<month>\\d\\d)', ''],
    ['POSIX classes', '[[:alpha:]_][[:alnum:]]*', '[A-Za-z_][0-9A-Za-z]*', ''],
    ['negated POSIX class alone', '[[:^digit:]]', '[^0-9]', ''],
    ['negated POSIX class with an escape', '[x[:^space:]]', '[x\\S]', ''],
    ['text anchors', '\\Afoo\\z', '^foo$', ''],
    ['word-boundary halves', '\\b{start}ab\\b{end}', '\\b(?=\\w)ab\\b(?<=\\w)', ''],
    ['word-boundary halves, short forms', '\\<ab\\>', '\\b(?=\\w)ab\\b(?<=\\w)', ''],
    ['superfluous escapes lose the backslash', 'a\\-\\#\\&\\~\\ \\%\\!\\"\\,\\:\\;\\=\\@\\_\\`\\\'', 'a-#&~ %!",:;=@_`\'', ''],
    ['syntax characters keep theirs', '\\^\\$\\\\\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/', '\\^\\$\\\\\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/', ''],
    ['in a class, only ] \\ ^ - and syntax characters keep theirs', '[\\]\\\\\\^\\-\\&\\~\\#\\ \\.]', '[\\]\\\\\\^\\-&~# \\.]', ''],
    ['literal ] first in a class', '[]a]', '[\\]a]', ''],
  ])('%s', (_label, pattern, source, flags) => {
    const translated = translateRipgrepPattern(pattern);
    expect(translated.source).toBe(source);
    expect(translated.flags).toBe(flags);
    expect(() => new RegExp(translated.source, translated.flags)).not.toThrow();
    expect(() => new RegExp(translated.source, `${translated.flags}u`)).not.toThrow();
  });

  it('anchors \\A and \\z to the whole text in multiline mode, to each line otherwise', () => {
    expect(translateRipgrepPattern('\\Afoo|end\\z', { multiline: true }).source).toBe('(?<![\\s\\S])foo|end(?![\\s\\S])');
    expect(translateRipgrepPattern('\\Afoo|end\\z').source).toBe('^foo|end$');
    const whole = compilePattern('\\Afoo', '', { multiline: true });
    expect(new RegExp(whole.source, `${whole.flags}m`).test('x\nfoo')).toBe(false);
    expect(new RegExp(whole.source, `${whole.flags}m`).test('foo\nx')).toBe(true);
    const end = compilePattern('end\\z', '', { multiline: true });
    expect(new RegExp(end.source, `${end.flags}m`).test('the end\n')).toBe(false);
    expect(new RegExp(end.source, `${end.flags}m`).test('the end')).toBe(true);
  });

  it('keeps Rust escapes valid when the u flag is forced', () => {
    for (const pattern of ['\\pL+\\-x', '\\x{41}\\#\\&\\~\\%\\ \\/', '[\\pL\\-\\&\\#\\]]', '\\p{Lu}\\<\\>', '(?x)\\pL \\ \\# [a\\ ]']) {
      const translated = translateRipgrepPattern(pattern);
      expect(translated.unicode).toBe(true);
      expect(() => new RegExp(translated.source, 'u'), pattern).not.toThrow();
    }
    expect(translateRipgrepPattern('\\pL+\\-x')).toEqual({ source: '\\p{L}+-x', flags: '', unicode: true });
    expect(translateRipgrepPattern('[\\pL\\d]')).toEqual({ source: '[\\p{L}\\d]', flags: '', unicode: true });
  });

  it('marks Unicode classes, one-letter ones braced', () => {
    expect(translateRipgrepPattern('\\pL+\\PN')).toEqual({ source: '\\p{L}+\\P{N}', flags: '', unicode: true });
    // Rust takes bare script names; JavaScript wants Script=… (categories and properties stay as they are).
    expect(translateRipgrepPattern('\\p{Greek}')).toMatchObject({ source: '\\p{Script=Greek}', unicode: true });
    expect(translateRipgrepPattern('\\P{Han}')).toMatchObject({ source: '\\P{Script=Han}', unicode: true });
    expect(translateRipgrepPattern('\\p{Lu}\\p{Alphabetic}\\p{sc=Latn}')).toMatchObject({ source: '\\p{Lu}\\p{Alphabetic}\\p{sc=Latn}' });
    expect(compilePattern('\\p{Greek}+', '').test('alpha αβγ')).toBe(true);
    expect(compilePattern('^\\p{Greek}+$', '').test('abc')).toBe(false);
  });

  it('turns Rust code-point escapes into \\u{…}, inside classes too', () => {
    expect(translateRipgrepPattern('\\x{1F600}\\U0001F601\\U{41}\\u{42}')).toEqual({ source: '\\u{1F600}\\u{1F601}\\u{41}\\u{42}', flags: '', unicode: true });
    expect(translateRipgrepPattern('[\\x{41}-\\x{43}]')).toEqual({ source: '[\\u{41}-\\u{43}]', flags: '', unicode: true });
    expect(translateRipgrepPattern('\\x41')).toEqual({ source: '\\x41', flags: '', unicode: false });
    expect(compilePattern('\\u{1F600}', '').test('smile 😀')).toBe(true);
    expect(compilePattern('\\x{1F600}', '').test('u{1F600}')).toBe(false);
    expect(compilePattern('^[\\x{41}-\\x{43}]+$', '').test('ABCA')).toBe(true);
  });

  it('names what it cannot translate', () => {
    expect(() => translateRipgrepPattern('[[:vowel:]]')).toThrow(/unknown POSIX class \[:vowel:\]/);
    expect(() => translateRipgrepPattern('[a[:^alpha:]]')).toThrow(/negated POSIX class/);
    expect(() => translateRipgrepPattern('(?x)[a#b]')).toThrow(/unclosed character class at offset 0.*# inside brackets starts a comment/);
    expect(() => translateRipgrepPattern('x[abc')).toThrow(/unclosed character class at offset 1/);
  });
});

describe('compilePattern (ripgrep syntax to RegExp)', () => {
  it.each([
    ['(?i)HELLO', 'say hello', true],
    ['(?P<word>[[:upper:]][[:lower:]]+)_[[:digit:]]{3}', 'handleRequest_042 Handle_042', true],
    ['(?P<word>[[:upper:]][[:lower:]]+)_[[:digit:]]{3}', 'handle_42', false],
    ['\\pLü', 'Grüße', true],
    ['\\pN', 'abc', false],
    ['\\pL\\pL', 'ßü', true],
    ['(?x) foo \\# bar', 'foo# bar', false],
    ['(?x) foo \\# bar', 'foo#bar', true],
    ['\\pL+\\-x', 'ab-x', true],
    ['\\pL+\\-x', 'abx', false],
    ['[\\pL\\-]+\\#', 'a-ü#', true],
    ['[\\pL\\d]', '7', true],
    ['[\\pL\\d]', '{', false],
    ['\\x{41}\\&\\~', 'A&~', true],
    ['\\<foo\\>', 'a foo b', true],
    ['\\<foo\\>', 'afoo', false],
    ['(?x)[a b]', ' ', false],
    ['(?x)[a b]', 'b', true],
    ['(?x)[ ^ a ]', 'a', false],
    ['(?x)[ ^ a ]', 'b', true],
    ['(?x)[a # letters\n b]+$', 'ab', true],
    ['(?x)[a # letters\n b]', '#', false],
    ['(?x)[\\ ]', ' ', true],
    ['(?x)[ ] ]', ']', true],
  ])('%s on %j: %s', (pattern, text, matches) => {
    expect(compilePattern(pattern, '').test(text)).toBe(matches);
  });
});

describe('Grep with ripgrep syntax', () => {
  it('searches with POSIX classes and Python-style named groups', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      await writeFile(join(dir, 'a.ts'), 'const handleRequest_042 = 1;\nconst x = 2;\n');
      const result = await grepTool().execute({ pattern: '(?P<name>handle[[:upper:]][[:lower:]]+)_[[:digit:]]{3}', output_mode: 'content' }, toolContext(dir));
      expect(result.success).toBe(true);
      expect(result.output).toContain('a.ts:1:const handleRequest_042 = 1;');
      const bad = await grepTool().execute({ pattern: '[[:vowel:]]' }, toolContext(dir));
      expect(bad).toMatchObject({ success: false, errorCode: 'invalid_pattern' });
      expect(bad.output).toMatch(/unknown POSIX class/);
    } finally {
      await cleanup();
    }
  });

  it('anchors \\A and \\z to the file in multiline mode and to the line otherwise', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      await writeFile(join(dir, 'a.txt'), 'x\nfoo\nthe end\n');
      await writeFile(join(dir, 'b.txt'), 'foo\nthe end');
      const files = async (pattern: string, multiline: boolean) =>
        (await grepTool().execute({ pattern, multiline }, toolContext(dir))).data?.filenames.map((path) => path.slice(dir.length + 1)).sort();
      expect(await files('\\Afoo', true)).toEqual(['b.txt']);
      expect(await files('end\\z', true)).toEqual(['b.txt']);
      expect(await files('^foo$', true)).toEqual(['a.txt', 'b.txt']);
      expect(await files('\\Afoo', false)).toEqual(['a.txt', 'b.txt']);
      expect(await files('end\\z', false)).toEqual(['a.txt', 'b.txt']);
      const content = await grepTool().execute({ pattern: '\\Afoo\\nthe', multiline: true, output_mode: 'content' }, toolContext(dir));
      expect(content.output).toBe(`${join(dir, 'b.txt')}:1:foo\n${join(dir, 'b.txt')}:2:the end`);
    } finally {
      await cleanup();
    }
  });

  it('accepts inline (?m) and (?s) with the flags Grep adds itself', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      await writeFile(join(dir, 'a.txt'), 'foo\nbar\n');
      for (const [pattern, multiline] of [['(?m)^bar', false], ['(?m)^bar', true], ['(?s)foo.bar', true]] as const) {
        const result = await grepTool().execute({ pattern, multiline }, toolContext(dir));
        expect(result, pattern).toMatchObject({ success: true, data: { numFiles: 1 } });
      }
    } finally {
      await cleanup();
    }
  });
});
