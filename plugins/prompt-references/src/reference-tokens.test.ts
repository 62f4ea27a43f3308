import { describe, expect, it } from 'vitest';
import { findReferenceTokens, maskCode } from './reference-tokens.js';

const paths = (text: string) => findReferenceTokens(text).map(({ path, form }) => `${form}:${path}`);

describe('findReferenceTokens', () => {
  it('reads path-like references as paths', () => {
    expect(paths('see @AGENTS.md, @./Makefile and @docs/spec.md; also @../x')).toEqual([
      'path:AGENTS.md',
      'path:./Makefile',
      'path:docs/spec.md',
      'path:../x',
    ]);
  });

  it('reads quoted paths with spaces, in either quote', () => {
    const tokens = findReferenceTokens(`compare @"my notes.md" with @'old notes.txt'`);
    expect(tokens).toEqual([
      { original: '@"my notes.md"', path: 'my notes.md', form: 'quoted' },
      { original: "@'old notes.txt'", path: 'old notes.txt', form: 'quoted' },
    ]);
  });

  it('drops sentence punctuation after a reference', () => {
    expect(findReferenceTokens('read (@docs/a.md). then @b.txt!')).toEqual([
      { original: '@docs/a.md', path: 'docs/a.md', form: 'path' },
      { original: '@b.txt', path: 'b.txt', form: 'path' },
    ]);
  });

  it('marks bare words as words, for the resolver to check', () => {
    expect(paths('ask @alice about @README')).toEqual(['word:alice', 'word:README']);
  });

  it('leaves e-mail addresses and other mid-word @ alone', () => {
    expect(paths('mail a@b.com or first.last@example.org, pay x@y')).toEqual([]);
  });

  it('ignores an unclosed quote, an empty one and a lone @', () => {
    expect(paths('an @"unclosed quote')).toEqual([]);
    expect(paths('an empty @"" quote, a lone @ and @.')).toEqual([]);
  });

  it('skips inline code and fenced code blocks', () => {
    const text = ['run `npm i @scope/pkg` first', '```sh', 'cp @x.md @y.md', '```', 'then @real.md'].join('\n');
    expect(paths(text)).toEqual(['path:real.md']);
  });
});

describe('maskCode', () => {
  it('keeps the length of every line', () => {
    const text = 'a `b` c\n~~~\nd\n~~~\ne';
    expect(maskCode(text)).toHaveLength(text.length);
    expect(maskCode(text)).toBe('a     c\n   \n \n   \ne');
  });
});
