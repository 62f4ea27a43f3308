import type { IHistoryEntry, ISessionRecord, Message, SessionRecordChange } from '@tessera/contracts';
import { redactStrings, type RedactText } from './persist-transform.js';
import { toPiMessages } from './pi-messages.js';
import { HISTORY_EVENT_TYPE, RECORD_META_TYPE, hasRecordExtensions, recordFromSession, recordMeta } from './record-mapping.js';
import type { SessionManager } from './session-manager.js';

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
 * One open session of a `JsonlSessionStore`: its `SessionManager` and what of the kernel
 * record is already on the current branch, so a save writes only what is new.
 *
 * Two ways to save. With a `SessionRecordChange` that continues exactly where the last save
 * (or load) ended, the new history entries are appended as they are, in order, without
 * looking at the rest of the record. Otherwise (no change, `rewritten`, or a change that
 * does not line up) the record's messages are compared with the branch, and a changed
 * history continues from the last shared message, so the old one stays in the file.
 */
export class TrackedSession {
  messages: Message[] = [];
  /** Entry id behind each of `messages`. */
  messageEntryIds: string[] = [];
  /** The branch was built from a pi compaction: `messages` are not a plain prefix of it. */
  compacted = false;
  eventIds = new Set<string>();
  metaJson: string | undefined;
  name: string | undefined;
  /** How many history entries the branch holds for the session, and the last one's id. */
  historyLength = 0;
  lastHistoryId: string | undefined;

  constructor(
    readonly manager: SessionManager,
    private readonly redact: RedactText | undefined,
  ) {}

  /** Re-reads the current branch (after a load or a change made through `SessionTree`); returns it as a record. */
  refresh(): ISessionRecord {
    const loaded = recordFromSession(this.manager);
    // A copy: saves push onto it, and the record may be handed out.
    this.messages = loaded.record.messages.slice();
    this.messageEntryIds = loaded.messageEntryIds;
    this.compacted = loaded.compacted;
    this.eventIds = loaded.eventIds;
    this.metaJson = loaded.metaJson;
    this.name = loaded.record.name;
    this.#settle(loaded.record.history);
    return loaded.record;
  }

  /** Brings the branch up to `record` (in memory; the caller flushes). */
  save(record: ISessionRecord, change: SessionRecordChange | undefined): void {
    const fast = change !== undefined && !change.rewritten && this.#continues(record, change.appendedFrom);
    if (!fast) this.#rebase(record);
    this.#writeMeta(record);
    if (fast) this.#appendHistory(record.history, change.appendedFrom);
    else this.#appendMissing(record);
    if (record.name !== undefined && record.name !== this.name) {
      this.manager.setSessionName(record.name);
      this.name = record.name;
    }
    this.#settle(record.history);
  }

  /**
   * The change starts right after what this store holds for the session: same length, same
   * last entry, no pi compaction in the way, and its chat entries are the record's new
   * messages. Anything else (another writer, a first save with another history, a failed
   * save the session will retry) goes the comparing way.
   */
  #continues(record: ISessionRecord, appendedFrom: number): boolean {
    if (this.compacted || appendedFrom !== this.historyLength || appendedFrom > record.history.length) return false;
    if (appendedFrom > 0 && record.history[appendedFrom - 1]?.id !== this.lastHistoryId) return false;
    let chat = 0;
    for (let index = appendedFrom; index < record.history.length; index += 1) if (record.history[index]?.category === 'chat') chat += 1;
    return this.messages.length + chat === record.messages.length;
  }

  #appendHistory(history: readonly IHistoryEntry[], from: number): void {
    const now = Date.now();
    for (let index = from; index < history.length; index += 1) {
      const entry = history[index] as IHistoryEntry;
      if (entry.category === 'chat') this.#appendMessage(entry.data as Message, now);
      else this.#appendEvent(entry);
    }
  }

  /** Moves the leaf back to the last message the record still shares with the branch. */
  #rebase(record: ISessionRecord): void {
    const { manager } = this;
    let common = 0;
    const limit = Math.min(this.messages.length, record.messages.length);
    while (common < limit && sameMessage(this.messages[common], record.messages[common], this.redact)) common += 1;
    if (common === this.messages.length) return;
    // History was rewritten: continue from the last shared message (or a new root), never edit.
    const anchor = this.compacted ? undefined : this.messageEntryIds[common - 1];
    if (anchor === undefined) {
      manager.resetLeaf();
      common = 0;
    } else manager.branch(anchor);
    this.compacted = false;
    this.messages = this.messages.slice(0, common);
    this.messageEntryIds = this.messageEntryIds.slice(0, common);
    // Entries after the anchor are now off the path: record what is still on it.
    this.metaJson = undefined;
    this.eventIds = new Set();
    for (const entry of manager.getBranch()) {
      if (entry.type !== 'custom') continue;
      if (entry.customType === RECORD_META_TYPE) this.metaJson = JSON.stringify(entry.data);
      if (entry.customType === HISTORY_EVENT_TYPE) this.eventIds.add((entry.data as { id: string }).id);
    }
  }

  /** After `#rebase`: the record's messages past the shared prefix, then events not yet on the branch. */
  #appendMissing(record: ISessionRecord): void {
    const now = Date.now();
    for (const message of record.messages.slice(this.messages.length)) this.#appendMessage(message, now);
    for (const entry of record.history) if (entry.category === 'event') this.#appendEvent(entry);
  }

  #appendMessage(message: Message, now: number): void {
    let last = '';
    for (const stored of toPiMessages(message, now)) last = this.manager.appendMessage(stored as never);
    this.messages.push(message);
    this.messageEntryIds.push(last);
  }

  #appendEvent(entry: IHistoryEntry): void {
    if (this.eventIds.has(entry.id)) return;
    this.manager.appendCustomEntry(HISTORY_EVENT_TYPE, entry);
    this.eventIds.add(entry.id);
  }

  /** What the last `#writeMeta` compared: the same prompt string and schema objects need no new comparison. */
  #metaSeen: { metaJson: string | undefined; systemPrompt: string | undefined; toolSchemas: readonly unknown[] | undefined } | undefined;

  #writeMeta(record: ISessionRecord): void {
    // A session saves the same prompt and the same schema objects turn after turn (`toRecord`
    // copies the array, not its items): then nothing changed, without serialising them again.
    // Unknown record fields are rare; with any, the comparison is made as before.
    const seen = this.#metaSeen;
    if (seen !== undefined && seen.metaJson === this.metaJson && seen.systemPrompt === record.systemPrompt && sameItems(seen.toolSchemas, record.toolSchemas) && !hasRecordExtensions(record)) return;
    const metaJson = JSON.stringify(recordMeta(record));
    this.#metaSeen = { metaJson: undefined, systemPrompt: record.systemPrompt, toolSchemas: record.toolSchemas === undefined ? undefined : [...record.toolSchemas] };
    if (metaJson === this.metaJson || metaJson === '{}') {
      this.#metaSeen.metaJson = this.metaJson;
      return;
    }
    this.manager.appendCustomEntry(RECORD_META_TYPE, JSON.parse(metaJson));
    this.metaJson = metaJson;
    this.#metaSeen.metaJson = metaJson;
  }

  #settle(history: readonly IHistoryEntry[]): void {
    this.historyLength = history.length;
    this.lastHistoryId = history[history.length - 1]?.id;
  }
}

/** The same items (by identity) in the same order; both absent counts as the same. */
function sameItems(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}
