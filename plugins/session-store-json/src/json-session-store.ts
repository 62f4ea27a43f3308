import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Diagnostic, DiagnosticReport, ParseResult, SessionStore } from '@tessera/contracts';
import { writeFileAtomic } from './atomic-write.js';
import { findRecordProblem, parseSessionRecord, SessionRecordError, type JsonSessionRecord } from './session-record.js';
import { assertValidSessionId, isValidSessionId } from './session-id.js';

export interface JsonSessionStoreOptions {
  /** Where `{id}.json` files live (default `~/.tessera/sessions`). */
  baseDir?: string;
  /**
   * Told about every file `list()` skipped. Default: a `TESSERA_SESSION_STORE` process warning;
   * the `jsonSessionStore()` plugin sends it to the kernel's `Diagnostics` reporter instead.
   */
  onDiagnostic?: (diagnostic: Diagnostic) => void;
}

export const DEFAULT_SESSIONS_DIR = join(homedir(), '.tessera', 'sessions');

/**
 * A file `list()` skipped, as a `Diagnostics` report (code `TESSERA_SESSION_STORE`). The file
 * and line travel in their own fields, so a message that starts with them loses that prefix.
 */
export function skippedFileReport(diagnostic: Diagnostic): DiagnosticReport {
  const { file, line, path, severity } = diagnostic;
  const message = diagnostic.message.startsWith(`${file}:`) ? diagnostic.message.slice(file.length).replace(/^(:\d+(:\d+)?)?: /, '') : diagnostic.message;
  return {
    severity,
    code: 'TESSERA_SESSION_STORE',
    source: 'session-store-json',
    message: `Skipped a session file: ${message}`,
    file,
    ...(line === undefined ? {} : { line }),
    ...(path === undefined ? {} : { path }),
  };
}

// Used without a kernel (no Diagnostics reporter): a process warning, as before.
const reportAsWarning = (diagnostic: Diagnostic): void => {
  process.emitWarning(`Skipped a session file: ${diagnostic.message}`, { code: 'TESSERA_SESSION_STORE' });
};

/**
 * `SessionStore` as one pretty-printed JSON file per session (spec: SessionStore). Writes
 * are atomic, ids are validated before they touch a path, and unreadable files are never
 * deleted or overwritten by reads: `load()` throws a located error, `list()` skips and reports.
 */
export class JsonSessionStore implements SessionStore {
  readonly baseDir: string;
  private readonly onDiagnostic: (diagnostic: Diagnostic) => void;

  constructor(options: JsonSessionStoreOptions = {}) {
    this.baseDir = resolve(options.baseDir ?? DEFAULT_SESSIONS_DIR);
    this.onDiagnostic = options.onDiagnostic ?? reportAsWarning;
  }

  /** The file a session id maps to. Throws `InvalidSessionIdError` for ids that could escape `baseDir`. */
  getFilePath(id: string): string {
    assertValidSessionId(id);
    return join(this.baseDir, `${id}.json`);
  }

  async save(record: JsonSessionRecord): Promise<void> {
    const file = this.getFilePath(record?.id);
    const problem = findRecordProblem(record);
    if (problem) {
      throw new SessionRecordError(`refusing to save: field "${problem.path}" is invalid: ${problem.message}.`, { file, path: problem.path, id: record.id });
    }
    await mkdir(this.baseDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`);
  }

  async load(id: string): Promise<JsonSessionRecord | undefined> {
    const file = this.getFilePath(id);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const record = parseSessionRecord(text, file);
    if (record.id !== id) {
      throw new SessionRecordError(`holds session "${record.id}", not "${id}". Rename the file to "${record.id}.json" or fix its id.`, { file, path: 'id' });
    }
    return record;
  }

  /** All readable sessions, newest `updatedAt` first. Unreadable files are skipped and reported. */
  async list(): Promise<JsonSessionRecord[]> {
    const { value, diagnostics } = await this.listWithDiagnostics();
    for (const diagnostic of diagnostics) this.onDiagnostic(diagnostic);
    return value;
  }

  /** `list()` that returns what it skipped instead of reporting it. */
  async listWithDiagnostics(): Promise<ParseResult<JsonSessionRecord[]>> {
    const diagnostics: Diagnostic[] = [];
    const records: JsonSessionRecord[] = [];
    for (const name of await this.recordFileNames()) {
      const file = join(this.baseDir, name);
      const id = name.slice(0, -'.json'.length);
      if (!isValidSessionId(id)) {
        diagnostics.push({ severity: 'warning', file, message: `"${id}" is not a valid session id, so the file is ignored. Rename it.` });
        continue;
      }
      try {
        const record = parseSessionRecord(await readFile(file, 'utf8'), file);
        if (record.id !== id) throw new SessionRecordError(`holds session "${record.id}", not "${id}".`, { file, path: 'id' });
        records.push(record);
      } catch (error) {
        if (error instanceof SessionRecordError) diagnostics.push(error.toDiagnostic());
        else diagnostics.push({ severity: 'error', file, message: `could not be read: ${(error as Error).message}` });
      }
    }
    records.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
    return { value: records, diagnostics };
  }

  /** Deletes a session file; no-op when it does not exist. */
  async delete(id: string): Promise<void> {
    await rm(this.getFilePath(id), { force: true });
  }

  private async recordFileNames(): Promise<string[]> {
    try {
      const names = await readdir(this.baseDir);
      // Dot-files are in-flight temp files of atomic writes (and never valid ids).
      return names.filter((name) => name.endsWith('.json') && !name.startsWith('.')).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
