import { describe, expect, it } from 'vitest';
import { chatEntryToMessage, getMessagesForAPI, isChatEntry, messageToHistoryEntry, type IHistoryEntry } from './history.js';
import { createAbortError, isAbortError, TesseraError } from './errors.js';
import { messageText, toolUses, type Message } from './message.js';
import { createToken, tokenName } from './token.js';

describe('history entries', () => {
  it('round-trips messages and filters events out for the API', () => {
    const user: Message = { role: 'user', content: 'hi' };
    const entry = messageToHistoryEntry(user, { id: '1', timestamp: 't' });
    const event: IHistoryEntry = { id: '2', timestamp: 't', category: 'event', type: 'tool-summary', data: {} };
    expect(isChatEntry(entry)).toBe(true);
    expect(isChatEntry(event)).toBe(false);
    expect(chatEntryToMessage(entry)).toBe(user);
    expect(getMessagesForAPI([entry, event])).toEqual([user]);
  });
});

describe('message helpers', () => {
  it('joins text blocks and lists tool calls', () => {
    const reply: Message = {
      role: 'assistant',
      state: 'complete',
      content: [
        { type: 'thinking', thinking: 'x' },
        { type: 'text', text: 'a' },
        { type: 'tool_use', id: '1', name: 'Read', input: {} },
        { type: 'text', text: 'b' },
      ],
    };
    expect(messageText(reply)).toBe('ab');
    expect(toolUses(reply).map((call) => call.name)).toEqual(['Read']);
    expect(toolUses({ role: 'user', content: 'x' })).toEqual([]);
  });
});

describe('errors and tokens', () => {
  it('carries code, category and recoverable', () => {
    const error = new TesseraError('bad', { code: 'c', category: 'validation', recoverable: true, details: { file: 'a.json' } });
    expect(error.toJSON()).toEqual({ name: 'TesseraError', code: 'c', category: 'validation', recoverable: true, message: 'bad', details: { file: 'a.json' } });
    expect(isAbortError(createAbortError())).toBe(true);
    expect(isAbortError(error)).toBe(false);
  });

  it('makes registered symbols that agree across copies', () => {
    expect(createToken('Provider')).toBe(Symbol.for('tessera/Provider'));
    expect(tokenName(createToken('SessionStore'))).toBe('SessionStore');
  });
});
