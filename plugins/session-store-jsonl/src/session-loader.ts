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
      /** 1-based line number of each of `fileEntries` (the header's first). */
      lines: number[];
      /** Lines that were skipped (damaged, or a torn last line), in file order. */
      problems: JsonlProblem[];
      tornTail: boolean;
      endsWithoutNewline: boolean;
      /** Indexes into `fileEntries` of lines that mention a blob ref. */
      blobLines: number[];
    };

/**
 * Files up to this size are read synchronously (in chunks of one reused buffer where the
 * storage can, else in one read; the parser decodes a small window of lines at a time); larger
 * ones are streamed in chunks with the event loop free between them.
 */
export const WHOLE_READ_MAX_BYTES = 16 * 1024 * 1024;

const optionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';

/**
 * A header the schema certainly accepts, checked by hand: the schema (compiled on its first
 * use, which costs more than the whole check) then only runs for headers that may be invalid,
 * to say why.
 */
function isPlainValidHeader(header: SessionHeader): boolean {
  const { version, id, timestamp, cwd, title, parentSession } = header as Record<string, unknown>;
  return (
    (version === undefined || (Number.isSafeInteger(version) && (version as number) > 0)) &&
    typeof id === 'string' &&
    id !== '' &&
    typeof timestamp === 'string' &&
    typeof cwd === 'string' &&
    optionalString(title) &&
    optionalString(parentSession)
  );
}

/** Reads and leniently parses a session file (the whole text is never held as one string). */
export async function readSessionFile(storage: SessionStorage, path: string): Promise<SessionFileLoad> {
  const parser = new JsonlParser(BLOB_REF_PREFIX);
  let sawText = false;
  const onChunk = (chunk: Uint8Array): void => {
    if (chunk.length > 0) sawText = true;
    parser.pushBytes(chunk);
  };
  let read = false;
  if (storage.readChunksIfSmallSync) {
    read = storage.readChunksIfSmallSync(path, WHOLE_READ_MAX_BYTES, onChunk);
  } else {
    const whole = storage.readBytesIfSmallSync?.(path, WHOLE_READ_MAX_BYTES);
    if (whole !== undefined) {
      read = true;
      onChunk(whole);
    }
  }
  if (!read && storage.readByteChunks) {
    // Raw bytes when the storage offers them: lines are decoded and parsed as they arrive,
    // so the file text is never held.
    for await (const chunk of storage.readByteChunks(path)) onChunk(chunk);
  } else if (!read) {
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
  const checked = isPlainValidHeader(first) ? undefined : sessionHeaderSchema.safeParse(first);
  if (checked && !checked.success) {
    const issue = checked.error.issues[0];
    return { status: 'invalid', reason: `header field "${issue?.path.join('.') ?? '?'}": ${issue?.message ?? 'invalid'}` };
  }
  return {
    status: 'ok',
    fileEntries: result.values as unknown as FileEntry[],
    lines: result.lines,
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
