import { close as closeFd, closeSync, fsync as fsyncFd, open as openFd, existsSync, fdatasync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { open, readFile, rename, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import {
  matchesPattern,
  type SessionStorage,
  type SessionStorageStat,
  type SessionStorageWriter,
  type SessionStorageWriterOptions,
} from './session-storage.js';
import { CoalescedRuns } from './coalesced-runs.js';

/** Read size for streaming loads: a few hundred lines per read, one reused buffer. */
const CHUNK_BYTES = 256 * 1024;

function isMissing(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The real file system (node:fs). */
export class FileSessionStorage implements SessionStorage {
  ensureDirSync(dir: string): void {
    mkdirSync(dir, { recursive: true });
  }

  existsSync(path: string): boolean {
    return existsSync(path);
  }

  readTextSync(path: string): string | undefined {
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  writeTextSync(path: string, text: string): void {
    writeFileSync(path, text);
  }

  statSync(path: string): SessionStorageStat | undefined {
    try {
      const info = statSync(path);
      return { size: info.size, mtimeMs: info.mtimeMs, isFile: info.isFile(), isDirectory: info.isDirectory() };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  listFilesSync(dir: string, pattern: string): string[] {
    return this.#list(dir, (entry) => entry.isFile() && matchesPattern(entry.name, pattern));
  }

  listDirsSync(dir: string): string[] {
    return this.#list(dir, (entry) => entry.isDirectory());
  }

  #list(dir: string, keep: (entry: import('node:fs').Dirent) => boolean): string[] {
    try {
      return readdirSync(dir, { withFileTypes: true }).filter(keep).map((entry) => entry.name);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  async exists(path: string): Promise<boolean> {
    try {
      await stat(path);
      return true;
    } catch {
      return false;
    }
  }

  async readText(path: string): Promise<string | undefined> {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async *readTextChunks(path: string): AsyncIterable<string> {
    const decoder = new StringDecoder('utf8');
    for await (const bytes of this.readByteChunks(path)) yield decoder.write(bytes as Buffer);
    const rest = decoder.end();
    if (rest) yield rest;
  }

  /**
   * Runs `read` on the open file when it is a regular file of at most `maxBytes` (closed after);
   * `undefined` when it is missing, not a file or larger.
   */
  #withSmallFile<T>(path: string, maxBytes: number, read: (fd: number, size: number) => T): T | undefined {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      const info = fstatSync(fd);
      return info.isFile() && info.size <= maxBytes ? read(fd, info.size) : undefined;
    } finally {
      closeSync(fd);
    }
  }

  // Synchronous: for a file of a few MB one read is far cheaper than a stream of thread-pool
  // round trips, and the bytes live outside the JS heap.
  readBytesIfSmallSync(path: string, maxBytes: number): Uint8Array | undefined {
    return this.#withSmallFile(path, maxBytes, (fd, size) => {
      const buffer = Buffer.allocUnsafe(size);
      let length = 0;
      while (length < buffer.length) {
        const bytesRead = readSync(fd, buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      // Grown since the stat (a writer appending): stream it instead, so nothing is cut off.
      if (length === buffer.length && readSync(fd, Buffer.allocUnsafe(1), 0, 1, length) !== 0) return undefined;
      return buffer.subarray(0, length);
    });
  }

  // One buffer refilled per chunk, read synchronously. Reading a 5 MB session into one fresh
  // buffer costs a page fault per 4 KB page touched (about 5 ms here, against 2 ms this way).
  readChunksIfSmallSync(path: string, maxBytes: number, onChunk: (chunk: Uint8Array) => void): boolean {
    const read = this.#withSmallFile(path, maxBytes, (fd, size) => {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(size, 1)));
      // To the end, however long the file has grown since the stat (a writer appending).
      for (let position = 0; ; ) {
        const bytesRead = readSync(fd, buffer, 0, buffer.length, position);
        if (bytesRead === 0) return true;
        position += bytesRead;
        onChunk(buffer.subarray(0, bytesRead));
      }
    });
    return read === true;
  }

  // One buffer, refilled per chunk; the loader decodes it a window of whole lines at a time
  // (smaller than a chunk), and the buffer never outlives the load.
  async *readByteChunks(path: string): AsyncIterable<Uint8Array> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    try {
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
        if (bytesRead === 0) break;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  }

  async readTextPrefix(path: string, maxBytes: number): Promise<string> {
    return this.#readRange(path, maxBytes, 'head');
  }

  async readTextTail(path: string, maxBytes: number): Promise<string> {
    return this.#readRange(path, maxBytes, 'tail');
  }

  // Synchronous reads: listing touches many small ranges, and the sync calls avoid a
  // thread-pool round trip per file.
  async #readRange(path: string, maxBytes: number, where: 'head' | 'tail'): Promise<string> {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      if (isMissing(error)) return '';
      throw error;
    }
    try {
      const size = where === 'tail' ? statSync(path).size : maxBytes;
      const length = Math.min(maxBytes, where === 'tail' ? size : maxBytes);
      const buffer = Buffer.allocUnsafe(length);
      const position = where === 'tail' ? Math.max(0, size - length) : 0;
      const bytesRead = readSync(fd, buffer, 0, length, position);
      let bytes = buffer.subarray(0, bytesRead);
      if (where === 'tail' && position > 0) {
        // Skip UTF-8 continuation bytes so decoding starts on a character boundary.
        let start = 0;
        while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
        bytes = bytes.subarray(start);
      }
      const decoder = new StringDecoder('utf8');
      return decoder.write(bytes);
    } finally {
      closeSync(fd);
    }
  }

  async writeText(path: string, text: string): Promise<void> {
    await writeFile(path, text);
  }

  async rename(from: string, to: string): Promise<void> {
    await rename(from, to);
  }

  async unlink(path: string): Promise<void> {
    await unlink(path);
  }

  /**
   * Makes the directory's entries durable. Calls for the same directory share syncs
   * (`CoalescedRuns`): under load (a server creating many sessions in one project folder) a
   * new file is usually covered by a sync another session started after the file was created,
   * so there are far fewer syncs than new files; each caller still gets a sync that began after
   * its change.
   */
  fsyncDir(dir: string, changedAt?: number): Promise<void> {
    return this.#dirSyncs.request(dir, changedAt);
  }

  readonly #dirSyncs = new CoalescedRuns(syncDirectory);

  openWriter(path: string, options: SessionStorageWriterOptions): SessionStorageWriter {
    return new FileSessionWriter(path, options.flags);
  }
}

/**
 * Batches queued lines into one write per event-loop turn; operations run strictly in order.
 * An existing file is opened and written synchronously (pi and Claude Code append the same
 * way): a small append takes microseconds, while a thread-pool round trip costs the main thread
 * more than that and, on a busy machine, a context switch. Creating a file (`w`, `wx`), `fsync`
 * and `close` are asynchronous, because each can wait milliseconds on the device or journal.
 */
class FileSessionWriter implements SessionStorageWriter {
  readonly #path: string;
  readonly #flags: 'a' | 'w' | 'wx';
  #fd: number | undefined;
  #pending: string[] = [];
  #chain: Promise<void> = Promise.resolve();
  #scheduled = false;
  #error: Error | undefined;

  constructor(path: string, flags: 'a' | 'w' | 'wx') {
    this.#path = path;
    this.#flags = flags;
    // Opened in order with the writes; an open failure surfaces through getError()/flush().
    // Creating a file changes its folder, and on ext4 that waits for a journal commit in
    // progress (another session's fsync): under load, hundreds of µs to milliseconds with the
    // event loop stopped. So a new file is opened on the thread pool (the server bench: about
    // 20% more turns/s); an existing one, appended to, is opened synchronously.
    this.#enqueue(async () => {
      this.#fd =
        this.#flags === 'a'
          ? openSync(this.#path, this.#flags)
          : await new Promise<number>((resolve, reject) => openFd(this.#path, this.#flags, (error, fd) => (error ? reject(error) : resolve(fd))));
    });
  }

  getError(): Error | undefined {
    return this.#error;
  }

  writeLine(line: string): void {
    if (this.#error) throw this.#error;
    this.#pending.push(line, '\n');
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#enqueue(async () => this.#drain());
    }
  }

  async flush(): Promise<void> {
    await this.#chain;
    if (this.#error) throw this.#error;
  }

  async fsync(): Promise<void> {
    this.#enqueue(() => {
      const fd = this.#fd;
      return fd === undefined ? Promise.resolve() : new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
    });
    await this.flush();
  }

  async close(): Promise<void> {
    // Runs even after a latched write error, so a failed writer never leaks its file descriptor.
    this.#chain = this.#chain.then(async () => {
      const fd = this.#fd;
      this.#fd = undefined;
      if (fd === undefined) return;
      await new Promise<void>((resolve) => closeFd(fd, (error) => {
        if (error) this.#fail(error);
        resolve();
      }));
    });
    await this.flush();
  }

  #enqueue(operation: () => Promise<void>): void {
    this.#chain = this.#chain.then(async () => {
      if (this.#error) return;
      try {
        await operation();
      } catch (error) {
        this.#fail(error);
      }
    });
  }

  #drain(): void {
    this.#scheduled = false;
    const data = Buffer.from(this.#pending.join(''), 'utf8');
    this.#pending = [];
    const fd = this.#fd;
    if (fd === undefined) throw new Error(`${this.#path} is not open`);
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
  }

  #fail(error: unknown): void {
    this.#error ??= error instanceof Error ? error : new Error(String(error));
  }
}

/** Opens the directory and fsyncs it; never rejects (some platforms cannot sync a directory). */
async function syncDirectory(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    // Opening is quick; only the flush itself goes to the thread pool.
    fd = openSync(dir, 'r');
    const opened = fd;
    await new Promise<void>((resolve, reject) => fsyncFd(opened, (error) => (error ? reject(error) : resolve())));
  } catch {
    // Some platforms (Windows) cannot open or sync a directory; the rename itself still happened.
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // Nothing was written through this descriptor.
      }
    }
  }
}
