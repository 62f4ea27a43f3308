import { createToken } from './token.js';

// ── Project memory (<cwd>/.tessera/memory) ──────────────────────────────────────────────

/** What an entry is about; written as `[kind]` in front of the entry. */
export type MemoryKind = 'user' | 'feedback' | 'project' | 'reference';

export const MEMORY_KINDS: readonly MemoryKind[] = Object.freeze(['user', 'feedback', 'project', 'reference']);

/** Startup caps from the spec: the first 200 lines of MEMORY.md, and at most 25 KB of them. */
export const DEFAULT_MEMORY_STARTUP_CAPS: MemoryStartupCaps = Object.freeze({ maxLines: 200, maxBytes: 25 * 1024 });

/** Session record fields the memory events and the last used references are kept under. */
export const MEMORY_EVENTS_RECORD_FIELD = 'memoryEvents';
export const USED_MEMORY_RECORD_FIELD = 'usedMemoryReferences';

export interface MemoryTopicSummary {
  /** Lower-case topic name; the file is `topics/<topic>.md`. */
  readonly topic: string;
  readonly path: string;
  /** UTF-8 size of the topic file. */
  readonly bytes: number;
  /** Entry lines (`- [kind] …`) in the topic file. */
  readonly entries: number;
}

export interface MemoryDocument {
  /** Absent for the index. */
  readonly topic?: string;
  readonly path: string;
  /** The file's text; `''` when it does not exist yet. */
  readonly text: string;
  readonly exists: boolean;
}

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

export interface MemoryProposeResult {
  readonly candidate?: PendingMemoryCandidate;
  /** True when the same normalised candidate is already pending, or already saved in the topic. */
  readonly deduplicated: boolean;
  readonly refused?: MemoryRefusal;
}

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

export interface MemoryEventBase {
  /** ISO time. */
  readonly at: string;
  readonly topic: string;
  /** Absent for a store used without a session. */
  readonly sessionId?: string;
}

export interface MemoryStartupCaps {
  readonly maxLines: number;
  /** UTF-8 bytes. */
  readonly maxBytes: number;
}

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
  pending(): Promise<PendingMemoryCandidate[]>;
  approve(id: string): Promise<MemoryDecisionResult>;
  reject(id: string): Promise<MemoryDecisionResult>;
  /** Replaces the last used references (what `/memory used` reports). */
  recordUsed(references: readonly MemoryReference[]): void;
  used(): readonly MemoryReference[];
  /** Events of this service's life (and restored ones), oldest first. Store them as `memoryEvents`. */
  events(): readonly MemoryEvent[];
  /** Takes back what a resumed session record held. */
  restore(state: { readonly events?: readonly MemoryEvent[]; readonly used?: readonly MemoryReference[] }): void;
  /** The start of MEMORY.md for the system prompt. Default caps: 200 lines, 25 KB. */
  startupIndex(caps?: Partial<MemoryStartupCaps>): Promise<MemoryStartupIndex>;
}

export const ProjectMemory = createToken<ProjectMemory>('ProjectMemory');

// ── User-local storage (~/.tessera) ──────────────────────────────────────────────────────

export type UserLocalCategory =
  | 'preferences'
  | 'view-state'
  | 'memory-projections'
  | 'task-associations'
  | 'workflow-metadata'
  | 'inspection-index';

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

export const USER_LOCAL_MEMORY_CATEGORIES: readonly UserLocalMemoryCategory[] = Object.freeze([
  'view-preference',
  'last-visible-cwd',
  'background-selection',
  'task-association',
  'display-preference',
  'inspection-choice',
]);

export type UserLocalJsonValue = string | number | boolean | null | readonly UserLocalJsonValue[] | { readonly [key: string]: UserLocalJsonValue };

export interface UserLocalRoot {
  /** The validated storage root (absolute, symlinks resolved when it exists). */
  readonly root: string;
  /** The active repository (nearest folder with `.git` above the cwd, else the cwd). */
  readonly repositoryRoot: string;
}

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
  resolveRoot(): Promise<UserLocalRoot>;
  /** The folder of a category (created when `create` is true), so callers never build paths. */
  categoryLocation(category: UserLocalCategory, options?: { readonly create?: boolean }): Promise<string>;
  inspect(): Promise<UserLocalStorageProjection>;
  setMemoryItem(item: UserLocalMemoryItemInput): Promise<UserLocalMemoryItemProjection>;
  listMemoryItems(filter?: { readonly category?: UserLocalMemoryCategory }): Promise<UserLocalMemoryItemProjection[]>;
  /** Item with its value, disabled or not; undefined when absent. */
  inspectMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<UserLocalMemoryItem | undefined>;
  /** Keeps the item inspectable; `readEnabledMemoryItem` returns null for it. False when absent. */
  disableMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean>;
  enableMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean>;
  /** False when absent. */
  deleteMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<boolean>;
  /** The value of an enabled item; null when absent or disabled. */
  readEnabledMemoryItem(category: UserLocalMemoryCategory, key: string): Promise<UserLocalJsonValue | null>;
}

export const UserLocalStorage = createToken<UserLocalStorage>('UserLocalStorage');
