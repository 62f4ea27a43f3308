import { statSync } from 'node:fs';
import type { NewestFiles } from './newest-files.js';
import type { StatWorker } from './stat-worker.js';

/** Paths per request to the stat worker: enough to amortise a message, few enough to start it early. */
const BATCH = 128;
/** While the worker has this many paths outstanding, the caller stats files itself. */
const BACKLOG_LIMIT = 512;

/** Shared, so stating allocates no options object per file. */
const STAT_OPTIONS = { bigint: false, throwIfNoEntry: false } as const;

/** A file's modification time as Glob has always read it: stat (a match is a regular file, so no link is followed); 0 if it vanished. */
export function modificationTime(path: string): number {
  return statSync(path, STAT_OPTIONS)?.mtimeMs ?? 0;
}

/**
 * Feeds matched files, with their modification times, into `NewestFiles`. Without a worker
 * each file is stat'ed at once. With one, the load is shared: paths go to the worker in
 * batches while it keeps up, and the caller stats a file itself whenever the worker is more
 * than `BACKLOG_LIMIT` paths behind, so neither thread idles and a slow or busy worker costs
 * nothing. `done` waits for the worker's answers. A batch the worker cannot answer (it failed
 * or was stopped) is stat'ed here, as is a path whose stat threw in the worker, so results
 * and errors are the same either way.
 */
export class FileTimes {
  private batch: string[] = [];
  private readonly requests: Array<Promise<void>> = [];

  constructor(
    private readonly newest: NewestFiles,
    private readonly worker: StatWorker | undefined,
  ) {}

  add(path: string): void {
    const worker = this.worker;
    if (worker === undefined || worker.backlog() >= BACKLOG_LIMIT) {
      this.newest.offer(path, modificationTime(path));
      return;
    }
    this.batch.push(path);
    if (this.batch.length >= BATCH) this.send(worker);
  }

  /** Resolves once every added file has been offered; rejects with the first error of a local stat. */
  async done(): Promise<void> {
    if (this.batch.length > 0 && this.worker) this.send(this.worker);
    await Promise.all(this.requests);
  }

  private send(worker: StatWorker): void {
    const paths = this.batch;
    this.batch = [];
    this.requests.push(
      worker.mtimes(paths).then(
        (times) => {
          for (let index = 0; index < paths.length; index += 1) {
            const time = times[index]!;
            this.newest.offer(paths[index]!, Number.isNaN(time) ? modificationTime(paths[index]!) : time);
          }
        },
        () => {
          for (const path of paths) this.newest.offer(path, modificationTime(path));
        },
      ),
    );
  }
}
