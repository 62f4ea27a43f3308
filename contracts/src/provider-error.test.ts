import { describe, expect, it } from 'vitest';
import { describeErrorWithCause, isStreamTermination } from './provider-error.js';

describe('isStreamTermination', () => {
  it('recognises undici body cut-offs and resets, nothing else', () => {
        const cut = Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    expect(isStreamTermination(cut)).toBe(true);
    expect(isStreamTermination(Object.assign(new Error('read'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isStreamTermination(new Error('bad request'))).toBe(false);
    expect(isStreamTermination('terminated')).toBe(false);
    expect(describeErrorWithCause(cut)).toBe('terminated: other side closed');
  });
});
