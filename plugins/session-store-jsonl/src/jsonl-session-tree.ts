import type { IHistoryEntry, ISessionRecord, Message, SessionTree, SessionTreeInfo, SessionTreeNode } from '@tessera/contracts';
import { compareText, assertValidSessionId, TesseraError } from '@tessera/contracts';
import { SessionEntryNotFoundError } from './errors.js';
import type { JsonlSessionStore, SessionSnapshot } from './jsonl-session-store.js';
import { persistLeaf } from './leaf-marker.js';
import { toPiMessages } from './pi-messages.js';
import { HISTORY_EVENT_TYPE } from './record-mapping.js';
import type { SessionManager } from './session-manager.js';
import { treeNodes } from './tree-view.js';

/**
 * `SessionTree` over a `JsonlSessionStore`: the same open sessions, the same queue, so a
 * tree operation and a live session's save never interleave. Every method checks the
 * session id (`InvalidSessionIdError`) before any path is built from it; an unknown session
 * throws `SessionNotFoundError`, an unknown entry `SessionEntryNotFoundError`.
 *
 * The leaf: the pi format stores none (a reader takes the last entry). `branch` therefore
 * appends a `custom` entry of type `tessera.leaf` under the branch point unless the file
 * already ends there; this store resumes at that entry's parent, pi and oh-my-pi at the
 * marker itself, which is on the same branch. New entries attach to the branch point.
 */
export class JsonlSessionTree implements SessionTree {
  constructor(readonly store: JsonlSessionStore) {}

  async list(options: { cwd?: string } = {}): Promise<SessionTreeInfo[]> {
    const infos = (await this.store.snapshots()).filter(({ header }) => options.cwd === undefined || header.cwd === options.cwd).map(sessionInfo);
    return infos.sort((a, b) => compareText(b.updatedAt, a.updatedAt));
  }

  async load(sessionId: string): Promise<ISessionRecord | undefined> {
    return this.store.load(sessionId);
  }

  tree(sessionId: string): Promise<SessionTreeNode[]> {
    return this.store.withSession(sessionId, (manager) => treeNodes(manager.getTree()));
  }

  leaf(sessionId: string): Promise<string | null> {
    return this.store.withSession(sessionId, (manager) => manager.getLeafId());
  }

  branch(sessionId: string, entryId: string): Promise<void> {
    return this.store.withSession(
      sessionId,
      (manager) => {
        requireEntry(manager, sessionId, entryId);
        persistLeaf(manager, entryId);
      },
      { write: true },
    );
  }

  async append(sessionId: string, entries: readonly IHistoryEntry[]): Promise<string[]> {
    assertValidSessionId(sessionId);
    entries.forEach(checkHistoryEntry);
    return this.store.withSession(
      sessionId,
      (manager) => {
        const now = Date.now();
        return entries.map((entry) => {
          if (entry.category === 'event') return manager.appendCustomEntry(HISTORY_EVENT_TYPE, entry);
          // A tool batch becomes one toolResult entry per call; the last one stands for the batch.
          let last = '';
          for (const stored of toPiMessages(entry.data as Message, now)) last = manager.appendMessage(stored as never);
          return last;
        });
      },
      { write: true },
    );
  }

  setLabel(sessionId: string, entryId: string, label: string | undefined): Promise<void> {
    return this.store.withSession(
      sessionId,
      (manager) => {
        requireEntry(manager, sessionId, entryId);
        manager.appendLabelChange(entryId, label);
      },
      { write: true },
    );
  }

  fork(sessionId: string, entryId: string, options: { newSessionId?: string; name?: string } = {}): Promise<string> {
    return this.store.fork(sessionId, entryId, options);
  }
}

function requireEntry(manager: SessionManager, sessionId: string, entryId: string): void {
  if (manager.getEntry(entryId) === undefined) throw new SessionEntryNotFoundError(entryId, sessionId);
}

function checkHistoryEntry(entry: IHistoryEntry, index: number): void {
  const chat = entry?.category === 'chat' && typeof (entry.data as { role?: unknown } | undefined)?.role === 'string';
  if (chat || (entry?.category === 'event' && typeof entry.id === 'string')) return;
  throw new TesseraError(`History entry ${index} cannot be appended: expected a chat entry with a message in "data", or an event entry with an "id".`, {
    code: 'invalid_history_entry',
    category: 'validation',
    recoverable: false,
    details: { field: `entries[${index}]` },
  });
}

/** Listing facts from every entry, all branches: the newest entry time, the message count, the name. */
function sessionInfo({ header, entries }: SessionSnapshot): SessionTreeInfo {
  let updatedAt = header.timestamp;
  let messageCount = 0;
  let infoName: string | undefined;
  for (const entry of entries) {
    if (entry.timestamp > updatedAt) updatedAt = entry.timestamp;
    if (entry.type === 'message') messageCount += 1;
    const name = (entry as { type: string; name?: unknown }).type === 'session_info' ? (entry as { name?: unknown }).name : undefined;
    if (typeof name === 'string') infoName = name;
  }
  const name = header.title ?? infoName;
  return { id: header.id, cwd: header.cwd, ...(name === undefined ? {} : { name }), createdAt: header.timestamp, updatedAt, messageCount };
}
