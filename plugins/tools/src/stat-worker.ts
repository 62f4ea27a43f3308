import { Worker } from 'node:worker_threads';

/**
 * The worker's whole program: stat each path it is sent, count the paths done in the shared
 * progress cell, and return the modification times. Evaluated from this string, so it needs no
 * file beside the built module and runs the same from `src/` under vitest and from `dist/`.
 * Modules come from `process.getBuiltinModule`: an evaluated worker inherits `--input-type`, so
 * the same text must run as CommonJS or as an ES module. NaN marks a path whose stat threw; the caller repeats that stat itself, so an
 * error surfaces exactly as it would without the worker.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
const { statSync } = process.getBuiltinModule('node:fs');
const progress = new Int32Array(workerData.progress);
const options = { bigint: false, throwIfNoEntry: false };
parentPort.on('message', ({ id, paths }) => {
  const times = new Float64Array(paths.length);
  for (let index = 0; index < paths.length; index += 1) {
    try {
      const stats = statSync(paths[index], options);
      times[index] = stats === undefined ? 0 : stats.mtimeMs;
    } catch {
      times[index] = NaN;
    }
  }
  Atomics.add(progress, 0, paths.length);
  parentPort.postMessage({ id, times }, [times.buffer]);
});
`;

/** Restarts allowed after the worker fails; past that Glob stats on the main thread only. */
const MAX_FAILURES = 3;
/** An idle worker is stopped after this long; the next Glob starts another. */
const IDLE_MS = 60_000;

interface Waiting {
  resolve(times: Float64Array): void;
  reject(error: Error): void;
}

/**
 * One process-wide worker thread that stats files for Glob. Glob needs every match's
 * modification time, and on a large tree those stats cost more than the directory walk; with
 * a second thread taking a share of them, the walk and the stats overlap. The caller balances
 * the load through `backlog()`: while the worker is behind, it stats files itself.
 *
 * The first Glob call starts the worker and stats everything itself; later calls use the
 * worker once it is online. The worker never keeps the process alive (it is referenced only
 * while a request is outstanding) and stops after a minute idle. If it fails, outstanding
 * requests are rejected (callers then stat those files themselves) and a later call starts a
 * new one, at most `MAX_FAILURES` times per process.
 */
export class StatWorker {
  private static instance: StatWorker | undefined;
  private static failures = 0;

  private readonly worker: Worker;
  private readonly progress = new Int32Array(new SharedArrayBuffer(4));
  private online = false;
  private retiring = false;
  private ended = false;
  private sent = 0;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();
  private idleTimer: NodeJS.Timeout | undefined;

  private constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, name: 'tessera-glob-stat', workerData: { progress: this.progress.buffer } });
    // Held only while it starts (a caller may be waiting for it) and while it answers; unref'd
    // once online. Unref'ing it at once did not hold: the 'message' listener added below refs the
    // port again, and an idle worker then kept the process alive for its minute.
    this.worker.once('online', () => {
      this.online = true;
      if (this.waiting.size === 0) this.worker.unref();
      this.armIdleTimer();
    });
    this.worker.on('message', (message: { id: number; times: Float64Array }) => {
      const waiting = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (this.waiting.size === 0) {
        this.worker.unref();
        this.armIdleTimer();
      }
      waiting?.resolve(message.times);
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`Glob's stat worker exited (code ${code}).`)));
  }

  /** The running worker, or undefined while it starts (it is started if need be) or once failures disabled it. */
  static available(): StatWorker | undefined {
    const current = StatWorker.instance;
    if (current) {
      if (!current.online || current.ended) return undefined;
      // A call is about to use it: the idle countdown starts again, so it is not retired mid-call.
      if (current.waiting.size === 0) current.armIdleTimer();
      return current;
    }
    if (StatWorker.failures >= MAX_FAILURES) return undefined;
    try {
      StatWorker.instance = new StatWorker();
    } catch {
      StatWorker.failures += 1;
    }
    return undefined;
  }

  /** Starts the worker if need be and resolves once it is online; undefined if it cannot run. */
  static async started(): Promise<StatWorker | undefined> {
    StatWorker.available();
    const current = StatWorker.instance;
    if (!current) return undefined;
    if (!current.online) {
      await new Promise<void>((resolve) => {
        current.worker.once('online', () => resolve());
        current.worker.once('exit', () => resolve());
      });
    }
    return current.online && StatWorker.instance === current ? current : undefined;
  }

  /** Stops the worker (tests; a process that wants its threads gone). A later Glob starts a new one. */
  static async stop(): Promise<void> {
    const current = StatWorker.instance;
    StatWorker.instance = undefined;
    if (current) await current.retire();
  }

  /** Paths sent to the worker that it has not stat'ed yet (over every caller). */
  backlog(): number {
    return (this.sent - Atomics.load(this.progress, 0)) | 0;
  }

  /** Paths the worker has stat'ed since it started. */
  completed(): number {
    return Atomics.load(this.progress, 0);
  }

  /** Modification times of `paths`, in order; NaN where the stat threw. Rejects if the worker fails first. */
  mtimes(paths: string[]): Promise<Float64Array> {
    // A message to a thread that has exited is dropped without an error: never wait for it.
    if (this.ended) return Promise.reject(new Error("Glob's stat worker has stopped."));
    return new Promise<Float64Array>((resolve, reject) => {
      const id = this.nextId;
      this.nextId += 1;
      if (this.waiting.size === 0) {
        this.worker.ref();
        this.clearIdleTimer();
      }
      this.waiting.set(id, { resolve, reject });
      try {
        this.worker.postMessage({ id, paths });
        this.sent = (this.sent + paths.length) | 0;
      } catch (error) {
        this.waiting.delete(id);
        if (this.waiting.size === 0) this.worker.unref();
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Test seam: ends the thread as a crash would, without the bookkeeping of `stop`. */
  crashForTesting(): Promise<number> {
    return this.worker.terminate();
  }

  private async retire(): Promise<void> {
    this.retiring = true;
    this.clearIdleTimer();
    await this.worker.terminate();
  }

  private armIdleTimer(): void {
    this.clearIdleTimer();
    this.idleTimer = setTimeout(() => {
      if (this.waiting.size > 0) return;
      if (StatWorker.instance === this) StatWorker.instance = undefined;
      void this.retire();
    }, IDLE_MS);
    this.idleTimer.unref();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private fail(error: Error): void {
    this.clearIdleTimer();
    if (StatWorker.instance === this) StatWorker.instance = undefined;
    // 'error' is followed by 'exit': one failure, counted once.
    if (!this.retiring && !this.ended) StatWorker.failures += 1;
    this.ended = true;
    this.online = false;
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}

/**
 * Stops Glob's stat worker thread now rather than after its minute idle (it never keeps a
 * process alive either way). For test harnesses that check for leftover threads; the next Glob
 * call starts a new worker.
 */
export function stopStatWorker(): Promise<void> {
  return StatWorker.stop();
}
