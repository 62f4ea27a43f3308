import { BLOB_REF_PREFIX } from './blob-store.js';
import { isSessionHeader, sessionHeaderSchema, type FileEntry, type SessionEntry, type SessionHeader } from './entries.js';
import { FileSessionStorage } from './file-session-storage.js';
import { JsonlParser, type JsonlProblem } from './jsonl.js';
import type { SessionStorage } from './session-storage.js';

export type SessionFileLoad =
  | { status: 'missing' }
  /** Zero bytes or only whitespace. */
  | { status: 'empty' }
  /** Content without a valid header on its first line: never overwritten in place. */
  | { status: 'invalid'; reason: string }
  | {
      status: 'ok';
      /** Header first, then entries in file order (not yet migrated). */
      fileEntries: FileEntry[];
      problems: JsonlProblem[];
      tornTail: boolean;
      endsWithoutNewline: boolean;
      /** Indexes into `fileEntries` of lines that mention a blob ref. */
      blobLines: number[];
    };

/** Reads and leniently parses a session file in chunks (the whole text is never held at once). */
export async function readSessionFile(storage: SessionStorage, path: string): Promise<SessionFileLoad> {
  const parser = new JsonlParser(BLOB_REF_PREFIX);
  let sawText = false;
  // Raw bytes when the storage offers them: each line is decoded and parsed as it arrives,
  // so neither the file text nor a chunk-sized string is ever held.
  if (storage.readByteChunks) {
    for await (const chunk of storage.readByteChunks(path)) {
      if (chunk.length > 0) sawText = true;
      parser.pushBytes(chunk);
    }
  } else {
    for await (const chunk of storage.readTextChunks(path)) {
      if (chunk !== '') sawText = true;
      parser.push(chunk);
    }
  }
  if (!sawText) return (await storage.exists(path)) ? { status: 'empty' } : { status: 'missing' };
  const result = parser.end();
  const first = result.values[0];
  if (!first) {
    return result.problems.length === 0 ? { status: 'empty' } : { status: 'invalid', reason: 'no parseable line' };
  }
  if (!isSessionHeader(first)) {
    return { status: 'invalid', reason: `line ${result.lines[0] ?? 1} is not a session header (expected {"type":"session","id":…})` };
  }
  const checked = sessionHeaderSchema.safeParse(first);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return { status: 'invalid', reason: `header field "${issue?.path.join('.') ?? '?'}": ${issue?.message ?? 'invalid'}` };
  }
  return {
    status: 'ok',
    fileEntries: result.values as unknown as FileEntry[],
    problems: result.problems,
    tornTail: result.tornTail,
    endsWithoutNewline: result.endsWithoutNewline,
    blobLines: result.marked,
  };
}

/**
 * Header + entries of a session file, or `[]` when the file is missing, empty or has no
 * valid header. Malformed lines are skipped. No migration is applied.
 */
export async function loadEntriesFromFile(path: string, storage: SessionStorage = new FileSessionStorage()): Promise<FileEntry[]> {
  const load = await readSessionFile(storage, path);
  return load.status === 'ok' ? load.fileEntries : [];
}

/** Header and entries; takes `fileEntries` apart in place (no copy of a large array), so it must not be used afterwards. */
export function splitFileEntries(fileEntries: FileEntry[]): { header: SessionHeader; entries: SessionEntry[] } {
  const header = fileEntries.shift() as SessionHeader;
  return { header, entries: fileEntries as SessionEntry[] };
}
