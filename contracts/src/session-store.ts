import type { IHistoryEntry } from './history.js';
import type { Message } from './message.js';
import { createToken } from './token.js';
import type { ToolSchema } from './tool.js';

/** A persisted session (spec: ISessionRecord). Unknown fields are kept by stores. */
export interface ISessionRecord {
  id: string;
  cwd: string;
  name?: string;
  createdAt: string;
  updatedAt: string;
  messages: Message[];
  history: IHistoryEntry[];
  systemPrompt?: string;
  toolSchemas?: ToolSchema[];
  [extension: string]: unknown;
}

/**
 * What changed since the same session's last successful save, so a store can append instead
 * of comparing whole records. `history` entries from `appendedFrom` on are new; `rewritten`
 * means history was replaced since (a compaction or a clear) and the whole record counts.
 */
export interface SessionRecordChange {
  appendedFrom: number;
  rewritten: boolean;
  /**
   * The first save of a session that was not loaded from a store (a new one): a store need not
   * search its files for an earlier record with this id.
   */
  created?: boolean;
}

/** Persistence port for session records. Methods may be sync or async. */
export interface SessionStore {
  /** `change` is given by a live session; a store may ignore it and compare records itself. */
  save(record: ISessionRecord, change?: SessionRecordChange): void | Promise<void>;
  /** The stored record with this id, or `undefined` when there is none. */
  load(id: string): ISessionRecord | undefined | Promise<ISessionRecord | undefined>;
  /** Newest `updatedAt` first. */
  list(): ISessionRecord[] | Promise<ISessionRecord[]>;
  /** Removes the record; deleting an id that is not stored is not an error. */
  delete(id: string): void | Promise<void>;
  /**
   * The session ended in this process (after its last save): drop what the store keeps of it in
   * memory and close its files. A later `load` or `save` opens it again. Optional.
   */
  release?(id: string): void | Promise<void>;
}

/**
 * Where sessions are saved, bound by a store plugin (`jsonlSessionStore()`, `jsonSessionStore()`).
 * Optional: without a binding sessions are not persisted and cannot be resumed.
 */
export const SessionStore = createToken<SessionStore>('SessionStore');
