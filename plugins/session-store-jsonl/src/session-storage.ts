/** What `statSync` reports; `undefined` from `statSync` means the path does not exist. */
export interface SessionStorageStat {
  size: number;
  mtimeMs: number;
  isFile: boolean;
  isDirectory: boolean;
}

export interface SessionStorageWriterOptions {
  /** `a` appends to an existing file (created if missing); `w` truncates; `wx` creates a new file and fails (`EEXIST`) when one is there. */
  flags: 'a' | 'w' | 'wx';
}

/**
 * An ordered line sink. `writeLine` queues; `flush` resolves when every queued line was
 * handed to the operating system; `fsync` additionally forces it to the device. After a
 * failure every call rejects with the first error (see `getError`).
 */
export interface SessionStorageWriter {
  writeLine(line: string): void;
  flush(): Promise<void>;
  fsync(): Promise<void>;
  close(): Promise<void>;
  getError(): Error | undefined;
}

/**
 * Every file-system operation the session manager uses, so tests and in-memory sessions can
 * swap the disk for a map. Read methods return `undefined` (or `[]`) for missing paths
 * instead of throwing; write methods throw.
 */
export interface SessionStorage {
  ensureDirSync(dir: string): void;
  existsSync(path: string): boolean;
  readTextSync(path: string): string | undefined;
  writeTextSync(path: string, text: string): void;
  statSync(path: string): SessionStorageStat | undefined;
  /** File names (not paths) in `dir` matching `*`, `*.ext` or an exact name; not recursive. */
  listFilesSync(dir: string, pattern: string): string[];
  /** Sub-directory names of `dir`. */
  listDirsSync(dir: string): string[];

  exists(path: string): Promise<boolean>;
  readText(path: string): Promise<string | undefined>;
  /** The whole file as successive decoded chunks (never splitting a character), or nothing when missing. */
  readTextChunks(path: string): AsyncIterable<string>;
  /**
   * The whole file as successive raw byte chunks, or nothing when missing. A chunk is only
   * valid until the next one is requested (implementations may reuse one buffer). Optional:
   * loaders fall back to `readTextChunks`.
   */
  readByteChunks?(path: string): AsyncIterable<Uint8Array>;
  /**
   * The whole file's bytes in one synchronous read when it is at most `maxBytes` long;
   * `undefined` when it is larger or missing (loaders then stream it). Optional: one read
   * beats a stream of chunks for the many sessions that are small enough to hold at once.
   */
  readBytesIfSmallSync?(path: string, maxBytes: number): Uint8Array | undefined;
  /**
   * Like `readBytesIfSmallSync`, but hands the bytes to `onChunk` a chunk at a time, refilling
   * one small buffer (`onChunk` must copy what it keeps). Returns false, having called nothing,
   * when the file is missing, not a file, or larger than `maxBytes`. Preferred by the loader:
   * a few hundred KB of buffer is touched instead of the file's size in fresh pages.
   */
  readChunksIfSmallSync?(path: string, maxBytes: number, onChunk: (chunk: Uint8Array) => void): boolean;
  /** At most the first `maxBytes` bytes, decoded (a trailing partial character is dropped). */
  readTextPrefix(path: string, maxBytes: number): Promise<string>;
  /** At most the last `maxBytes` bytes, decoded (a leading partial character is dropped). */
  readTextTail(path: string, maxBytes: number): Promise<string>;
  writeText(path: string, text: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /**
   * Makes a rename or a new file inside `dir` durable. Best effort where the platform cannot.
   * `changedAt` (a `performance.now()` reading taken once the change was complete) lets a sync
   * that began after it, including one already done or under way, serve the call; by default
   * the sync must begin after the call.
   */
  fsyncDir(dir: string, changedAt?: number): Promise<void>;
  openWriter(path: string, options: SessionStorageWriterOptions): SessionStorageWriter;
}

/** Matches a file name against `*`, `*.ext` or an exact name. */
export function matchesPattern(name: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1));
  return name === pattern;
}
