import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

/** One recorded prompt. `createdAt` is in Unix seconds. */
export interface HistoryEntry {
  id: number;
  prompt: string;
  createdAt: number;
  cwd: string | null;
}

export interface HistoryStorageOptions {
  /** Database file; default `~/.tessera/agent/history.db`. `:memory:` works for tests. */
  path?: string;
  /**
   * Where a failed background insert is reported; default a `TESSERA_HISTORY_WARNING` process
   * warning (the `promptHistory()` plugin reports to the kernel's `Diagnostics` instead).
   */
  onWarning?: (message: string) => void;
}

const MAX_LIMIT = 1000;

export function defaultHistoryPath(): string {
  return join(homedir(), '.tessera', 'agent', 'history.db');
}

function clampLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 0;
  return Math.min(MAX_LIMIT, Math.max(0, Math.floor(limit)));
}

/** Each token quoted (inner `"` doubled) and prefix-matched, all ANDed: user text never reaches FTS syntax. */
export function toFtsQuery(query: string): string | undefined {
  const tokens = query.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) return undefined;
  return tokens.map((token) => `"${token.replace(/"/g, '""')}"*`).join(' ');
}

interface Row {
  id: number;
  prompt: string;
  created_at: number;
  cwd: string | null;
}
const toEntry = (row: Row): HistoryEntry => ({ id: row.id, prompt: row.prompt, createdAt: row.created_at, cwd: row.cwd });

/**
 * Prompt recall and search on SQLite (WAL) with an FTS5 index kept in sync by a trigger.
 * `add` returns at once and inserts on the next turn of the event loop, so recording a
 * prompt never delays the turn; consecutive repeats are skipped.
 */
/** Native wrappers kept reachable until the process exits: see `retain`. */
const retained: object[] = [];

/**
 * better-sqlite3 12 wraps databases and statements in `node::ObjectWrap`. On Node 24.19 and
 * later, a wrapper collected by a garbage collection that runs outside JavaScript (an idle GC)
 * aborts the whole process in its destructor (nodejs/node#65446; better-sqlite3 13 avoids it but
 * needs Node 22). A store makes a handful, so they are never let go: nothing here is ever
 * collected, and `PRAGMA`s go through `exec`, which makes no wrapper.
 */
function retain<T extends object>(handle: T): T {
  retained.push(handle);
  return handle;
}

export class HistoryStorage {
  readonly #db: Database.Database;
  readonly #warn: (message: string) => void;
  readonly #insert: Database.Statement<[string, string | null]>;
  readonly #recent: Database.Statement<[number], Row>;
  readonly #search: Database.Statement<[string, number], Row>;
  #lastPrompt: string | undefined;
  #pending = new Set<Promise<void>>();

  constructor(options: HistoryStorageOptions = {}) {
    const path = options.path ?? defaultHistoryPath();
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.#warn = options.onWarning ?? ((message) => process.emitWarning(message, { code: 'TESSERA_HISTORY_WARNING' }));
    this.#db = retain(new Database(path));
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    this.#migrate();
    this.#insert = retain(this.#db.prepare('INSERT INTO history (prompt, cwd) VALUES (?, ?)'));
    this.#recent = retain(this.#db.prepare('SELECT id, prompt, created_at, cwd FROM history ORDER BY created_at DESC, id DESC LIMIT ?'));
    this.#search = retain(
      this.#db.prepare(
        'SELECT h.id, h.prompt, h.created_at, h.cwd FROM history_fts f JOIN history h ON h.id = f.rowid WHERE history_fts MATCH ? ORDER BY h.created_at DESC, h.id DESC LIMIT ?',
      ),
    );
    const last = retain(this.#db.prepare('SELECT prompt FROM history ORDER BY id DESC LIMIT 1')).get() as { prompt: string } | undefined;
    this.#lastPrompt = last?.prompt;
  }

  #migrate(): void {
    const hadFts = retain(this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history_fts'")).get() !== undefined;
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        prompt TEXT NOT NULL,
        created_at INTEGER NOT NULL DEFAULT (unixepoch()),
        cwd TEXT
      );
      CREATE INDEX IF NOT EXISTS idx_history_created_at ON history(created_at DESC);
      CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(prompt, content='history', content_rowid='id');
      CREATE TRIGGER IF NOT EXISTS history_ai AFTER INSERT ON history BEGIN
        INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
      END;
    `);
    // An index created after rows already existed must be filled once.
    if (!hadFts) this.#db.exec("INSERT INTO history_fts(history_fts) VALUES ('rebuild')");
  }

  /** Records a prompt (trimmed) unless it is empty or equal to the previous one. */
  add(prompt: string, cwd?: string): void {
    const text = prompt.trim();
    if (text === '' || text === this.#lastPrompt) return;
    this.#lastPrompt = text;
    const done = new Promise<void>((resolve) => {
      setImmediate(() => {
        try {
          this.#insert.run(text, cwd ?? null);
        } catch (error) {
          this.#warn(`Could not record prompt history: ${(error as Error).message}`);
        }
        resolve();
      });
    });
    this.#pending.add(done);
    void done.then(() => this.#pending.delete(done));
  }

  /** Resolves once every `add` so far has been written. */
  async flush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  /** Newest first; `limit` is clamped to 0–1000. */
  getRecent(limit = 50): HistoryEntry[] {
    try {
      return this.#recent.all(clampLimit(limit)).map(toEntry);
    } catch {
      return [];
    }
  }

  /** Full-text search; every token must match as a prefix. Bad input returns `[]`, never throws. */
  search(query: string, limit = 50): HistoryEntry[] {
    try {
      const match = typeof query === 'string' ? toFtsQuery(query) : undefined;
      if (match === undefined) return [];
      return this.#search.all(match, clampLimit(limit)).map(toEntry);
    } catch {
      return [];
    }
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.#db.open) this.#db.close();
  }
}
