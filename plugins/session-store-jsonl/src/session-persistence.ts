import { basename, dirname, join } from 'node:path';
import type { BlobStore } from './blob-store.js';
import type { SessionEntry, SessionHeader } from './entries.js';
import { SessionPersistenceError } from './errors.js';
import { redactEntry, serializeEntry, type RedactText } from './persist-transform.js';
import type { SessionStorage, SessionStorageWriter } from './session-storage.js';

export type WarningSink = (message: string, details?: Record<string, unknown>) => void;

/**
 * The write pipeline of one session file. Every operation runs in order on one promise
 * chain; appends are batched into the file writer; full rewrites go through a temp file,
 * fsync, rename and a directory fsync. The first failure is latched: it is reported once
 * and re-thrown by every later call, because writing past a gap would corrupt the tree.
 */
export class SessionPersistence {
  #file: string | undefined;
  #writer: SessionStorageWriter | undefined;
  #chain: Promise<void> = Promise.resolve();
  #error: SessionPersistenceError | undefined;
  /** Lines queued for the next append step; the step owns the array once it has started. */
  #batch: { file: string | undefined; lines: string[] } | undefined;
  /** The file ends without a newline (torn or hand-edited); the next append must start a new line. */
  #needsNewline = false;
  /** A directory a file was created in by `create`, not yet fsynced, and when the file was there. */
  #unsyncedDir: { dir: string; changedAt: number } | undefined;
  /** The file holds the header and every entry so far, so entries can be appended one by one. */
  onDisk = false;

  constructor(
    private readonly storage: SessionStorage,
    private readonly blobs: BlobStore | undefined,
    private readonly warn: WarningSink,
    private readonly redact?: RedactText,
  ) {}

  get file(): string | undefined {
    return this.#file;
  }

  get error(): SessionPersistenceError | undefined {
    return this.#error;
  }

  /** Points at another file. Pending work for the old file still completes in order. */
  retarget(file: string | undefined, state: { onDisk: boolean; needsNewline?: boolean }): void {
    this.#batch = undefined;
    this.#file = file;
    this.onDisk = state.onDisk;
    const needsNewline = state.needsNewline ?? false;
    this.#enqueue('close', async () => {
      await this.#closeWriter();
      const unsynced = this.#unsyncedDir;
      this.#unsyncedDir = undefined;
      if (unsynced !== undefined) await this.storage.fsyncDir(unsynced.dir, unsynced.changedAt);
      this.#needsNewline = needsNewline;
    });
  }

  assertHealthy(): void {
    if (this.#error) throw this.#error;
  }

  append(entry: SessionEntry): void {
    const line = serializeEntry(entry, this.blobs, this.redact);
    if (this.#batch) {
      this.#batch.lines.push(line);
      return;
    }
    const batch = { file: this.#file, lines: [line] };
    this.#batch = batch;
    this.#enqueue('append to', async () => {
      if (this.#batch === batch) this.#batch = undefined;
      if (!batch.file) return;
      this.#writer ??= this.storage.openWriter(batch.file, { flags: 'a' });
      if (this.#needsNewline) {
        this.#writer.writeLine('');
        this.#needsNewline = false;
      }
      for (const item of batch.lines) this.#writer.writeLine(item);
      const failure = this.#writer.getError();
      if (failure) throw failure;
    });
  }

  async #closeWriter(): Promise<void> {
    const writer = this.#writer;
    this.#writer = undefined;
    await writer?.close();
  }

  /** Atomically replaces the file with header + entries. */
  rewrite(header: SessionHeader, entries: readonly SessionEntry[]): Promise<void> {
    return this.#writeWhole('rewrite', header, entries, async (file, lines) => {
      await writeAtomically(this.storage, file, lines);
      this.#needsNewline = false;
    });
  }

  /**
   * Queues a step that replaces the whole file: header + entries serialised now (they may change
   * before the chain reaches the step), later appends go after them, the current writer closed first.
   */
  #writeWhole(operation: string, header: SessionHeader, entries: readonly SessionEntry[], write: (file: string, lines: string[]) => Promise<void>): Promise<void> {
    const lines = [
      JSON.stringify(this.redact ? redactEntry(header, this.redact) : header),
      ...entries.map((entry) => serializeEntry(entry, this.blobs, this.redact)),
    ];
    this.onDisk = true;
    this.#batch = undefined;
    const file = this.#file;
    return this.#enqueue(operation, async () => {
      if (!file) return;
      await this.#closeWriter();
      await write(file, lines);
    });
  }

  /**
   * Writes header + entries to a file that does not exist yet (a new session's first save):
   * created exclusively and kept open for the appends that follow, which saves the temp file,
   * rename and second open of `rewrite`. A crash mid-write leaves a torn last line, which
   * loading tolerates as it does for any append. When the file exists after all, this is a
   * `rewrite`. The directory entry is made durable by the next `flush`.
   */
  create(header: SessionHeader, entries: readonly SessionEntry[]): Promise<void> {
    return this.#writeWhole('create', header, entries, async (file, lines) => {
      this.storage.ensureDirSync(dirname(file));
      const writer = this.storage.openWriter(file, { flags: 'wx' });
      try {
        for (const line of lines) writer.writeLine(line);
        await writer.flush();
      } catch (error) {
        await writer.close().catch(() => undefined);
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        await writeAtomically(this.storage, file, lines);
        this.#needsNewline = false;
        return;
      }
      this.#writer = writer;
      this.#needsNewline = false;
      // The file exists now (its open completed in the flush): any directory sync from here on covers it.
      this.#unsyncedDir = { dir: dirname(file), changedAt: performance.now() };
    });
  }

  /** Waits for every queued write, then forces the file (and a directory it was just created in) to disk. */
  async flush(): Promise<void> {
    await this.#chain;
    this.assertHealthy();
    const writer = this.#writer;
    if (!writer) return;
    try {
      await writer.fsync();
      const unsynced = this.#unsyncedDir;
      this.#unsyncedDir = undefined;
      if (unsynced !== undefined) await this.storage.fsyncDir(unsynced.dir, unsynced.changedAt);
    } catch (error) {
      this.#latch('fsync', error);
    }
    this.assertHealthy();
  }

  async close(): Promise<void> {
    await this.flush();
    const writer = this.#writer;
    this.#writer = undefined;
    if (!writer) return;
    try {
      await writer.close();
    } catch (error) {
      this.#latch('close', error);
    }
    this.assertHealthy();
  }

  #enqueue(operation: string, step: () => Promise<void>): Promise<void> {
    const run = this.#chain.then(async () => {
      if (this.#error) return;
      try {
        await step();
      } catch (error) {
        this.#latch(operation, error);
      }
    });
    this.#chain = run;
    return run;
  }

  #latch(operation: string, error: unknown): void {
    if (this.#error) return;
    this.#error = error instanceof SessionPersistenceError ? error : new SessionPersistenceError(this.#file, operation, error);
    this.warn(this.#error.message, { file: this.#file, operation });
  }
}

/** temp file → write → fsync → close → rename over the target → fsync the directory. */
export async function writeAtomically(storage: SessionStorage, file: string, lines: readonly string[]): Promise<void> {
  const dir = dirname(file);
  storage.ensureDirSync(dir);
  const temp = join(dir, `.${basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
  const writer = storage.openWriter(temp, { flags: 'w' });
  try {
    for (const line of lines) writer.writeLine(line);
    await writer.fsync();
    await writer.close();
  } catch (error) {
    await writer.close().catch(() => undefined);
    await storage.unlink(temp).catch(() => undefined);
    throw error;
  }
  await storage.rename(temp, file);
  await storage.fsyncDir(dir);
}
