import type { Message } from './message.js';

/**
 * One item of a session's timeline. `chat` entries wrap a provider message (`data`);
 * `event` entries are UI/diagnostic records (tool summaries, notices) that are never
 * sent to the model.
 */
export interface IHistoryEntry<T = unknown> {
  id: string;
  /** ISO-8601 time the entry was created. */
  timestamp: string;
  category: 'chat' | 'event';
  /** For chat entries the message role; for events a free event type such as `tool-summary`. */
  type: string;
  data: T;
}

/** A history entry that holds a message for the model. */
export type ChatHistoryEntry = IHistoryEntry<Message> & { category: 'chat' };

/** True for entries that hold a message (`category: 'chat'`). */
export function isChatEntry(entry: IHistoryEntry): entry is ChatHistoryEntry {
  return entry.category === 'chat';
}

/** The message held by a chat entry. */
export function chatEntryToMessage(entry: ChatHistoryEntry): Message {
  return entry.data;
}

/** The id and ISO-8601 timestamp to give a new history entry; the caller generates both. */
export interface MessageToHistoryEntryOptions {
  id: string;
  timestamp: string;
}

/** Wraps a message in a chat entry whose `type` is the message role. */
export function messageToHistoryEntry(message: Message, options: MessageToHistoryEntryOptions): ChatHistoryEntry {
  return { id: options.id, timestamp: options.timestamp, category: 'chat', type: message.role, data: message };
}

/** The messages of a timeline in order, events left out. */
export function getMessagesForAPI(entries: readonly IHistoryEntry[]): Message[] {
  const messages: Message[] = [];
  for (const entry of entries) if (isChatEntry(entry)) messages.push(entry.data);
  return messages;
}
