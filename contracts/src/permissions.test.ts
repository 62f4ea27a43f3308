import { describe, expect, it } from 'vitest';
import { compareText } from './message.js';
import { isApproved, parsePermissionMode, PERMISSION_MODES } from './permissions.js';

describe('permission modes and approval answers', () => {
  it('parsePermissionMode takes every mode, reads `manual` as `default`, refuses the rest', () => {
    for (const mode of PERMISSION_MODES) expect(parsePermissionMode(mode)).toBe(mode);
    expect(parsePermissionMode('manual')).toBe('default');
    expect(parsePermissionMode('auto')).toBeUndefined();
    expect(parsePermissionMode(3)).toBeUndefined();
  });

  it('isApproved: true, allow-session and allow verdicts run the call; everything else refuses it', () => {
    expect([true, 'allow-session', { behavior: 'allow' }, { behavior: 'allow', updatedInput: {} }].map((answer) => isApproved(answer as never))).toEqual([true, true, true, true]);
    expect([false, { behavior: 'deny', message: 'no' }].map((answer) => isApproved(answer as never))).toEqual([false, false]);
  });
});

describe('compareText', () => {
  it('orders by code units, as the default sort does', () => {
    const words = ['b', 'B', 'a', '2026-11-27T06:00:00.000Z', '2026-11-26T23:00:00.000Z', 'ä'];
    expect([...words].sort(compareText)).toEqual([...words].sort());
  });
});
