import { describe, expect, it } from 'vitest';
import { copyWith } from './objects.js';

describe('copyWith', () => {
  it('gives what the spread form gives: same keys, same order, fields win', () => {
    const source = { type: 'message', id: 'old', message: { role: 'user' } };
    const copy = copyWith(source, { id: 'new', parentId: null, timestamp: 't' });
    expect(copy).toEqual({ ...source, id: 'new', parentId: null, timestamp: 't' });
    expect(Object.keys(copy)).toEqual(['type', 'id', 'message', 'parentId', 'timestamp']);
    expect(JSON.stringify(copy)).toBe(JSON.stringify({ ...source, id: 'new', parentId: null, timestamp: 't' }));
    expect(copy).not.toBe(source);
    expect(source.id).toBe('old');
  });

  it('keeps a parsed own __proto__ key as data and never changes the prototype', () => {
    const parsed = JSON.parse('{"type":"custom","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const copy = copyWith(parsed, { id: 'a' }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(copy.polluted).toBeUndefined();
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(JSON.stringify(copy)).toBe('{"type":"custom","__proto__":{"polluted":true},"id":"a"}');
  });

  it('copies symbol keys as the spread does', () => {
    const key = Symbol('k');
    const copy = copyWith({ [key]: 1, a: 1 }, { b: 2 });
    expect(copy[key]).toBe(1);
  });
});
