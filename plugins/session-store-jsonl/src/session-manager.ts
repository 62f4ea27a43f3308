import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { assertValidSessionId, copyWith } from '@tessera/contracts';
import { FileBlobStore, MemoryBlobStore, type BlobStore } from './blob-store.js';
import { buildSessionContext, type SessionContext } from './context.js';
import { recoverDamagedLines } from './damaged-lines.js';
import { CURRENT_SESSION_VERSION, type AgentMessage, type SessionEntry, type SessionHeader } from './entries.js';
import { InvalidSessionFileError } from './errors.js';
import { FileSessionStorage } from './file-session-storage.js';
import { MemorySessionStorage } from './memory-session-storage.js';
import { migrateToCurrentVersion } from './migrations.js';
import { defaultAgentDir, sessionDirFor, sessionFileName } from './paths.js';
import { resolveBlobRefs, type BlobResolution, type RedactText } from './persist-transform.js';
import { filesByMtime, listSessionsInDir, readHeader, readSessionInfo, type SessionInfo } from './session-listing.js';
import { readSessionFile, splitFileEntries, type SessionFileLoad } from './session-loader.js';
import { SessionPersistence, type WarningSink } from './session-persistence.js';
import type { SessionStorage } from './session-storage.js';
import { SessionTree, type SessionTreeNode } from './session-tree.js';
import { AppendMethods, type NewEntry } from './session-append-methods.js';

export interface SessionManagerOptions {
  /** Root of sessions, blobs and breadcrumbs; default `~/.tessera/agent`. */
  agentDir?: string;
  /** Directory for this session's files; default `<agentDir>/sessions/--<cwd-encoded>--`. */
  sessionDir?: string;
  /** File-system access; default the real disk (`inMemory` uses a `MemorySessionStorage`). */
  storage?: SessionStorage;
  /** Where large images go; default `<agentDir>/blobs`. */
  blobStore?: BlobStore;
  /** Terminal whose breadcrumb `continueRecent` prefers; default from the environment; `null` disables. */
  terminalId?: string | null;
  /** Non-fatal problems (skipped lines, missing blobs, the first write failure); default `process.emitWarning`. */
  onWarning?: WarningSink;
  /**
   * Opt-in: applied to every string of what is written (message text, tool arguments and
   * results, summaries, custom data, the title), e.g. `redactSecretText` from
   * `@tessera/plugin-session-logger`. Off by default, because a resumed session then sees
   * the redacted text. Tree links (`id`, `parentId`, `type`, `timestamp`, …), image bytes,
   * blob refs and signed or encrypted blocks are left as they are. The entries in memory
   * keep their full content.
   */
  redact?: RedactText;
}

export interface NewSessionOptions {
  id?: string;
  parentSession?: string;
}

interface Environment {
  agentDir: string;
  storage: SessionStorage;
  blobs: BlobStore;
  terminalId: string | undefined;
  warn: WarningSink;
  redact: RedactText | undefined;
}

function resolveEnvironment(options: SessionManagerOptions, inMemory = false): Environment {
  const agentDir = options.agentDir ?? defaultAgentDir();
  const rawTerminal =
    options.terminalId === null
      ? undefined
      : (options.terminalId ?? process.env.TESSERA_TERMINAL_ID ?? process.env.TERM_SESSION_ID ?? process.env.WT_SESSION ?? process.env.TMUX_PANE);
  // The terminal id becomes a file name: keep it to a safe alphabet.
  const terminalId = rawTerminal === undefined ? undefined : rawTerminal.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128) || undefined;
  return {
    agentDir,
    storage: options.storage ?? (inMemory ? new MemorySessionStorage() : new FileSessionStorage()),
    blobs: options.blobStore ?? (inMemory ? new MemoryBlobStore() : new FileBlobStore(join(agentDir, 'blobs'))),
    terminalId,
    warn: options.onWarning ?? ((message) => process.emitWarning(message, { code: 'TESSERA_SESSION_WARNING' })),
    redact: options.redact,
  };
}

let lastMs = -1;
let lastIso = '';
/** `new Date().toISOString()`, formatted at most once per millisecond (appends come in bursts). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

function stamp(date: Date = new Date()): string {
  return date.toISOString().replace(/[:.]/g, '-');
}

/**
 * An append-only session tree with a movable leaf, persisted as JSONL (pi / oh-my-pi format,
 * version 3). Appends update memory at once; writes are deferred until the first assistant
 * message, then the whole session is written and later entries are appended one by one.
 */
export class SessionManager extends AppendMethods {
  readonly #env: Environment;
  readonly #persist: boolean;
  readonly #tree = new SessionTree();
  readonly #persistence: SessionPersistence;
  #sessionDir: string;
  #cwd: string;
  #header!: SessionHeader;

  private constructor(cwd: string, sessionDir: string, persist: boolean, env: Environment) {
    super();
    this.#cwd = cwd;
    this.#sessionDir = sessionDir;
    this.#persist = persist;
    this.#env = env;
    this.#persistence = new SessionPersistence(env.storage, env.blobs, env.warn, env.redact);
  }

  // ------------------------------------------------------------------ factories

  /** A new persistent session for `cwd` (nothing is written before the first assistant message). */
  static create(cwd: string, options: SessionManagerOptions = {}): SessionManager {
    const env = resolveEnvironment(options);
    const manager = new SessionManager(cwd, options.sessionDir ?? sessionDirFor(cwd, env.agentDir), true, env);
    manager.newSession();
    return manager;
  }

  /** Opens (migrating if needed) a session file; the session directory defaults to the file's. */
  static async open(path: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const env = resolveEnvironment(options);
    const manager = new SessionManager(process.cwd(), options.sessionDir ?? dirname(path), true, env);
    await manager.setSessionFile(path);
    return manager;
  }

  /** This terminal's last session for `cwd`, else the newest file of the project, else a new session. */
  static async continueRecent(cwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const env = resolveEnvironment(options);
    const sessionDir = options.sessionDir ?? sessionDirFor(cwd, env.agentDir);
    const crumb = readBreadcrumb(env);
    if (crumb && crumb.cwd === cwd && (await readHeader(env.storage, crumb.path))) {
      return SessionManager.open(crumb.path, { ...options, sessionDir });
    }
    const recent = await SessionManager.findMostRecentSession(sessionDir, options);
    if (recent) return SessionManager.open(recent, { ...options, sessionDir });
    return SessionManager.create(cwd, { ...options, sessionDir });
  }

  /** A session that is never written (backed by a `MemorySessionStorage`). */
  static inMemory(cwd: string = process.cwd(), options: SessionManagerOptions = {}): SessionManager {
    const env = resolveEnvironment({ terminalId: null, ...options }, true);
    const manager = new SessionManager(cwd, options.sessionDir ?? sessionDirFor(cwd, env.agentDir), false, env);
    manager.newSession();
    return manager;
  }

  /**
   * Copies a session (migrated first, the source untouched) into a new file for `targetCwd`,
   * written at once; the new header's `parentSession` is the source path.
   */
  static async forkFrom(sourcePath: string, targetCwd: string, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const env = resolveEnvironment(options);
    const load = await readSessionFile(env.storage, sourcePath);
    if (load.status !== 'ok') {
      throw new InvalidSessionFileError(sourcePath, load.status === 'invalid' ? load.reason : `the file is ${load.status}`);
    }
    migrateToCurrentVersion(load.fileEntries, sourcePath);
    const { entries } = splitFileEntries(load.fileEntries);
    for (const warning of recoverDamagedLines(sourcePath, entries, load)) env.warn(warning.message, warning.details);
    const manager = new SessionManager(targetCwd, options.sessionDir ?? sessionDirFor(targetCwd, env.agentDir), true, env);
    manager.newSession({ parentSession: sourcePath });
    manager.#adopt(entries, load.blobLines.map((index) => index - 1), sourcePath);
    await manager.#persistence.rewrite(manager.#header, manager.#tree.entries);
    manager.#persistence.assertHealthy();
    return manager;
  }

  static async list(cwd: string, options: SessionManagerOptions = {}): Promise<SessionInfo[]> {
    const env = resolveEnvironment(options);
    return listSessionsInDir(env.storage, options.sessionDir ?? sessionDirFor(cwd, env.agentDir));
  }

  /** Sessions of every project under `<agentDir>/sessions`, newest activity first. */
  static async listAll(options: SessionManagerOptions = {}): Promise<SessionInfo[]> {
    const env = resolveEnvironment(options);
    const root = join(env.agentDir, 'sessions');
    const all: SessionInfo[] = [];
    for (const dir of env.storage.listDirsSync(root)) all.push(...(await listSessionsInDir(env.storage, join(root, dir))));
    return all.sort((a, b) => b.modified.getTime() - a.modified.getTime());
  }

  /** Up to `limit` sessions of a directory, newest file first (bounded reads per file). */
  static async getRecentSessions(sessionDir: string, limit = 10, options: SessionManagerOptions = {}): Promise<SessionInfo[]> {
    const env = resolveEnvironment(options);
    const infos: SessionInfo[] = [];
    for (const path of filesByMtime(env.storage, sessionDir)) {
      if (infos.length >= limit) break;
      const info = await readSessionInfo(env.storage, path);
      if (info) infos.push(info);
    }
    return infos;
  }

  /** The newest `*.jsonl` (by mtime) with a valid header, or null. */
  static async findMostRecentSession(sessionDir: string, options: SessionManagerOptions = {}): Promise<string | null> {
    const env = resolveEnvironment(options);
    for (const path of filesByMtime(env.storage, sessionDir)) if (await readHeader(env.storage, path)) return path;
    return null;
  }

  // ------------------------------------------------------------------ session switching

  /** Starts an empty session (new file in the session directory when persistent). */
  newSession(options: NewSessionOptions = {}): string | undefined {
    this.#persistence.assertHealthy();
    const id = options.id ?? randomUUID();
    assertValidSessionId(id);
    const now = new Date();
    this.#header = { type: 'session', version: CURRENT_SESSION_VERSION, id, timestamp: now.toISOString(), cwd: this.#cwd };
    if (options.parentSession !== undefined) this.#header.parentSession = options.parentSession;
    this.#tree.reset([]);
    const file = this.#persist ? join(this.#sessionDir, sessionFileName(id, now)) : undefined;
    this.#persistence.retarget(file, { onDisk: false });
    this.#writeBreadcrumb();
    return file;
  }

  /**
   * Loads `path`. Missing → a new session there (written on the first assistant message).
   * Empty → a new header written now. No valid header → the file is moved to
   * `<path>.corrupt-<time>` first. Older versions are migrated and rewritten atomically;
   * newer versions throw `SessionVersionTooNewError` and the file is not touched.
   */
  async setSessionFile(path: string): Promise<void> {
    this.#persistence.assertHealthy();
    await this.#applyLoad(path, await readSessionFile(this.#env.storage, path));
  }

  /**
   * `open` for a file the caller has just read with `readSessionFile` (a store that checks the
   * header before it opens a file reads it once instead of twice).
   */
  static async openLoaded(path: string, load: SessionFileLoad, options: SessionManagerOptions = {}): Promise<SessionManager> {
    const env = resolveEnvironment(options);
    const manager = new SessionManager(process.cwd(), options.sessionDir ?? dirname(path), true, env);
    manager.#persistence.assertHealthy();
    await manager.#applyLoad(path, load);
    return manager;
  }

  async #applyLoad(path: string, load: SessionFileLoad): Promise<void> {
    const { storage } = this.#env;
    if (load.status !== 'ok') {
      if (load.status === 'invalid') {
        const aside = `${path}.corrupt-${stamp()}`;
        await storage.rename(path, aside);
        this.#env.warn(`Session file ${path} has no valid header (${load.reason}); moved it to ${aside} and started a new session.`, { file: path, aside });
      }
      this.#startAt(path, randomUUID());
      if (load.status !== 'missing') {
        await this.#persistence.rewrite(this.#header, []);
        this.#persistence.assertHealthy();
      }
      return;
    }
    const migrated = migrateToCurrentVersion(load.fileEntries, path);
    const { header, entries } = splitFileEntries(load.fileEntries);
    // Damaged lines are skipped and what hung from them reattached, in memory only: loading never rewrites a v3 file.
    for (const warning of recoverDamagedLines(path, entries, load)) this.#env.warn(warning.message, warning.details);
    this.#header = header;
    this.#cwd = header.cwd;
    this.#adopt(entries, load.blobLines.map((index) => index - 1), path);
    this.#persistence.retarget(path, { onDisk: true, needsNewline: load.endsWithoutNewline });
    if (migrated) {
      await this.#persistence.rewrite(this.#header, this.#tree.entries);
      this.#persistence.assertHealthy();
    }
    this.#writeBreadcrumb();
  }

  #startAt(path: string, id: string): void {
    this.#header = { type: 'session', version: CURRENT_SESSION_VERSION, id, timestamp: new Date().toISOString(), cwd: this.#cwd };
    this.#tree.reset([]);
    this.#persistence.retarget(path, { onDisk: false });
  }

  /** Indexes loaded entries (skipping id-less ones) and resolves blob refs on the flagged lines. */
  #adopt(entries: SessionEntry[], blobIndexes: number[], file: string): void {
    // Copied only when something must be dropped: the common case hands the loaded array over as is.
    const dropped = this.#tree.adopt(entries);
    if (dropped > 0) this.#env.warn(`${file}: ${dropped} entries without an id were ignored.`, { file });
    const resolution: BlobResolution = { missing: [], invalid: [] };
    for (const index of blobIndexes) {
      const entry = entries[index];
      if (entry) resolveBlobRefs(entry, this.#env.blobs, resolution);
    }
    for (const ref of resolution.missing) this.#env.warn(`${file}: blob ${ref} is missing; the reference was kept.`, { file, ref });
    for (const ref of resolution.invalid) this.#env.warn(`${file}: invalid blob reference ${JSON.stringify(ref.slice(0, 80))} was not resolved.`, { file });
  }

  // ------------------------------------------------------------------ appends and navigation

  protected override record(fields: NewEntry): string {
    this.#persistence.assertHealthy();
    // copyWith, not `{ ...fields, id, … }`: every append passes here, and Node 20 adds each
    // property after a spread copy slowly (docs/adr/0003).
    const entry = copyWith(fields, { id: this.#tree.newId(), parentId: this.#tree.leafId, timestamp: isoNow() }) as SessionEntry;
    this.#tree.add(entry);
    if (this.#persist && this.#persistence.file !== undefined) {
      if (this.#persistence.onDisk) this.#persistence.append(entry);
      else if (this.#tree.hasAssistant) void this.#persistence.create(this.#header, this.#tree.entries);
    }
    return entry.id;
  }

  protected override requireEntry(id: string): SessionEntry {
    return this.#tree.require(id);
  }

  /** Moves the leaf to an existing entry; the next append becomes its child. */
  branch(entryId: string): void {
    this.#tree.require(entryId);
    this.#tree.leafId = entryId;
  }

  /** The next append starts a new root. */
  resetLeaf(): void {
    this.#tree.leafId = null;
  }

  /** Moves the leaf to `branchFromId` (null = root) and appends a summary of the abandoned path there. */
  branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromExtension?: boolean): string {
    if (branchFromId !== null) this.#tree.require(branchFromId);
    this.#tree.leafId = branchFromId;
    return this.record({ type: 'branch_summary', fromId: branchFromId ?? 'root', summary, details, fromExtension });
  }

  /**
   * Makes the root→`leafId` path a new session (labels on the path re-created after it).
   * Persistent: a new file, written now if the path has an assistant message; returns its path.
   * In memory: replaces this session's state and returns undefined.
   */
  async createBranchedSession(leafId: string): Promise<string | undefined> {
    const now = new Date();
    const entries = this.#tree.copyBranch(leafId, now.toISOString());
    const parentSession = this.#persistence.file ?? this.#header.id;
    const id = randomUUID();
    this.#header = { type: 'session', version: CURRENT_SESSION_VERSION, id, timestamp: now.toISOString(), cwd: this.#cwd, parentSession };
    this.#tree.reset(entries);
    if (!this.#persist) return undefined;
    const file = join(this.#sessionDir, sessionFileName(id, now));
    this.#persistence.retarget(file, { onDisk: false });
    if (this.#tree.hasAssistant) {
      await this.#persistence.rewrite(this.#header, this.#tree.entries);
      this.#persistence.assertHealthy();
    }
    this.#writeBreadcrumb();
    return file;
  }

  /**
   * A new persistent session in the same directory holding root→`leafId` (like
   * `createBranchedSession`), written at once even without an assistant message. This
   * session is left as it was; `parentSession` names its file.
   */
  async forkBranch(leafId: string, options: { id?: string; name?: string } = {}): Promise<SessionManager> {
    const entries = this.#tree.copyBranch(leafId, new Date().toISOString());
    const fork = new SessionManager(this.#cwd, this.#sessionDir, true, this.#env);
    fork.newSession({ ...(options.id === undefined ? {} : { id: options.id }), parentSession: this.#persistence.file ?? this.#header.id });
    if (options.name !== undefined) fork.#header.title = options.name;
    fork.#tree.reset(entries);
    await fork.#persistence.rewrite(fork.#header, fork.#tree.entries);
    fork.#persistence.assertHealthy();
    return fork;
  }

  // ------------------------------------------------------------------ reads

  getEntries(): SessionEntry[] {
    return [...this.#tree.entries];
  }
  getEntry(id: string): SessionEntry | undefined {
    return this.#tree.byId.get(id);
  }
  getChildren(id: string): SessionEntry[] {
    return this.#tree.getChildren(id);
  }
  getBranch(fromId?: string): SessionEntry[] {
    return this.#tree.getBranch(fromId);
  }
  getTree(): SessionTreeNode[] {
    return this.#tree.getTree();
  }
  getLeafId(): string | null {
    return this.#tree.leafId;
  }
  getLeafEntry(): SessionEntry | undefined {
    return this.#tree.leafId === null ? undefined : this.#tree.byId.get(this.#tree.leafId);
  }
  getLabel(id: string): string | undefined {
    return this.#tree.getLabel(id);
  }
  getHeader(): SessionHeader {
    return this.#header;
  }
  getSessionId(): string {
    return this.#header.id;
  }
  getSessionFile(): string | undefined {
    return this.#persistence.file;
  }
  /** True once the session file was written (or loaded): persistence waits for the first reply. */
  isOnDisk(): boolean {
    return this.#persist && this.#persistence.onDisk;
  }
  getSessionDir(): string {
    return this.#sessionDir;
  }
  getCwd(): string {
    return this.#cwd;
  }
  isPersisted(): boolean {
    return this.#persist;
  }
  /** True when an assistant message exists, i.e. the session has been (or is being) written. */
  hasAssistantMessage(): boolean {
    return this.#tree.hasAssistant;
  }

  /** Header `title`, else the name of the last pi `session_info` entry. */
  getSessionName(): string | undefined {
    return this.#header.title !== undefined ? this.#header.title : this.#tree.sessionInfoName;
  }

  /** Sets the header title; a file already on disk is rewritten atomically. */
  setSessionName(name: string): void {
    this.#persistence.assertHealthy();
    this.#header.title = name;
    if (this.#persist && this.#persistence.onDisk) void this.#persistence.rewrite(this.#header, this.#tree.entries);
  }

  /** The context at the current leaf (see `buildSessionContext`). */
  buildSessionContext(): SessionContext {
    return buildSessionContext(this.#tree.entries, this.#tree.leafId, this.#tree.byId);
  }

  /** The messages of the current context (convenience for callers that need only those). */
  getContextMessages(): AgentMessage[] {
    return this.buildSessionContext().messages;
  }

  // ------------------------------------------------------------------ durability

  /** Resolves when every queued write reached the file and the file was fsynced; throws the latched error. */
  async flush(): Promise<void> {
    await this.#persistence.flush();
  }

  async close(): Promise<void> {
    await this.#persistence.close();
  }

  #writeBreadcrumb(): void {
    const { terminalId, storage, agentDir } = this.#env;
    const file = this.#persistence.file;
    if (!this.#persist || terminalId === undefined || file === undefined) return;
    try {
      const dir = join(agentDir, 'terminal-sessions');
      storage.ensureDirSync(dir);
      storage.writeTextSync(join(dir, terminalId), `${this.#cwd}\n${file}\n`);
    } catch (error) {
      this.#env.warn(`Could not write the terminal breadcrumb: ${(error as Error).message}`);
    }
  }
}

function readBreadcrumb(env: Environment): { cwd: string; path: string } | undefined {
  if (env.terminalId === undefined) return undefined;
  const text = env.storage.readTextSync(join(env.agentDir, 'terminal-sessions', env.terminalId));
  const [cwd, path] = text?.split('\n') ?? [];
  return cwd && path ? { cwd, path } : undefined;
}
