import { createToken } from './token.js';

// ── Project memory (<cwd>/.tessera/memory) ──────────────────────────────────────────────

/** What an entry is about; written as `[kind]` in front of the entry. */
export type MemoryKind = 'user' | 'feedback' | 'project' | 'reference';

/** Every {@link MemoryKind}, for validation and menus. */
export const MEMORY_KINDS: readonly MemoryKind[] = Object.freeze(['user', 'feedback', 'project', 'reference']);

/** Startup caps from the spec: the first 200 lines of MEMORY.md, and at most 25 KB of them. */
export const DEFAULT_MEMORY_STARTUP_CAPS: MemoryStartupCaps = Object.freeze({ maxLines: 200, maxBytes: 25 * 1024 });

/** The session record field memory events are kept under (see {@link ProjectMemory.events}). */
export const MEMORY_EVENTS_RECORD_FIELD = 'memoryEvents';
/** The session record field the last used memory references are kept under (see {@link ProjectMemory.used}). */
export const USED_MEMORY_RECORD_FIELD = 'usedMemoryReferences';

/** A topic file as `list` shows it. */
export interface MemoryTopicSummary {
  /** Lower-case topic name; the file is `topics/<topic>.md`. */
  readonly topic: string;
  readonly path: string;
  /** UTF-8 size of the topic file. */
  readonly bytes: number;
  /** Entry lines (`- [kind] …`) in the topic file. */
  readonly entries: number;
}

/** The text of the memory index (MEMORY.md) or of one topic file. */
export interface MemoryDocument {
  /** Absent for the index. */
  readonly topic?: string;
  readonly path: string;
  /** The file's text; `''` when it does not exist yet. */
  readonly text: string;
  readonly exists: boolean;
}

/** One fact to remember under a topic. */
export interface MemoryEntryInput {
  readonly kind: MemoryKind;
  /** Letters, digits, `.`, `_`, `-`; no path separators, no `..`; lower-cased. */
  readonly topic: string;
  /** One fact; line breaks are folded into spaces. */
  readonly text: string;
}

/** Why the sensitive-content policy refused a text. `kind` is stable; `message` is for a person. */
export interface MemoryRefusal {
  readonly kind: SensitiveContentKind;
  /** Readable name of the kind: "AWS access key", "payment card number"… */
  readonly label: string;
  readonly message: string;
}

/** The kinds of secret or personal data the memory policy refuses to store. */
export type SensitiveContentKind =
  | 'aws-access-key'
  | 'aws-secret-key'
  | 'github-token'
  | 'gitlab-token'
  | 'slack-token'
  | 'slack-webhook'
  | 'stripe-key'
  | 'openai-key'
  | 'anthropic-key'
  | 'google-api-key'
  | 'npm-token'
  | 'sendgrid-key'
  | 'jwt'
  | 'private-key'
  | 'password-assignment'
  | 'secret-assignment'
  | 'bearer-token'
  | 'basic-auth-header'
  | 'connection-string-credentials'
  | 'payment-card'
  | 'us-ssn'
  | 'uk-nino'
  | 'kr-rrn'
  | 'high-entropy-string';

/** What `append` did: wrote the entry, found it already there, or refused it. */
export interface MemoryAppendResult {
  readonly topic: string;
  /** True when the topic already held the same normalised entry; nothing was written. */
  readonly deduplicated: boolean;
  /** Set when the policy refused the text; nothing was written. */
  readonly refused?: MemoryRefusal;
  /** The `add` event, when something was written. */
  readonly event?: MemoryEvent;
}

/** A memory candidate waiting for a person to approve or reject it. */
export interface PendingMemoryCandidate extends MemoryEntryInput {
  readonly id: string;
  /** ISO time. */
  readonly createdAt: string;
  /** Who proposed it: `model`, `user`, an extractor's name. */
  readonly source: string;
}

/** What `propose` did: the new pending candidate, or why there is none (duplicate or refused). */
export interface MemoryProposeResult {
  readonly candidate?: PendingMemoryCandidate;
  /** True when the same normalised candidate is already pending, or already saved in the topic. */
  readonly deduplicated: boolean;
  readonly refused?: MemoryRefusal;
}

/** The outcome of approving or rejecting a pending candidate; the candidate is no longer pending. */
export interface MemoryDecisionResult {
  readonly candidate: PendingMemoryCandidate;
  readonly event: MemoryEvent;
  /** For `approve`: the append's outcome (it may be deduplicated, or refused if the policy changed). */
  readonly append?: MemoryAppendResult;
}

/** A memory entry the model or a person was shown and used: `/memory used` reports them. */
export interface MemoryReference {
  /** Absent for the index itself. */
  readonly topic?: string;
  readonly kind?: MemoryKind;
  /** The entry's text, when one entry was used rather than a whole file. */
  readonly entry?: string;
  readonly source: 'index' | 'topic' | 'pending';
}

/**
 * One explicit memory change, for the session record's `memoryEvents` (resume, debugging).
 * Only explicit workflows produce events; streaming data never does.
 */
export type MemoryEvent =
  | (MemoryEventBase & { readonly type: 'add'; readonly kind: MemoryKind; readonly text: string })
  | (MemoryEventBase & { readonly type: 'approve'; readonly candidateId: string; readonly kind: MemoryKind; readonly text: string; readonly deduplicated: boolean })
  | (MemoryEventBase & { readonly type: 'reject'; readonly candidateId: string; readonly kind: MemoryKind; readonly text: string });

/** Fields every {@link MemoryEvent} has. */
export interface MemoryEventBase {
  /** ISO time. */
  readonly at: string;
  readonly topic: string;
  /** Absent for a store used without a session. */
  readonly sessionId?: string;
}

/** How much of MEMORY.md goes into the system prompt. */
export interface MemoryStartupCaps {
  readonly maxLines: number;
  /** UTF-8 bytes. */
  readonly maxBytes: number;
}

/** The start of MEMORY.md as cut for the system prompt, with the sizes before and after. */
export interface MemoryStartupIndex {
  readonly path: string;
  /** The kept start of MEMORY.md; `''` when there is none. */
  readonly text: string;
  /** True when lines or bytes were cut; the prompt should say so. */
  readonly truncated: boolean;
  /** Lines and UTF-8 bytes of `text`. */
  readonly lines: number;
  readonly bytes: number;
  /** Lines and bytes of the whole file. */
  readonly totalLines: number;
  readonly totalBytes: number;
}

/**
 * Project memory of one project (`<cwd>/.tessera/memory/`): what a `/memory` command needs.
 * Writes happen only through these explicit calls; nothing here runs as a side effect of a
 * turn. Invalid topics and unknown candidate ids throw typed errors; a refused text does not
 * throw, it comes back as `refused` so a command can show why.
 */
export interface ProjectMemory {
  /** The project root the memory belongs to (the session's cwd). */
  readonly root: string;
  /** Topics with their sizes, sorted by name. */
  list(): Promise<MemoryTopicSummary[]>;
  /** The index (no topic) or one topic's text. */
  show(topic?: string): Promise<MemoryDocument>;
  /** Policy check, then a deduplicated append to the topic file and one index line. */
  append(entry: MemoryEntryInput): Promise<MemoryAppendResult>;
  /** Adds a pending candidate (same policy and deduplication) for a person to review. */
  propose(entry: MemoryEntryInput & { readonly source?: string }): Promise<MemoryProposeResult>;
  /** Candidates waiting for review. */
  pending(): Promise<PendingMemoryCandidate[]>;
  /** Appends a pending candidate to its topic and drops it from the queue; throws for an unknown id. */
  approve(id: string): Promise<MemoryDecisionResult>;
  /** Drops a pending candidate without writing it; throws for an unknown id. */
  reject(id: string): Promise<MemoryDecisionResult>;
  /** Replaces the last used references (what `/memory used` reports). */
  recordUsed(references: readonly MemoryReference[]): void;
  /** The references last recorded with `recordUsed`. */
  used(): readonly MemoryReference[];
  /** Events of this service's life (and restored ones), oldest first. Store them as `memoryEvents`. */
  events(): readonly MemoryEvent[];
  /** Takes back what a resumed session record held. */
  restore(state: { readonly events?: readonly MemoryEvent[]; readonly used?: readonly MemoryReference[] }): void;
  /** The start of MEMORY.md for the system prompt. Default caps: 200 lines, 25 KB. */
  startupIndex(caps?: Partial<MemoryStartupCaps>): Promise<MemoryStartupIndex>;
}

/**
 * The project memory of the session's cwd, made per session by `projectMemory()`. Optional:
 * the `/memory` command uses it when it is bound.
 */
export const ProjectMemory = createToken<ProjectMemory>('ProjectMemory');

// ── User-local storage (~/.tessera) ──────────────────────────────────────────────────────

/** The folders of user-local storage, one per kind of data. */
export type UserLocalCategory =
  | 'preferences'
  | 'view-state'
  | 'memory-projections'
  | 'task-associations'
  | 'workflow-metadata'
  | 'inspection-index';

/** Every {@link UserLocalCategory}. */
export const USER_LOCAL_CATEGORIES: readonly UserLocalCategory[] = Object.freeze([
  'preferences',
  'view-state',
  'memory-projections',
  'task-associations',
  'workflow-metadata',
  'inspection-index',
]);

/** What a user-local memory item may be about: display and navigation only. */
export type UserLocalMemoryCategory =
  | 'view-preference'
  | 'last-visible-cwd'
  | 'background-selection'
  | 'task-association'
  | 'display-preference'
  | 'inspection-choice';

/** Every {@link UserLocalMemoryCategory}. */
export const USER_LOCAL_MEMORY_CATEGORIES: readonly UserLocalMemoryCategory[] = Object.freeze([
  'view-preference',
  'last-visible-cwd',
  'background-selection',
  'task-association',
  'display-preference',
  'inspection-choice',
]);

/** A JSON value, as user-local memory items store them. */
export type UserLocalJsonValue = string | number | boolean | null | readonly UserLocalJsonValue[] | { readonly [key: string]: UserLocalJsonValue };

/** Where user-local data lives and which repository it is kept apart from. */
export interface UserLocalRoot {
  /** The validated storage root (absolute, symlinks resolved when it exists). */
  readonly root: string;
  /** The active repository (nearest folder with `.git` above the cwd, else the cwd). */
  readonly repositoryRoot: string;
}

/** One category folder as `inspect()` shows it. */
export interface UserLocalCategorySummary {
  readonly category: UserLocalCategory;
  readonly location: string;
  readonly exists: boolean;
  /** Files directly in the category folder. */
  readonly items: number;
  /** ISO time of the folder's last change, when it exists. */
  readonly updatedAt?: string;
}

/** What `inspect()` shows: enough for a person to see and remove everything stored. */
export interface UserLocalStorageProjection extends UserLocalRoot {
  readonly categories: readonly UserLocalCategorySummary[];
  readonly memoryItems: readonly UserLocalMemoryItemProjection[];
}

/** A user-local memory item to store; an item with the same category and key is replaced. */
export interface UserLocalMemoryItemInput {
  readonly category: UserLocalMemoryCategory;
  /** 1–200 printable characters. */
  readonly key: string;
  readonly value: UserLocalJsonValue;
  /** Short text for lists; default derived from category and key. */
  readonly summary?: string;
  /** Where the item came from: `user`, `host`… Default `user`. */
  readonly source?: string;
  /** `user` (everywhere) or `repository` (the active repository). Default `user`. */
  readonly scope?: 'user' | 'repository';
}

/** A stored item as lists show it: its value only in summary, with where it is kept and what it may affect. */
export interface UserLocalMemoryItemProjection {
  readonly category: UserLocalMemoryCategory;
  readonly key: string;
  readonly summary: string;
  /** The value as short text (JSON, cut to 80 characters). */
  readonly valueSummary: string;
  readonly source: string;
  readonly scope: 'user' | 'repository';
  /** Set for `repository` scope. */
  readonly repositoryRoot?: string;
  readonly storageLocation: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly enabled: boolean;
  /** What the item may influence, in words. */
  readonly displayNavigationRule: string;
  readonly canDelete: boolean;
  readonly canDisable: boolean;
  /** Always `none`: user-local memory never runs, selects or authorises a command. */
  readonly commandExecutionEffect: 'none';
}

/** A stored item with its full value. */
export interface UserLocalMemoryItem extends UserLocalMemoryItemProjection {
  readonly value: UserLocalJsonValue;
}

/**
 * Baseline workflow storage outside the repository (`~/.tessera` by default). Every call first
 * validates the root: empty, relative, equal to the active repository or inside it (after
 * resolving symlinks) throws `UserLocalStorageRootError`. Nothing is ever written inside the
 * repository. Items influence display and navigation only (`commandExecutionEffect: 'none'`).
 */
export interface UserLocalStorage {
  /** Validates the storage root and returns it with the active repository; throws `UserLocalStorageRootError` for a bad root. */
  resolveRoot(): Promise<UserLocalRoot>;
  /** The folder of a category (created when `create` is true), so callers never build paths. */
  categoryLocation(category: UserLocalCategory, options?: { readonly create?: boolean }): Promise<string>;
  /** Everything stored, by category, with every memory item. */
  inspect(): Promise<UserLocalStorageProjection>;
  /** Stores an item (replacing one with the same category and key) and returns how it is listed; throws for invalid input. */
  setMemoryItem(item: UserLocalMemoryItemInput): Promise<UserLocalMemoryItemProjection>;
  /** Stored items, disabled ones included, optionally of one category. */
  listMemoryItems(filter?: { readonly category?: UserLocalMemoryCategory }): Promise<UserLocalMemoryItemProjection[]>;
  /** Item with its value, disabled or not; undefined when absent. */
  inspectMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<UserLocalMemoryItem | undefined>;
  /** Keeps the item inspectable; `readEnabledMemoryItem` returns null for it. False when absent. */
  disableMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean>;
  /** Re-enables a disabled item. False when absent. */
  enableMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean>;
  /** False when absent. */
  deleteMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean>;
  /** The value of an enabled item; null when absent or disabled. */
  readEnabledMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<UserLocalJsonValue | null>;
}

/** User-local storage, bound by `userLocalStorage()`, for hosts that keep view state and preferences outside the repository. Optional. */
export const UserLocalStorage = createToken<UserLocalStorage>('UserLocalStorage');
