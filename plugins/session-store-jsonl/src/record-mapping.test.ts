import { describe, expect, it } from 'vitest';
import { HISTORY_EVENT_TYPE, recordFromSession } from './record-mapping.js';
import { SessionManager } from './session-manager.js';

const user = (text: string) => ({ role: 'user', content: text, timestamp: 1 });
const assistant = (content: unknown[]) => ({ role: 'assistant', content, provider: 'p', model: 'm', stopReason: 'toolUse', timestamp: 2 });
const toolResult = (id: string, text: string) => ({ role: 'toolResult', toolCallId: id, toolName: 'bash', content: [{ type: 'text', text }], isError: false, timestamp: 3 });

describe('recordFromSession', () => {
  it('follows the context around a compaction: summary, kept entries, custom messages, tool batches, events', () => {
    const session = SessionManager.inMemory('/w', { terminalId: null });
    session.appendMessage(user('dropped'));
    session.appendMessage(assistant([{ type: 'text', text: 'dropped too' }]));
    const kept = session.appendMessage(user('kept'));
    const keptReply = session.appendMessage(assistant([{ type: 'text', text: 'kept reply' }]));
    const compaction = session.appendCompaction('the summary', kept, 1000);
    const note = session.appendCustomMessageEntry('note', 'a note', true);
    const call = session.appendMessage(assistant([{ type: 'toolCall', id: 'c1', name: 'bash', arguments: {} }, { type: 'toolCall', id: 'c2', name: 'bash', arguments: {} }]));
    const first = session.appendMessage(toolResult('c1', 'one'));
    session.appendCustomEntry(HISTORY_EVENT_TYPE, { id: 'ev1', timestamp: 't', category: 'event', type: 'notice', data: {} });
    const second = session.appendMessage(toolResult('c2', 'two'));

    const { record, messageEntryIds, compacted, eventIds } = recordFromSession(session);
    expect(compacted).toBe(true);
    expect(eventIds).toEqual(new Set(['ev1']));
    expect(record.messages.map((message) => [message.role, typeof message.content === 'string' ? message.content : message.content.length])).toEqual([
      ['user', '<summary>\nthe summary\n</summary>'],
      ['user', 'kept'],
      ['assistant', 1],
      ['user', 'a note'],
      ['assistant', 2],
      ['tool', 2],
    ]);
    expect(messageEntryIds).toEqual([compaction, kept, keptReply, compaction, call, second]);
    // History: the context (the summary and the custom message included, so a session resumed from
    // the history sees what the model saw), events in path order; the tool results before and
    // after the event stay separate entries there.
    expect(record.history.map((entry) => [entry.id, entry.type])).toEqual([
      [compaction, 'user'],
      [kept, 'user'],
      [keptReply, 'assistant'],
      [note, 'user'],
      [call, 'assistant'],
      [first, 'tool'],
      ['ev1', 'notice'],
      [second, 'tool'],
    ]);
    // Record messages and history share the converted objects.
    expect(record.history[2]?.data).toBe(record.messages[2]);
  });
});
