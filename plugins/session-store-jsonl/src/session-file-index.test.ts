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
