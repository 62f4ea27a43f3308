import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Diagnostic } from '@tessera/contracts';
import { writeFileAtomic } from './atomic-write.js';
import { findRecordProblem, historyFromMessages } from './session-record.js';

export interface MigrateSessionHistoryResult {
  /** Ids whose file gained a `history` field. */
  migrated: string[];
  /** Ids that already had one. */
  unchanged: string[];
  /** Files left alone because they could not be read or are not session records. */
  diagnostics: Diagnostic[];
}

/**
 * Backfills `history` from `messages` for session files written before the field existed
 * (spec: Session Data Migration). Idempotent: files that have `history` are not rewritten;
 * files it cannot understand are reported and left untouched.
 */
export async function migrateSessionHistory(dir: string): Promise<MigrateSessionHistoryResult> {
  const base = resolve(dir);
  const result: MigrateSessionHistoryResult = { migrated: [], unchanged: [], diagnostics: [] };
  const names = (await readdir(base)).filter((name) => name.endsWith('.json') && !name.startsWith('.')).sort();
  for (const name of names) {
    const file = join(base, name);
    let record: Record<string, unknown>;
    try {
      const value: unknown = JSON.parse(await readFile(file, 'utf8'));
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('the top level is not an object');
      record = value as Record<string, unknown>;
    } catch (error) {
      result.diagnostics.push({ severity: 'error', file, message: `skipped, not readable JSON: ${(error as Error).message}` });
      continue;
    }
    if (Array.isArray(record.history)) {
      result.unchanged.push(String(record.id));
      continue;
    }
    if (typeof record.id !== 'string' || !Array.isArray(record.messages)) {
      result.diagnostics.push({ severity: 'error', file, message: 'skipped: a session record needs a string "id" and a "messages" array.' });
      continue;
    }
    const migrated = { ...record, history: historyFromMessages(record as never) };
    const problem = findRecordProblem(migrated);
    if (problem) {
      result.diagnostics.push({ severity: 'error', file, path: problem.path, message: `skipped: field "${problem.path}" is invalid: ${problem.message}` });
      continue;
    }
    await writeFileAtomic(file, `${JSON.stringify(migrated, null, 2)}\n`);
    result.migrated.push(record.id);
  }
  return result;
}
