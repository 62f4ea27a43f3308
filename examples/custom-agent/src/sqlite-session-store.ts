import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SessionStore, TesseraError, type ISessionRecord } from '@tessera/contracts';
import { sessionRecordSchema } from '@tessera/contracts/schemas';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import Database from 'better-sqlite3';

export interface SqliteSessionStoreOptions {
  /** The database file; its folder is created. `:memory:` keeps sessions for the process only. */
  path: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  cwd TEXT NOT NULL,
  name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_updated_at ON sessions (updated_at DESC);
`;

/** A stored row that is not a session record (edited by hand, written by something else). */
export class SessionRecordCorruptError extends TesseraError {
  constructor(path: string, id: string, problem: string) {
    super(`Session ${id} in ${path} cannot be read: ${problem}. Delete it (relnotes keeps no other copy) or restore the file from a backup.`, {
      code: 'session_record_corrupt',
      category: 'io',
      recoverable: false,
      details: { file: path, sessionId: id },
    });
  }
}

/**
 * The `SessionStore` port over one SQLite file: one row per session, the record as JSON beside
 * the columns a listing needs. A save replaces the row in one statement, so a crash never
 * leaves half a session; the `change` hint is not needed for that and is ignored.
 */
/**
 * Keeps better-sqlite3's native wrappers reachable for the life of the process. With
 * better-sqlite3 12 on Node 24.19 and later, a database or statement wrapper collected by an
 * idle garbage collection aborts the process (nodejs/node#65446); a store makes five.
 */
const keepAlive: object[] = [];
function kept<T extends object>(handle: T): T {
  keepAlive.push(handle);
  return handle;
}

export class SqliteSessionStore implements SessionStore {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement<[string, string, string | null, string, string, string]>;
  private readonly selectOne: Database.Statement<[string], { record: string }>;
  private readonly selectAll: Database.Statement<[], { id: string; record: string }>;
  private readonly remove: Database.Statement<[string]>;

  constructor(readonly path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = kept(new Database(path));
    // `exec`, not `pragma()`: it makes no statement wrapper.
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;');
    this.db.exec(SCHEMA);
    this.upsert = kept(
      this.db.prepare(
        `INSERT INTO sessions (id, cwd, name, created_at, updated_at, record) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET cwd = excluded.cwd, name = excluded.name, updated_at = excluded.updated_at, record = excluded.record`,
      ),
    );
    this.selectOne = kept(this.db.prepare('SELECT record FROM sessions WHERE id = ?'));
    this.selectAll = kept(this.db.prepare('SELECT id, record FROM sessions ORDER BY updated_at DESC, id'));
    this.remove = kept(this.db.prepare('DELETE FROM sessions WHERE id = ?'));
  }

  save(record: ISessionRecord): void {
    if (typeof record.id !== 'string' || record.id === '') {
      throw new TesseraError('Cannot save a session record without an id.', { code: 'invalid_session_record', category: 'validation', recoverable: false });
    }
    this.upsert.run(record.id, record.cwd, typeof record.name === 'string' ? record.name : null, record.createdAt, record.updatedAt, JSON.stringify(record));
  }

  load(id: string): ISessionRecord | undefined {
    const row = this.selectOne.get(id);
    return row === undefined ? undefined : this.parse(id, row.record);
  }

  /** Newest first, as the port asks. */
  list(): ISessionRecord[] {
    return this.selectAll.all().map((row) => this.parse(row.id, row.record));
  }

  delete(id: string): void {
    this.remove.run(id);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private parse(id: string, text: string): ISessionRecord {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new SessionRecordCorruptError(this.path, id, `the stored JSON does not parse (${(error as Error).message})`);
    }
    const checked = sessionRecordSchema.safeParse(value);
    if (!checked.success) throw new SessionRecordCorruptError(this.path, id, checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
    return checked.data as ISessionRecord;
  }
}

/**
 * Provides `SessionStore` as a `SqliteSessionStore`. The factory only checks its options; each
 * kernel opens its own connection when the store is first resolved and closes it at shutdown.
 */
export function sqliteSessionStore(options: SqliteSessionStoreOptions): Plugin {
  if (typeof options?.path !== 'string' || options.path === '') throw new PluginOptionsError('sqliteSessionStore()', 'session-store-sqlite', 'path', 'must be a file path');
  const path = options.path;
  return definePlugin({
    name: 'session-store-sqlite',
    provides: [SessionStore],
    register({ bind }) {
      bind(SessionStore)
        .toResolvedValue(() => new SqliteSessionStore(path))
        .inSingletonScope()
        .onDeactivation((store) => (store as SqliteSessionStore).close());
    },
  });
}
