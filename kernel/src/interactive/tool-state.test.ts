import { describe, expect, it } from 'vitest';
import { editDiffLines, finishedToolState, todosOf } from './tool-state.js';

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

describe('Edit diff lines', () => {
  it("from the Edit arguments, placed at the tool's startLine, when the tool gave no patch", () => {
    const lines = editDiffLines({ file_path: '/p/a.ts', old_string: 'let a = 1;\nlet b = 2;', new_string: 'const a = 1;' }, { startLine: 12 });
    expect(lines).toEqual([
      { type: 'hunk', text: '@@ -12,2 +12,1 @@' },
      { type: 'remove', text: 'let a = 1;', oldLine: 12 },
      { type: 'remove', text: 'let b = 2;', oldLine: 13 },
      { type: 'add', text: 'const a = 1;', newLine: 12 },
    ]);
    // No start line reported: line 1. An insertion into an empty string has no removed lines.
    expect(editDiffLines({ old_string: '', new_string: 'x' }, undefined)).toEqual([{ type: 'hunk', text: '@@ -1,0 +1,1 @@' }, { type: 'add', text: 'x', newLine: 1 }]);
    expect(editDiffLines({ old_string: 1 }, {})).toBeUndefined();
  });

  it('from a structured patch, with context lines and exact hunk counts', () => {
    const lines = editDiffLines({}, { structuredPatch: [{ oldStart: 3, newStart: 3, lines: [' keep', '-old', '+new', '+more'] }] });
    expect(lines).toEqual([
      { type: 'hunk', text: '@@ -3,2 +3,3 @@' },
      { type: 'context', text: 'keep', oldLine: 3, newLine: 3 },
      { type: 'remove', text: 'old', oldLine: 4 },
      { type: 'add', text: 'new', newLine: 4 },
      { type: 'add', text: 'more', newLine: 5 },
    ]);
  });
});
