import { dirname } from 'node:path';
import {
  matchesPattern,
  type SessionStorage,
  type SessionStorageStat,
  type SessionStorageWriter,
  type SessionStorageWriterOptions,
} from './session-storage.js';

interface MemoryFile {
  content: string;
  mtimeMs: number;
}

function missing(path: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, '${path}'`), { code: 'ENOENT' });
}

/**
 * A map-backed `SessionStorage` for tests and in-memory sessions. Paths are plain keys;
 * directories exist once created with `ensureDirSync` or implied by a file inside them.
 * Byte-oriented reads (prefix/tail) count UTF-16 code units, which is exact for ASCII.
 */
export class MemorySessionStorage implements SessionStorage {
  readonly #files = new Map<string, MemoryFile>();
  readonly #dirs = new Set<string>();
  #clock = 0;

  /** Monotonic mtimes, so "newest" is well defined even within one millisecond. */
  #now(): number {
    this.#clock = Math.max(this.#clock + 1, Date.now());
    return this.#clock;
  }

  ensureDirSync(dir: string): void {
    this.#dirs.add(dir);
  }

  existsSync(path: string): boolean {
    return this.#files.has(path) || this.#dirs.has(path);
  }

  readTextSync(path: string): string | undefined {
    return this.#files.get(path)?.content;
  }

  writeTextSync(path: string, text: string): void {
    this.#files.set(path, { content: text, mtimeMs: this.#now() });
  }

  /** Sets a file's mtime (tests of "newest file" selection). */
  setMtime(path: string, mtimeMs: number): void {
    const file = this.#files.get(path);
    if (!file) throw missing(path);
    file.mtimeMs = mtimeMs;
  }

  statSync(path: string): SessionStorageStat | undefined {
    const file = this.#files.get(path);
    if (file) return { size: Buffer.byteLength(file.content), mtimeMs: file.mtimeMs, isFile: true, isDirectory: false };
    if (this.#dirs.has(path) || [...this.#files.keys()].some((key) => dirname(key) === path)) {
      return { size: 0, mtimeMs: 0, isFile: false, isDirectory: true };
    }
    return undefined;
  }

  listFilesSync(dir: string, pattern: string): string[] {
    const names: string[] = [];
    for (const path of this.#files.keys()) {
      if (dirname(path) !== dir) continue;
      const name = path.slice(dir.length + 1);
      if (matchesPattern(name, pattern)) names.push(name);
    }
    return names;
  }

  listDirsSync(dir: string): string[] {
    const names = new Set<string>();
    const candidates = [...this.#dirs, ...[...this.#files.keys()].map((path) => dirname(path))];
    for (const candidate of candidates) if (dirname(candidate) === dir && candidate !== dir) names.add(candidate.slice(dir.length + 1));
    return [...names];
  }

  async exists(path: string): Promise<boolean> {
    return this.existsSync(path);
  }

  async readText(path: string): Promise<string | undefined> {
    return this.readTextSync(path);
  }

  async *readTextChunks(path: string): AsyncIterable<string> {
    const content = this.#files.get(path)?.content;
    if (content !== undefined && content !== '') yield content;
  }

  async readTextPrefix(path: string, maxBytes: number): Promise<string> {
    return (this.#files.get(path)?.content ?? '').slice(0, maxBytes);
  }

  async readTextTail(path: string, maxBytes: number): Promise<string> {
    const content = this.#files.get(path)?.content ?? '';
    return content.slice(Math.max(0, content.length - maxBytes));
  }

  async writeText(path: string, text: string): Promise<void> {
    this.writeTextSync(path, text);
  }

  async rename(from: string, to: string): Promise<void> {
    const file = this.#files.get(from);
    if (!file) throw missing(from);
    this.#files.delete(from);
    this.#files.set(to, file);
  }

  async unlink(path: string): Promise<void> {
    if (!this.#files.delete(path)) throw missing(path);
  }

  async fsyncDir(_dir?: string, _changedAt?: number): Promise<void> {
    // Nothing to make durable.
  }

  openWriter(path: string, options: SessionStorageWriterOptions): SessionStorageWriter {
    if (options.flags === 'wx' && this.#files.has(path)) return failedWriter(Object.assign(new Error(`EEXIST: file already exists, open '${path}'`), { code: 'EEXIST' }));
    if (options.flags !== 'a' || !this.#files.has(path)) this.writeTextSync(path, '');
    const append = (text: string): void => {
      const file = this.#files.get(path);
      if (!file) throw missing(path);
      file.content += text;
      file.mtimeMs = this.#now();
    };
    let error: Error | undefined;
    let closed = false;
    return {
      writeLine(line: string): void {
        if (error) throw error;
        if (closed) throw (error = new Error(`writer for ${path} is closed`));
        append(`${line}\n`);
      },
      async flush() {
        if (error) throw error;
      },
      async fsync() {
        if (error) throw error;
      },
      async close() {
        closed = true;
        if (error) throw error;
      },
      getError: () => error,
    };
  }
}

/** A writer whose file could not be opened: every call reports `error`. */
function failedWriter(error: Error): SessionStorageWriter {
  return {
    writeLine() {
      throw error;
    },
    flush: () => Promise.reject(error),
    fsync: () => Promise.reject(error),
    close: async () => undefined,
    getError: () => error,
  };
}
