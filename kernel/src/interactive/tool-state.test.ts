import { describe, expect, it } from 'vitest';
import { finishedToolState, todosOf } from './tool-state.js';

const running = { toolCallId: 't1', toolName: 'TodoWrite', firstArg: '', isRunning: true };

describe('tool states of TodoWrite calls', () => {
  it('carry the list the call left, checked and bounded', () => {
    const data = { todos: [{ content: 'Fix it', status: 'in_progress', activeForm: 'Fixing it' }, { content: 'Ship', status: 'pending' }, { content: 7, status: 'pending' }, { content: 'x', status: 'doing' }] };
    const state = finishedToolState(running, { success: true, data, input: data });
    expect(state.todos).toEqual([{ content: 'Fix it', status: 'in_progress', activeForm: 'Fixing it' }, { content: 'Ship', status: 'pending' }]);
    expect(todosOf({ todos: Array.from({ length: 150 }, (_, index) => ({ content: `item ${index}`, status: 'pending' })) })).toHaveLength(100);
    expect(todosOf({ todos: [{ content: `${'a'.repeat(300)}\nsecond line`, status: 'pending' }] })![0]!.content).toHaveLength(200);
  });

  it('carry no list for a failed call or another tool', () => {
    const data = { todos: [{ content: 'Fix it', status: 'pending' }] };
    expect(finishedToolState(running, { success: false, errorCode: 'invalid_input', data, input: data }).todos).toBeUndefined();
    expect(finishedToolState({ ...running, toolName: 'Other' }, { success: true, data, input: data }).todos).toBeUndefined();
  });
});
