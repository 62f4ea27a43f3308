import type { IHistoryEntry, ISessionRecord, Message, ToolSchema } from '@tessera/contracts';
import { copyWith } from '@tessera/contracts';
import { contextMessageOf, contextSpan, createCompactionSummaryMessage } from './context.js';
import type { AgentMessage, SessionEntry } from './entries.js';
import { appendKernelMessage, fromPiMessage } from './pi-messages.js';
import type { SessionManager } from './session-manager.js';

/** `custom` entry holding the record fields that have no entry type of their own. */
export const RECORD_META_TYPE = 'tessera.session-record';
/** `custom` entry holding one non-chat history entry (tool summaries, notices). */
export const HISTORY_EVENT_TYPE = 'tessera.history-event';

const KNOWN_FIELDS = new Set(['id', 'cwd', 'name', 'createdAt', 'updatedAt', 'messages', 'history', 'systemPrompt', 'toolSchemas']);

export interface RecordMeta {
  systemPrompt?: string;
  toolSchemas?: ToolSchema[];
  /** Unknown record fields, kept as the contract requires. */
  extensions?: Record<string, unknown>;
}

/** The record has a field of its own beside the standard ones (kept in the meta entry's `extensions`). */
export function hasRecordExtensions(record: ISessionRecord): boolean {
  for (const key in record) if (!KNOWN_FIELDS.has(key) && record[key] !== undefined) return true;
  return false;
}

export function recordMeta(record: ISessionRecord): RecordMeta {
  const extensions: Record<string, unknown> = {};
  for (const key of Object.keys(record)) if (!KNOWN_FIELDS.has(key) && record[key] !== undefined) extensions[key] = record[key];
  const meta: RecordMeta = {};
  if (record.systemPrompt !== undefined) meta.systemPrompt = record.systemPrompt;
  if (record.toolSchemas !== undefined) meta.toolSchemas = record.toolSchemas;
  if (Object.keys(extensions).length > 0) meta.extensions = extensions;
  return meta;
}

/** Context messages as kernel messages (see pi-messages.ts for the shapes). */
export function toKernelMessage(message: AgentMessage): Message | undefined {
  return fromPiMessage(message);
}

export interface LoadedRecord {
  record: ISessionRecord;
  /** Entry id behind each record message (a compaction's id for its summary). */
  messageEntryIds: string[];
  /** The context was built from a compaction, so the path is not a plain message prefix. */
  compacted: boolean;
  eventIds: Set<string>;
  metaJson: string | undefined;
}

/**
 * Rebuilds a kernel record from the session's current branch, in one pass over the
 * root→leaf path. The record's messages are the kernel form of what `buildSessionContext`
 * gives (the compaction summary first, then the context entries in path order); its history
 * holds the same converted objects for the chat entries, plus the stored events.
 */
export function recordFromSession(manager: SessionManager): LoadedRecord {
  const header = manager.getHeader();
  const path = manager.getBranch();
  const { compactionIndex, keptFrom } = contextSpan(path);
  const messages: Message[] = [];
  const messageEntryIds: string[] = [];
  const history: IHistoryEntry[] = [];
  const eventIds = new Set<string>();
  let meta: RecordMeta | undefined;
  let metaJson: string | undefined;

  const compaction = compactionIndex === -1 ? undefined : (path[compactionIndex] as Extract<SessionEntry, { type: 'compaction' }>);
  // Context messages without an entry of their own (summaries, custom messages) carry this id.
  const fallbackId = compaction?.id ?? '';
  const addMessage = (message: Message, entryId: string, fromToolResult: boolean): void => {
    // One kernel tool batch is stored as one toolResult entry per call: its id is the last one's.
    if (appendKernelMessage(messages, message, fromToolResult)) messageEntryIds[messageEntryIds.length - 1] = entryId;
    else messageEntryIds.push(entryId);
  };
  if (compaction) {
    const summary = toKernelMessage(createCompactionSummaryMessage(compaction.summary, compaction.tokensBefore, compaction.timestamp));
    if (summary) {
      addMessage(summary, fallbackId, false);
      // The history holds the context too: a resumed session (built from the history) must see the summary.
      history.push({ id: compaction.id, timestamp: compaction.timestamp, category: 'chat', type: summary.role, data: summary });
    }
  }
  for (let position = 0; position < path.length; position += 1) {
    const entry = path[position] as SessionEntry;
    const inContext = compactionIndex === -1 || position > compactionIndex || (position >= keptFrom && position < compactionIndex);
    if (entry.type === 'message') {
      if (!inContext) continue;
      // Converted once: the record's messages and its history share the object (neither
      // pass mutates it; merges make new ones).
      const message = fromPiMessage(entry.message);
      if (!message) continue;
      // The common case (not a tool result) inline: this loop runs once per stored message.
      if (entry.message.role !== 'toolResult') {
        messages.push(message);
        messageEntryIds.push(entry.id);
        history.push({ id: entry.id, timestamp: entry.timestamp, category: 'chat', type: message.role, data: message });
        continue;
      }
      addMessage(message, entry.id, true);
      const last = history[history.length - 1];
      if (message.role === 'tool' && last?.category === 'chat' && last.type === 'tool') {
        const batch = last.data as Message & { role: 'tool' };
        // copyWith: a spread copy gets new properties slowly on Node 20 (docs/adr/0003).
        history[history.length - 1] = copyWith(last, { data: copyWith(batch, { content: [...batch.content, ...message.content] }) });
      } else history.push({ id: entry.id, timestamp: entry.timestamp, category: 'chat', type: message.role, data: message });
    } else if (entry.type === 'custom') {
      if (entry.customType === HISTORY_EVENT_TYPE) {
        const event = entry.data as IHistoryEntry;
        history.push(event);
        eventIds.add(event.id);
      } else if (entry.customType === RECORD_META_TYPE) {
        meta = entry.data as RecordMeta;
      }
    } else if (inContext && position !== compactionIndex) {
      const contextMessage = contextMessageOf(entry);
      const message = contextMessage && toKernelMessage(contextMessage);
      if (message) {
        addMessage(message, fallbackId, false);
        // Branch summaries and custom messages are context: the history carries them as well.
        history.push({ id: entry.id, timestamp: entry.timestamp, category: 'chat', type: message.role, data: message });
      }
    }
  }
  if (meta) metaJson = JSON.stringify(meta);
  const last = path[path.length - 1];
  const record: ISessionRecord = {
    ...(meta?.extensions ?? {}),
    id: header.id,
    cwd: header.cwd,
    createdAt: header.timestamp,
    updatedAt: last?.timestamp ?? header.timestamp,
    messages,
    history,
  };
  const name = manager.getSessionName();
  if (name !== undefined) record.name = name;
  if (meta?.systemPrompt !== undefined) record.systemPrompt = meta.systemPrompt;
  if (meta?.toolSchemas !== undefined) record.toolSchemas = meta.toolSchemas;
  return { record, messageEntryIds, compacted: compaction !== undefined, eventIds, metaJson };
}
