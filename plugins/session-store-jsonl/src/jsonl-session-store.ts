import { join } from 'node:path';
import { assertValidSessionId, TesseraError, type ISessionRecord, type Message, type SessionStore } from '@tessera/contracts';
import { FileSessionStorage } from './file-session-storage.js';
import { defaultAgentDir, sessionDirFor } from './paths.js';
import { HISTORY_EVENT_TYPE, RECORD_META_TYPE, recordFromSession, recordMeta } from './record-mapping.js';
import { redactStrings, type RedactText } from './persist-transform.js';
import { toPiMessages } from './pi-messages.js';
import { SessionManager, type SessionManagerOptions } from './session-manager.js';
import type { SessionStorage } from './session-storage.js';

export type JsonlSessionStoreOptions = Omit<SessionManagerOptions, 'sessionDir'>;

/** What the store knows about one open session: which record messages are already entries. */
interface Tracked {
  manager: SessionManager;
  messages: Message[];
  messageEntryIds: string[];
  compacted: boolean;
  eventIds: Set<string>;
  metaJson: string | undefined;
  name: string | undefined;
}

/**
 * Equal as stored: compares the pi shapes the file holds, redacted when the store redacts
 * (a message loaded back from the file must equal the live one it was written from), so
 * conversion detail never forks history.
 */
function sameMessage(a: Message | undefined, b: Message | undefined, redact: RedactText | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const stored = (message: Message): string => JSON.stringify(redact ? redactStrings(toPiMessages(message, 0), redact) : toPiMessages(message, 0));
  return stored(a) === stored(b);
}

/**
 * The kernel's `SessionStore` port on top of the JSONL session tree. A save appends only
 * the messages the file does not have yet; when the record's history was rewritten (for
 * example by compaction), the new tail becomes a branch from the last common message, so
 * the old history stays in the file. Files live where `SessionManager` puts them.
 */
export class JsonlSessionStore implements SessionStore {
  readonly #options: JsonlSessionStoreOptions;
  readonly #storage: SessionStorage;
  readonly #agentDir: string;
  readonly #open = new Map<string, Tracked>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: JsonlSessionStoreOptions = {}) {
    this.#storage = options.storage ?? new FileSessionStorage();
    this.#agentDir = options.agentDir ?? defaultAgentDir();
    this.#options = { ...options, storage: this.#storage, agentDir: this.#agentDir };
  }

  save(record: ISessionRecord): Promise<void> {
    return this.#serial(async () => {
      if (typeof record.id !== 'string' || record.id === '') {
        throw new TesseraError('Cannot save a session record without an id.', { code: 'invalid_session_record', category: 'validation', recoverable: false, details: { field: 'id' } });
      }
      assertValidSessionId(record.id);
      const tracked = this.#open.get(record.id) ?? (await this.#openTracked(record.id)) ?? this.#create(record);
      this.#sync(tracked, record);
      await tracked.manager.flush();
    });
  }

  load(id: string): Promise<ISessionRecord | undefined> {
    return this.#serial(async () => {
      assertValidSessionId(id);
      const tracked = this.#open.get(id) ?? (await this.#openTracked(id));
      return tracked && recordFromSession(tracked.manager).record;
    });
  }

  /** Every stored session, fully loaded, newest `updatedAt` first. */
  list(): Promise<ISessionRecord[]> {
    return this.#serial(async () => {
      const records: ISessionRecord[] = [];
      for (const info of await SessionManager.listAll(this.#options)) {
        const tracked = this.#open.get(info.id) ?? (await this.#openTracked(info.id));
        if (tracked) records.push(recordFromSession(tracked.manager).record);
      }
      return records.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    });
  }

  delete(id: string): Promise<void> {
    return this.#serial(async () => {
      assertValidSessionId(id);
      const tracked = this.#open.get(id);
      this.#open.delete(id);
      await tracked?.manager.close();
      for (const file of this.#findFiles(id)) await this.#storage.unlink(file);
    });
  }

  /** Flushes and closes every open session file. */
  close(): Promise<void> {
    return this.#serial(async () => {
      const open = [...this.#open.values()];
      this.#open.clear();
      for (const tracked of open) await tracked.manager.close();
    });
  }

  #serial<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(operation, operation);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #findFiles(id: string): string[] {
    const root = join(this.#agentDir, 'sessions');
    const suffix = `_${id}.jsonl`;
    const files: string[] = [];
    for (const dir of this.#storage.listDirsSync(root)) {
      for (const name of this.#storage.listFilesSync(join(root, dir), '*.jsonl')) if (name.endsWith(suffix)) files.push(join(root, dir, name));
    }
    return files;
  }

  async #openTracked(id: string): Promise<Tracked | undefined> {
    const file = this.#findFiles(id)[0];
    if (!file) return undefined;
    const manager = await SessionManager.open(file, this.#options);
    const loaded = recordFromSession(manager);
    const tracked: Tracked = {
      manager,
      messages: loaded.record.messages,
      messageEntryIds: loaded.messageEntryIds,
      compacted: loaded.compacted,
      eventIds: loaded.eventIds,
      metaJson: loaded.metaJson,
      name: loaded.record.name,
    };
    this.#open.set(id, tracked);
    return tracked;
  }

  #create(record: ISessionRecord): Tracked {
    const manager = SessionManager.create(record.cwd, { ...this.#options, sessionDir: sessionDirFor(record.cwd, this.#agentDir) });
    manager.newSession({ id: record.id });
    const tracked: Tracked = { manager, messages: [], messageEntryIds: [], compacted: false, eventIds: new Set(), metaJson: undefined, name: undefined };
    this.#open.set(record.id, tracked);
    return tracked;
  }

  #sync(tracked: Tracked, record: ISessionRecord): void {
    const { manager } = tracked;
    let common = 0;
    const limit = Math.min(tracked.messages.length, record.messages.length);
    while (common < limit && sameMessage(tracked.messages[common], record.messages[common], this.#options.redact)) common += 1;
    if (common < tracked.messages.length) {
      // History was rewritten: continue from the last shared message (or a new root), never edit.
      const anchor = tracked.compacted ? undefined : tracked.messageEntryIds[common - 1];
      if (anchor === undefined) {
        manager.resetLeaf();
        common = 0;
      } else manager.branch(anchor);
      tracked.compacted = false;
      // Entries after the anchor are now off the path: record what is still on it.
      tracked.metaJson = undefined;
      tracked.eventIds = new Set();
      for (const entry of manager.getBranch()) {
        if (entry.type !== 'custom') continue;
        if (entry.customType === RECORD_META_TYPE) tracked.metaJson = JSON.stringify(entry.data);
        if (entry.customType === HISTORY_EVENT_TYPE) tracked.eventIds.add((entry.data as { id: string }).id);
      }
    }
    const metaJson = JSON.stringify(recordMeta(record));
    if (metaJson !== tracked.metaJson && metaJson !== '{}') {
      manager.appendCustomEntry(RECORD_META_TYPE, JSON.parse(metaJson));
      tracked.metaJson = metaJson;
    }

    const ids = tracked.messageEntryIds.slice(0, common);
    const now = Date.now();
    for (const message of record.messages.slice(common)) {
      let last = '';
      for (const stored of toPiMessages(message, now)) last = manager.appendMessage(stored as never);
      ids.push(last);
    }
    tracked.messages = [...record.messages];
    tracked.messageEntryIds = ids;

    for (const entry of record.history) {
      if (entry.category !== 'event' || tracked.eventIds.has(entry.id)) continue;
      manager.appendCustomEntry(HISTORY_EVENT_TYPE, entry);
      tracked.eventIds.add(entry.id);
    }
    if (record.name !== undefined && record.name !== tracked.name) {
      manager.setSessionName(record.name);
      tracked.name = record.name;
    }
  }
}
