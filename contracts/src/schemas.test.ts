import { describe, expect, it } from 'vitest';
import { messageSchema, sessionRecordSchema } from './schemas.js';

describe('schemas', () => {
  it('accepts every message role and names the bad field otherwise', () => {
    for (const message of [
      { role: 'system', content: 's' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', state: 'complete', content: [{ type: 'tool_use', id: '1', name: 'Read', input: {} }] },
      { role: 'tool', content: [{ type: 'tool_result', toolUseId: '1', toolName: 'Read', content: 'x', isError: false }] },
    ]) {
      expect(messageSchema.safeParse(message).success).toBe(true);
    }
    const bad = messageSchema.safeParse({ role: 'assistant', state: 'done', content: [] });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(['state']);
  });

  it('keeps unknown extension fields of a session record', () => {
    const record = { id: 'a', cwd: '/', createdAt: 't', updatedAt: 't', messages: [], history: [], backgroundTasks: [1] };
    expect(sessionRecordSchema.parse(record)).toEqual(record);
  });
});
