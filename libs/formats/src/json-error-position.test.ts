import { describe, expect, it } from 'vitest';
import { findJsonSyntaxError } from './json-error-position.js';
import { parseJsonText } from './read-text.js';

describe('findJsonSyntaxError', () => {
  it.each([
    ['{"a": [1,],}', 9, 'trailing comma'],
    ['{\n  "a": 1,\n}', 12, 'property name'],
    ['{"a" 1}', 5, "':'"],
    ['{"a": tru}', 6, 'expected a value'],
    ['{"a": "x\ny"}', 8, 'line break'],
    ['[1 2]', 3, "',' or ']'"],
    ['{"a": 1', 7, "',' or '}'"],
    ['{} x', 3, 'after the end'],
    ['"\\q"', 1, 'escape'],
    ['', 0, 'expected a value'],
  ])('%j fails at %i (%s)', (text, offset, reason) => {
    const error = findJsonSyntaxError(text);
    expect(error?.offset).toBe(offset);
    expect(error?.reason).toContain(reason);
  });

  it.each(['{}', '[]', '{"a":[1,-2.5e3,true,false,null,"\\u00e9\\n"]}', ' \t\n{"nested":{"x":[{}]}}\n'])('accepts %j', (text) => {
    expect(findJsonSyntaxError(text)).toBeUndefined();
    expect(() => JSON.parse(text)).not.toThrow();
  });

  it('locates errors by line and column in parseJsonText, tabs counting as one column', () => {
    const result = parseJsonText('{\n\t"a": 1,\n\t"b": [1,]\n}', '/x.json');
    expect(result).toMatchObject({ ok: false, diagnostic: { file: '/x.json', line: 3, column: 10 } });
  });
});
