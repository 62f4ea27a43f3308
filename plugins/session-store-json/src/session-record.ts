import {
  messageToHistoryEntry,
  TesseraError,
  type Diagnostic,
  type IHistoryEntry,
  type ISessionRecord,
  type Message,
} from '@tessera/contracts';
import { sessionRecordSchema } from '@tessera/contracts/schemas';

/**
 * Every field of the spec's ISessionRecord table. Fields the kernel does not know
 * (background tasks, memory audit, sandbox reference) are stored opaquely.
 */
export interface JsonSessionRecord extends ISessionRecord {
  backgroundTasks?: unknown[];
  backgroundTaskEvents?: unknown[];
  backgroundJobGroups?: unknown[];
  backgroundJobGroupEvents?: unknown[];
  memoryEvents?: unknown[];
  usedMemoryReferences?: unknown[];
  contextReferences?: unknown[];
  sandboxSnapshotId?: string;
}

const OPAQUE_ARRAYS = [
  'backgroundTasks',
  'backgroundTaskEvents',
  'backgroundJobGroups',
  'backgroundJobGroupEvents',
  'memoryEvents',
  'usedMemoryReferences',
  'contextReferences',
] as const;

export class SessionRecordError extends TesseraError {
  constructor(message: string, details: { file: string; line?: number; column?: number; path?: string; id?: string }, cause?: unknown) {
    const where = [details.file, details.line !== undefined ? `${details.line}:${details.column ?? 1}` : undefined].filter(Boolean).join(':');
    super(`${where}: ${message}`, { code: 'invalid_session_record', category: 'validation', recoverable: false, details, cause });
  }

  toDiagnostic(): Diagnostic {
    const details = this.details as { file: string; line?: number; column?: number; path?: string };
    return { severity: 'error', file: details.file, line: details.line, column: details.column, path: details.path, message: this.message };
  }
}

/** Legacy records have `messages` only; their timeline is rebuilt from them, one chat entry each. */
export function historyFromMessages(record: { id: string; createdAt?: unknown; messages: readonly Message[] }): IHistoryEntry[] {
  const timestamp = typeof record.createdAt === 'string' ? record.createdAt : new Date(0).toISOString();
  return record.messages.map((message, index) => messageToHistoryEntry(message, { id: `${record.id}-m${index}`, timestamp }));
}

/** Checks a record against the spec's table; returns the problem (field path + reason) or undefined. */
export function findRecordProblem(value: unknown): { path: string; message: string } | undefined {
  const parsed = sessionRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { path: issue.path.join('.') || '(root)', message: issue.message };
  }
  const record = value as Record<string, unknown>;
  for (const field of OPAQUE_ARRAYS) {
    if (record[field] !== undefined && !Array.isArray(record[field])) return { path: field, message: 'expected an array' };
  }
  if (record.sandboxSnapshotId !== undefined && typeof record.sandboxSnapshotId !== 'string') {
    return { path: 'sandboxSnapshotId', message: 'expected a string' };
  }
  return undefined;
}

/** Parses a record file's text; legacy records get `history` backfilled. Throws a located error. */
export function parseSessionRecord(text: string, file: string): JsonSessionRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const { line, column } = locate(text, error);
    throw new SessionRecordError(`not valid JSON (${(error as Error).message}). Fix or delete the file.`, { file, line, column }, error);
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (record.history === undefined && Array.isArray(record.messages) && typeof record.id === 'string') {
      record.history = historyFromMessages(record as { id: string; messages: Message[] });
    }
  }
  const problem = findRecordProblem(value);
  if (problem) {
    throw new SessionRecordError(`field "${problem.path}" is invalid: ${problem.message}. Fix or delete the file.`, { file, path: problem.path });
  }
  return value as JsonSessionRecord;
}

/** Line and column of a JSON.parse failure, from the position V8 reports. */
function locate(text: string, error: unknown): { line?: number; column?: number } {
  const message = (error as Error)?.message ?? '';
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (lineColumn) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]) };
  const position = /position (\d+)/.exec(message);
  if (!position) return {};
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  return { line, column: before.length - before.lastIndexOf('\n') };
}
