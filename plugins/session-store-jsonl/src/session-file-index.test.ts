import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionFileIndex } from './session-file-index.js';

const root = join('/agent', 'sessions');
const id = '0b6e4c1e-6a51-4c39-9b0e-3f0b1f5d2a77';

describe('SessionFileIndex', () => {
  it('gives back the paths it was given: one file, several files, and files outside the usual layout', () => {
    const index = new SessionFileIndex(root);
    const first = join(root, '--work-a--', `2026-11-27T11-54-25-123Z_${id}.jsonl`);
    const second = join(root, '--work-b--', `2026-11-28T01-02-03-004Z_${id}.jsonl`);
    const elsewhere = join('/other', `2026-11-27T11-54-25-123Z_${id}.jsonl`);
    index.add(id, first);
    expect(index.files(id)).toEqual([first]);
    index.add(id, first);
    index.add(id, second);
    index.add(id, elsewhere);
    expect(index.files(id)).toEqual([first, second, elsewhere]);
    const odd = join(root, '--work-a--', 'x_y.jsonl');
    index.add('y', odd);
    expect(index.files('y')).toEqual([odd]);
    const sixDigitYear = join(root, '--work-a--', `+012026-01-01T00-00-00-000Z_x_${id}.jsonl`);
    index.add(`x_${id}`, sixDigitYear);
    expect(index.files(`x_${id}`)).toEqual([sixDigitYear]);
    expect(index.files('missing')).toEqual([]);
    index.delete(id);
    expect(index.files(id)).toEqual([]);
    expect(index.size).toBe(2);
  });
});

describe('SessionFileIndex packed table', () => {
  const folders = ['--work-a--', '--work-b--', '--srv-project--'];
  /** A deterministic UUID from a counter (the hash must still spread them). */
  const uuid = (n: number): string => {
    const hex = (n * 2654435761 >>> 0).toString(16).padStart(8, '0') + n.toString(16).padStart(24, '0');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };
  const fileOf = (n: number, id: string): string => join(root, folders[n % folders.length]!, `${new Date(Date.UTC(2026, 0, 1) + n * 1001).toISOString().replace(/[:.]/g, '-')}_${id}.jsonl`);

  it('agrees with a plain map through thousands of adds and deletes (growth, probe runs, removals inside runs)', () => {
    const index = new SessionFileIndex(root);
    const expected = new Map<string, string>();
    let seed = 7;
    const random = (limit: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % limit;
    };
    for (let step = 0; step < 20_000; step += 1) {
      const n = random(3000);
      const id = uuid(n);
      if (random(3) === 0) {
        index.delete(id);
        expected.delete(id);
      } else {
        index.add(id, fileOf(n, id));
        expected.set(id, fileOf(n, id));
      }
      if (step % 997 === 0) expect(index.size).toBe(expected.size);
    }
    expect(index.size).toBe(expected.size);
    for (let n = 0; n < 3000; n += 1) {
      const id = uuid(n);
      const file = expected.get(id);
      expect(index.files(id)).toEqual(file === undefined ? [] : [file]);
    }
    for (const id of expected.keys()) index.delete(id);
    expect(index.size).toBe(0);
    expect(index.files(uuid(1))).toEqual([]);
  });

  it('keeps ids and names it cannot pack as they were: uppercase ids, other time shapes, a second file for a packed id', () => {
    const index = new SessionFileIndex(root);
    const upper = id.toUpperCase();
    const upperFile = join(root, '--work-a--', `2026-11-27T11-54-25-123Z_${upper}.jsonl`);
    index.add(upper, upperFile);
    const oddTime = join(root, '--work-a--', `2026-11-27T11-54-25Z_${id}.jsonl`);
    index.add(id, oddTime);
    expect(index.files(upper)).toEqual([upperFile]);
    expect(index.files(id)).toEqual([oddTime]);
    // Packed first, then a second file moves both to the string side, in order.
    const other = uuid(42);
    const packed = fileOf(42, other);
    const second = join(root, '--work-b--', `2026-12-01T00-00-00-000Z_${other}.jsonl`);
    index.add(other, packed);
    expect(index.files(other)).toEqual([packed]);
    index.add(other, second);
    index.add(other, packed);
    expect(index.files(other)).toEqual([packed, second]);
    expect(index.size).toBe(3);
    index.delete(other);
    expect(index.files(other)).toEqual([]);
    // An impossible date that parses to another instant is not packed (it would come back changed).
    const rolled = join(root, '--work-a--', `2026-02-30T00-00-00-000Z_${other}.jsonl`);
    index.add(other, rolled);
    expect(index.files(other)).toEqual([rolled]);
  });
});
