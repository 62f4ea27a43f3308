import { randomUUID } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { compareText, assertValidSessionId, TesseraError, type ISessionRecord, type SessionRecordChange, type SessionStore } from '@tessera/contracts';
import { recoverDamagedLines } from './damaged-lines.js';
import type { SessionEntry, SessionHeader } from './entries.js';
import { SessionEntryNotFoundError, SessionExistsError, SessionNotFoundError } from './errors.js';
import { FileSessionStorage } from './file-session-storage.js';
import { restoreLeaf } from './leaf-marker.js';
import { migrateToCurrentVersion } from './migrations.js';
import { defaultAgentDir, sessionDirFor, sessionIdFromFileName } from './paths.js';
import { SessionFileIndex } from './session-file-index.js';
import { recordFromSession } from './record-mapping.js';
import { readHeader } from './session-listing.js';
import { readSessionFile, splitFileEntries } from './session-loader.js';
import { SessionManager, type SessionManagerOptions } from './session-manager.js';
import type { SessionStorage } from './session-storage.js';
import { TrackedSession } from './tracked-session.js';

export type JsonlSessionStoreOptions = Omit<SessionManagerOptions, 'sessionDir'>;

/** A session's header and entries, for listings. */
export interface SessionSnapshot {
  header: SessionHeader;
  entries: readonly SessionEntry[];
}

/** The modification times of the sessions folder and of each project folder in it. */
interface FolderStamp {
  root: number;
  folders: Map<string, number>;
}

function sameStamp(a: FolderStamp, b: FolderStamp): boolean {
  if (a.root !== b.root || a.folders.size !== b.folders.size) return false;
  for (const [folder, mtime] of b.folders) if (a.folders.get(folder) !== mtime) return false;
  return true;
}

/**
 * The kernel's `SessionStore` port on top of the JSONL session tree. A save appends only
 * what the file does not have yet: given a `SessionRecordChange` that continues the last
 * save, the new history entries as they are; otherwise what a comparison of the messages
 * finds missing. When the record's history was rewritten (for example by compaction), the
 * new tail becomes a branch from the last common message, so the old history stays in the
 * file. Files live where `SessionManager` puts them. `JsonlSessionTree` works on the same
 * open sessions through `withSession`, `snapshots` and `fork`.
 */
export class JsonlSessionStore implements SessionStore {
  readonly #options: JsonlSessionStoreOptions;
  readonly #storage: SessionStorage;
  readonly #agentDir: string;
  readonly #open = new Map<string, TrackedSession>();
  /** Each session's operations run in order; different sessions' run side by side. */
  readonly #chains = new Map<string, Promise<unknown>>();
  /** Operations over every session (list, close, fork…) wait for all chains, and chains for them. */
  #global: Promise<unknown> = Promise.resolve();
  /**
   * The session files by id, with the folders' modification times it was read at: looking a
   * session up rescans only when a folder changed (a server opening thousands of sessions would
   * otherwise list every file for each new one).
   */
  #index: { byId: SessionFileIndex; stamp: FolderStamp } | undefined;

  constructor(options: JsonlSessionStoreOptions = {}) {
    this.#storage = options.storage ?? new FileSessionStorage();
    this.#agentDir = options.agentDir ?? defaultAgentDir();
    this.#options = { ...options, storage: this.#storage, agentDir: this.#agentDir };
  }

  save(record: ISessionRecord, change?: SessionRecordChange): Promise<void> {
    if (typeof record.id !== 'string' || record.id === '') {
      return Promise.reject(new TesseraError('Cannot save a session record without an id.', { code: 'invalid_session_record', category: 'validation', recoverable: false, details: { field: 'id' } }));
    }
    return this.#serialFor(record.id, async () => {
      assertValidSessionId(record.id);
      // A new session (`created`) is looked up in the index as it is, without rescanning the folders.
      let tracked = this.#open.get(record.id) ?? (await this.#openTracked(record.id, change?.created === true))?.tracked;
      const created = tracked === undefined;
      tracked ??= this.#create(record);
      tracked.save(record, change);
      await tracked.manager.flush();
      if (created && tracked.manager.isOnDisk()) this.#indexAdd(record.id, tracked.manager.getSessionFile());
    });
  }

  load(id: string): Promise<ISessionRecord | undefined> {
    return this.#serialFor(id, async () => {
      assertValidSessionId(id);
      const tracked = this.#open.get(id);
      if (tracked) return recordFromSession(tracked.manager).record;
      // Just opened: the record read while opening is handed out as it is (not built twice).
      return (await this.#openTracked(id))?.loaded;
    });
  }

  /** Every stored session, fully loaded, newest `updatedAt` first. */
  list(): Promise<ISessionRecord[]> {
    return this.#serialAll(async () => {
      const records: ISessionRecord[] = [];
      for (const info of await SessionManager.listAll(this.#options)) {
        const tracked = this.#open.get(info.id);
        const record = tracked ? recordFromSession(tracked.manager).record : (await this.#openTracked(info.id))?.loaded;
        if (record) records.push(record);
      }
      return records.sort((a, b) => compareText(b.updatedAt, a.updatedAt));
    });
  }

  delete(id: string): Promise<void> {
    return this.#serialFor(id, async () => {
      assertValidSessionId(id);
      const tracked = this.#open.get(id);
      this.#open.delete(id);
      await tracked?.manager.close();
      for (const { file } of await this.#filesOf(id)) await this.#storage.unlink(file);
      this.#index?.byId.delete(id);
    });
  }

  /** Flushes and closes one session's file and forgets it in memory (its session ended); `load` reopens it. */
  release(id: string): Promise<void> {
    return this.#serialFor(id, async () => {
      const tracked = this.#open.get(id);
      if (!tracked) return;
      this.#open.delete(id);
      await tracked.manager.close();
    });
  }

  /** Flushes and closes every open session file. */
  close(): Promise<void> {
    return this.#serialAll(async () => {
      const open = [...this.#open.values()];
      this.#open.clear();
      for (const tracked of open) await tracked.manager.close();
    });
  }

  /**
   * Runs `operation` on the open session `id`, in the store's queue (for `JsonlSessionTree`).
   * With `write`, what it appended is flushed and the store re-reads the branch, so the next
   * `save` compares against it. Unknown ids throw `SessionNotFoundError`.
   */
  withSession<T>(id: string, operation: (manager: SessionManager) => T, options: { write?: boolean } = {}): Promise<T> {
    return this.#serialFor(id, async () => {
      const tracked = await this.#require(id);
      try {
        return operation(tracked.manager);
      } finally {
        if (options.write) {
          tracked.refresh();
          await tracked.manager.flush();
        }
      }
    });
  }

  /** Header and entries of every session, open or on disk; files that are not open are read, not kept. */
  snapshots(): Promise<SessionSnapshot[]> {
    return this.#serialAll(async () => {
      const snapshots: SessionSnapshot[] = [...this.#open.values()].map(({ manager }) => ({ header: manager.getHeader(), entries: manager.getEntries() }));
      for (const file of this.#sessionFiles()) {
        const id = sessionIdFromFileName(file);
        if (id !== undefined && this.#open.has(id)) continue;
        try {
          const load = await readSessionFile(this.#storage, file);
          if (load.status === 'invalid') this.#warn(`${file}: left out of the session list: ${load.reason}`, { file });
          if (load.status !== 'ok') continue;
          migrateToCurrentVersion(load.fileEntries, file);
          const { header, entries } = splitFileEntries(load.fileEntries);
          if (this.#open.has(header.id)) continue;
          // Read only: damaged lines are reported and what they cut off reattached in memory; the file stays as it is.
          for (const warning of recoverDamagedLines(file, entries, load)) this.#warn(warning.message, warning.details);
          snapshots.push({ header, entries });
        } catch (error) {
          // One unreadable file (say, from a newer release) must not hide the others.
          this.#warn(`${file}: left out of the session list: ${(error as Error).message}`, { file });
        }
      }
      return snapshots;
    });
  }

  /**
   * A new session file holding root→`entryId` of session `id` (see `SessionManager.forkBranch`);
   * returns the new id. The original is not changed.
   */
  fork(id: string, entryId: string, options: { newSessionId?: string; name?: string } = {}): Promise<string> {
    return this.#serialAll(async () => {
      const source = await this.#require(id);
      if (source.manager.getEntry(entryId) === undefined) throw new SessionEntryNotFoundError(entryId, id);
      const newId = options.newSessionId ?? randomUUID();
      assertValidSessionId(newId);
      if (this.#open.has(newId) || (await this.#filesOf(newId)).length > 0) throw new SessionExistsError(newId);
      const manager = await source.manager.forkBranch(entryId, { id: newId, ...(options.name === undefined ? {} : { name: options.name }) });
      const tracked = new TrackedSession(manager, this.#options.redact);
      tracked.refresh();
      this.#open.set(newId, tracked);
      return newId;
    });
  }

  #warn(message: string, details: Record<string, unknown>): void {
    if (this.#options.onWarning) this.#options.onWarning(message, details);
    else process.emitWarning(message, { code: 'TESSERA_SESSION_WARNING' });
  }

  /** Runs after the session's earlier operations (and any store-wide one). */
  #serialFor<T>(id: string, operation: () => Promise<T>): Promise<T> {
    const before = Promise.all([this.#global, this.#chains.get(id)]);
    const next = before.then(operation, operation);
    const settled = next.catch(() => undefined);
    this.#chains.set(id, settled);
    void settled.then(() => {
      if (this.#chains.get(id) === settled) this.#chains.delete(id);
    });
    return next;
  }

  /** Runs after every operation queued so far; later ones wait for it. */
  #serialAll<T>(operation: () => Promise<T>): Promise<T> {
    const before = Promise.all([this.#global, ...this.#chains.values()]);
    const next = before.then(operation, operation);
    this.#global = next.catch(() => undefined);
    return next;
  }

  /** The folders' modification times: what the index was read at. */
  #stamp(): FolderStamp {
    const root = join(this.#agentDir, 'sessions');
    const folders = new Map<string, number>();
    for (const dir of this.#storage.listDirsSync(root)) folders.set(dir, this.#storage.statSync(join(root, dir))?.mtimeMs ?? 0);
    return { root: this.#storage.statSync(root)?.mtimeMs ?? 0, folders };
  }

  /** Files named for `id`, from the index (read again when a folder changed since). */
  #namedFiles(id: string, useIndexAsIs = false): string[] {
    if (useIndexAsIs && this.#index) return this.#index.byId.files(id);
    const stamp = this.#stamp();
    if (!this.#index || !sameStamp(this.#index.stamp, stamp)) {
      const byId = new SessionFileIndex(join(this.#agentDir, 'sessions'));
      for (const file of this.#sessionFiles()) {
        const named = sessionIdFromFileName(file);
        if (named !== undefined) byId.add(named, file);
      }
      this.#index = { byId, stamp };
    }
    return this.#index.byId.files(id);
  }

  /**
   * A file this store just created: indexed, and the index's stamp moved past its own change,
   * by looking again at the sessions folder and the file's project folder only (two `stat`s,
   * however many projects there are). A change another process made meanwhile in any other
   * folder still differs from the stamp, so the next lookup reads the folders again.
   */
  #indexAdd(id: string, file: string | undefined): void {
    // A session is written once it has a reply: until then there is no file to index (the caller checks).
    if (!this.#index || file === undefined) return;
    this.#index.byId.add(id, file);
    const root = join(this.#agentDir, 'sessions');
    const folder = dirname(file);
    if (dirname(folder) !== root) {
      this.#index.stamp = this.#stamp();
      return;
    }
    const { stamp } = this.#index;
    stamp.root = this.#storage.statSync(root)?.mtimeMs ?? 0;
    stamp.folders.set(basename(folder), this.#storage.statSync(folder)?.mtimeMs ?? 0);
  }

  async #require(id: string): Promise<TrackedSession> {
    assertValidSessionId(id);
    const tracked = this.#open.get(id) ?? (await this.#openTracked(id))?.tracked;
    if (!tracked) throw new SessionNotFoundError(id, this.#agentDir);
    return tracked;
  }

  /** Every `*.jsonl` file under `<agentDir>/sessions/<project>/`. */
  #sessionFiles(): string[] {
    const root = join(this.#agentDir, 'sessions');
    const files: string[] = [];
    for (const dir of this.#storage.listDirsSync(root)) {
      for (const name of this.#storage.listFilesSync(join(root, dir), '*.jsonl')) files.push(join(root, dir, name));
    }
    return files;
  }

  /**
   * The files of session `id`: the id in the name (after the fixed-shape time prefix) is `id`
   * exactly, so `abc` never matches `x_abc`, and the header does not name another session.
   * `confirmed` files have a header with that id (those come first); the others have no
   * readable header, so only their name says whose they are: `delete` removes them, `load`
   * never opens them (opening would start a new session with another id there).
   */
  async #filesOf(id: string, knownNew = false): Promise<Array<{ file: string; confirmed: boolean }>> {
    const found: Array<{ file: string; confirmed: boolean }> = [];
    for (const file of this.#namedFiles(id, knownNew)) {
      const headerId = (await readHeader(this.#storage, file))?.header.id;
      if (headerId !== undefined && headerId !== id) {
        this.#warn(`${file}: named for session ${id}, but its header says session ${headerId}; it is not used as ${id}.`, { file });
        continue;
      }
      found.push({ file, confirmed: headerId === id });
    }
    return found.sort((a, b) => Number(b.confirmed) - Number(a.confirmed));
  }

  /** Opens session `id` from its file and tracks it; also returns the record read from it. */
  async #openTracked(id: string, knownNew = false): Promise<{ tracked: TrackedSession; loaded: ISessionRecord } | undefined> {
    const manager = (await this.#openOnlyFile(id, knownNew)) ?? (await this.#openConfirmed(id, knownNew));
    if (!manager) return undefined;
    restoreLeaf(manager);
    const tracked = new TrackedSession(manager, this.#options.redact);
    const loaded = tracked.refresh();
    this.#open.set(id, tracked);
    return { tracked, loaded };
  }

  /**
   * The usual case in one read: one file is named for `id` and its first line is a valid header
   * of `id`. Anything else (several files, a foreign or unreadable header) returns undefined for
   * `#openConfirmed` to sort out, which reads headers first and never opens an unconfirmed file.
   */
  async #openOnlyFile(id: string, knownNew: boolean): Promise<SessionManager | undefined> {
    const named = this.#namedFiles(id, knownNew);
    if (named.length !== 1) return undefined;
    const file = named[0]!;
    const load = await readSessionFile(this.#storage, file);
    if (load.status !== 'ok' || load.lines[0] !== 1 || (load.fileEntries[0] as SessionHeader).id !== id) return undefined;
    return SessionManager.openLoaded(file, load, this.#options);
  }

  async #openConfirmed(id: string, knownNew: boolean): Promise<SessionManager | undefined> {
    const file = (await this.#filesOf(id, knownNew)).find(({ confirmed }) => confirmed)?.file;
    return file === undefined ? undefined : SessionManager.open(file, this.#options);
  }

  #create(record: ISessionRecord): TrackedSession {
    const manager = SessionManager.create(record.cwd, { ...this.#options, sessionDir: sessionDirFor(record.cwd, this.#agentDir) });
    manager.newSession({ id: record.id });
    const tracked = new TrackedSession(manager, this.#options.redact);
    this.#open.set(record.id, tracked);
    return tracked;
  }
}
