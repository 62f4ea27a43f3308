import { describe, expect, it } from 'vitest';
import { structuredPatch } from './diff.js';
import { closestMatch, findOccurrences, lineOf, similarity } from './edit-match.js';
import { OutputBuffer } from './output-buffer.js';
import { ToolSessionState } from './session-state.js';
import { requiredLiteral } from './grep-engine.js';

describe('structuredPatch', () => {
  it('splits distant changes into separate hunks with three lines of context', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join('\n') + '\n';
    const after = before.replace('l2\n', 'L2\n').replace('l18\n', 'L18\n');
    const hunks = structuredPatch(before, after);
    expect(hunks).toEqual([
      { oldStart: 1, oldLines: 5, newStart: 1, newLines: 5, lines: [' l1', '-l2', '+L2', ' l3', ' l4', ' l5'] },
      { oldStart: 15, oldLines: 6, newStart: 15, newLines: 6, lines: [' l15', ' l16', ' l17', '-l18', '+L18', ' l19', ' l20'] },
    ]);
  });

  it('merges nearby changes and handles insertions into an empty file', () => {
    expect(structuredPatch('a\nb\nc\n', 'A\nb\nC\n')).toHaveLength(1);
    expect(structuredPatch('', 'x\ny\n')).toEqual([{ oldStart: 1, oldLines: 0, newStart: 1, newLines: 2, lines: ['+x', '+y'] }]);
    expect(structuredPatch('same\n', 'same\n')).toEqual([]);
  });
});

describe('edit matching', () => {
  it('finds non-overlapping occurrences and their lines', () => {
    expect(findOccurrences('aaaa', 'aa')).toEqual([0, 2]);
    expect(lineOf('a\nb\nc', 4)).toBe(3);
  });

  it('scores similarity and finds the closest line', () => {
    expect(similarity('hello', 'hello')).toBe(1);
    expect(similarity('abc', 'xyz')).toBe(0);
    expect(closestMatch('one\ntwo three\n', 'two thrEE')).toMatchObject({ line: 2, whitespaceOnly: false });
    expect(closestMatch('one\n', 'completely different')).toBeUndefined();
  });
});

describe('OutputBuffer', () => {
  it('keeps everything under the limit and the head and tail above it', () => {
    const small = new OutputBuffer(10);
    small.push('12345');
    small.push('67890');
    expect(small.toString()).toBe('1234567890');
    const big = new OutputBuffer(10);
    for (let i = 0; i < 1000; i += 1) big.push('abcdefghij');
    expect(big.truncated).toBe(true);
    expect(big.toString()).toBe('abcde\n\n[... 9990 characters truncated ...]\n\nfghij');
  });
});

describe('ToolSessionState', () => {
  it('drops the least recently used session beyond its bound', () => {
    const state = new ToolSessionState({ maxSessions: 2 });
    state.get('a');
    state.get('b');
    state.get('a');
    state.get('c');
    expect([state.has('a'), state.has('b'), state.has('c')]).toEqual([true, false, true]);
  });

  it('keeps at most maxFilesPerSession read records, dropping the oldest', () => {
    const state = new ToolSessionState({ maxFilesPerSession: 2 });
    for (const path of ['/1', '/2', '/3']) state.recordRead('s', path, { mtimeMs: 1, size: 1, hash: 'h' });
    expect(state.lastRead('s', '/1')).toBeUndefined();
    expect(state.lastRead('s', '/3')).toBeDefined();
    state.release('s');
    expect(state.size).toBe(0);
  });
});

describe('requiredLiteral', () => {
  it.each([
    ['handle[A-Z][a-z]+_[0-9]{3}', '', 'handle'],
    ['foo|bar', '', undefined],
    ['(foo|bar)baz', '', 'baz'],
    ['colou?r', '', 'colo'],
    ['abcd*e', '', 'abc'],
    ['\\.then\\(', '', '.then('],
    ['TODO', 'i', undefined],
    ['a.b', '', undefined],
    ['function\\s+\\w+', '', 'function'],
  ])('%s (%s) → %s', (source, flags, expected) => {
    expect(requiredLiteral(source, flags)).toBe(expected);
  });
});
