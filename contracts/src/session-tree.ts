import type { IHistoryEntry } from './history.js';
import type { ISessionRecord } from './session-store.js';
import { createToken } from './token.js';

/** One entry of a stored session tree, as `/tree` shows it. */
export interface SessionTreeEntry {
  id: string;
  /** `null` for a root. */
  parentId: string | null;
  /** The store's entry type (`message`, `compaction`, `branch_summary`, `label`, …). */
  type: string;
  timestamp: string;
  /** For message entries: who spoke. */
  role?: string;
  /** A one-line preview of the entry's text, when it has any. */
  preview?: string;
  /** The label set on this entry, if any. */
  label?: string;
}

/** An entry with the entries that continue from it. */
export interface SessionTreeNode {
  entry: SessionTreeEntry;
  /** Oldest first. */
  children: SessionTreeNode[];
}

/** A stored session as listed by `SessionTree.list`. */
export interface SessionTreeInfo {
  id: string;
  cwd: string;
  name?: string;
  createdAt: string;
  updatedAt: string;
  /** How many message entries the session holds (all branches). */
  messageCount: number;
}

/**
 * Sessions stored as trees of entries (the JSONL store): what `/fork`, `/tree`, `/resume`
 * and labels need, without importing a store's internals. Every method takes a session id
 * and rejects an invalid one (`InvalidSessionIdError`) before it touches a path.
 */
export interface SessionTree {
  /** Stored sessions, newest `updatedAt` first; `cwd` keeps only that project's. */
  list(options?: { cwd?: string }): Promise<SessionTreeInfo[]>;
  /** The session as a record along its current branch (root → leaf); undefined when absent. */
  load(sessionId: string): Promise<ISessionRecord | undefined>;
  /** Every entry as a tree (roots oldest first). */
  tree(sessionId: string): Promise<SessionTreeNode[]>;
  /** Id of the entry new entries attach to; `null` for an empty session. */
  leaf(sessionId: string): Promise<string | null>;
  /** Moves the leaf to `entryId` (persisted), so the next entry starts a branch there. */
  branch(sessionId: string, entryId: string): Promise<void>;
  /** Appends history entries after the leaf and returns their entry ids. */
  append(sessionId: string, entries: readonly IHistoryEntry[]): Promise<string[]>;
  /** Sets (or, with `undefined`, clears) the label on an entry. */
  setLabel(sessionId: string, entryId: string, label: string | undefined): Promise<void>;
  /**
   * A new session holding the branch from the root to `entryId` (inclusive); returns its id.
   * The original is left as it was.
   */
  fork(sessionId: string, entryId: string, options?: { newSessionId?: string; name?: string }): Promise<string>;
}

/** Tree access to stored sessions, bound by the JSONL store plugin. Optional: `/fork`, `/tree` and labels need it. */
export const SessionTree = createToken<SessionTree>('SessionTree');
