import { describe, expect, it } from 'vitest';
import { sessionFileName, sessionIdFromFileName } from './paths.js';

describe('sessionIdFromFileName', () => {
  const time = new Date('2025-06-02T14:31:05.123Z');

  it('returns the whole id after the time prefix, underscores included', () => {
    for (const id of ['abc', 'x_abc', 'a_b_c', 'c', '0b6c5b1e-8a55-4c2a-9d2e-1c7f0e7b2a11', 'v1.2_final']) {
      expect(sessionIdFromFileName(sessionFileName(id, time))).toBe(id);
      expect(sessionIdFromFileName(`/agent/sessions/--proj--/${sessionFileName(id, time)}`)).toBe(id);
    }
    expect(sessionFileName('x_abc', time)).toBe('2025-06-02T14-31-05-123Z_x_abc.jsonl');
  });

  it('is undefined for names that are not <time>_<id>.jsonl', () => {
    for (const name of ['x_abc.jsonl', 'notes_abc.jsonl', '2025-06-02_abc.jsonl', '2025-06-02T14-31-05-123Z_.jsonl', '2025-06-02T14-31-05-123Z_abc.json', '2025-06-02T14-31-05-123Z_.hidden.jsonl']) {
      expect(sessionIdFromFileName(name), name).toBeUndefined();
    }
  });
});
