import { describe, expect, it } from 'vitest';
import { cloneTaskState, initialTaskState } from './task-state.js';
import type { IBackgroundTaskState } from './types.js';

describe('cloneTaskState', () => {
  const full = (): IBackgroundTaskState => ({
    ...initialTaskState('bg_clone_1', { kind: 'process', command: 'true', cwd: '/tmp' }, 0, {}, 1_000),
    status: 'failed',
    error: { code: 'x', category: 'runner', recoverable: false, message: 'boom' },
    metadata: { owner: 'a', tries: 1 },
    resultMetadata: { bytes: 10 },
  });

  it('copies every field, nested ones included', () => {
    const state = full();
    expect(cloneTaskState(state)).toEqual(state);
    expect(JSON.stringify(cloneTaskState(state))).toBe(JSON.stringify(state));
  });

  it('shares nothing mutable with the original (what structuredClone gave the BullMQ store)', () => {
    const state = full();
    const copy = cloneTaskState(state);
    copy.metadata.owner = 'b';
    copy.error!.message = 'changed';
    copy.resultMetadata!.bytes = 99;
    copy.status = 'completed';
    expect(state).toEqual(full());
    expect(copy.metadata).not.toBe(state.metadata);
    expect(copy.error).not.toBe(state.error);
    expect(copy.resultMetadata).not.toBe(state.resultMetadata);
  });
});
