import type { IHistoryEntry, ISessionRecord, Message, ToolSchema } from '@tessera/contracts';
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

/** Rebuilds a kernel record from the session's current branch. */
export function recordFromSession(manager: SessionManager): LoadedRecord {
  const header = manager.getHeader();
  const path = manager.getBranch();
  const context = manager.buildSessionContext();
  const messages: Message[] = [];
  const messageEntryIds: string[] = [];
  const history: IHistoryEntry[] = [];
  const eventIds = new Set<string>();
  let meta: RecordMeta | undefined;
  let metaJson: string | undefined;

  // Each stored message is converted once: the record's messages and its history share the
  // converted objects (neither pass mutates them; merges make new ones).
  const converted = new Map<AgentMessage, Message | undefined>();
  const convert = (message: AgentMessage): Message | undefined => {
    if (converted.has(message)) return converted.get(message);
    const kernel = toKernelMessage(message);
    converted.set(message, kernel);
    return kernel;
  };
  let compaction: SessionEntry | undefined;
  for (let index = path.length - 1; index >= 0; index -= 1) {
    if (path[index]!.type === 'compaction') {
      compaction = path[index];
      break;
    }
  }
  const byMessage = new Map<AgentMessage, SessionEntry>();
  for (const entry of path) if (entry.type === 'message') byMessage.set(entry.message, entry);
  for (const contextMessage of context.messages) {
    const message = convert(contextMessage);
    if (!message) continue;
    const entryId = byMessage.get(contextMessage)?.id ?? compaction?.id ?? '';
    // One kernel tool batch is stored as one toolResult entry per call: its id is the last one's.
    if (appendKernelMessage(messages, message, contextMessage.role === 'toolResult')) messageEntryIds[messageEntryIds.length - 1] = entryId;
    else messageEntryIds.push(entryId);
  }
  const included = new Set(context.messages);
  for (const entry of path) {
    if (entry.type === 'message' && included.has(entry.message)) {
      const message = convert(entry.message);
      const last = history[history.length - 1];
      if (message?.role === 'tool' && entry.message.role === 'toolResult' && last?.category === 'chat' && last.type === 'tool') {
        const batch = last.data as Message & { role: 'tool' };
        history[history.length - 1] = { ...last, data: { ...batch, content: [...batch.content, ...message.content] } };
      } else if (message) history.push({ id: entry.id, timestamp: entry.timestamp, category: 'chat', type: message.role, data: message });
    } else if (entry.type === 'custom' && entry.customType === HISTORY_EVENT_TYPE) {
      const event = entry.data as IHistoryEntry;
      history.push(event);
      eventIds.add(event.id);
    } else if (entry.type === 'custom' && entry.customType === RECORD_META_TYPE) {
      meta = entry.data as RecordMeta;
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
