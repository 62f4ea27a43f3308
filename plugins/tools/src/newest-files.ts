/**
 * The `limit` newest of the files Glob matched, and how many matched. Every match must be
 * considered (to count it, and because any of them may be among the newest) but only a bounded
 * number is listed, so files are kept in a buffer that is pruned whenever it holds four times
 * `limit`: a native numeric sort of the buffered times (no JavaScript comparator per element)
 * gives the `limit`-th newest time, and files older than it are dropped for good. After a
 * prune, an older file costs one comparison. Only the survivors are sorted with the full order.
 * This keeps the per-file cost low before the JIT has optimised anything — a short-lived tool
 * call mostly runs unoptimised — and keeps few objects alive across garbage collections.
 *
 * Order: modification time descending, then path ascending (plain string comparison), the
 * same total order Glob has always used, so ties are deterministic.
 */
export class NewestFiles {
  private paths: string[] = [];
  private times: number[] = [];
  /** Files older than this cannot be among the newest `limit`. */
  private threshold = -Infinity;
  private offered = 0;
  /** Buffer size that triggers the next prune; grows when many files tie at the threshold. */
  private pruneAt: number;

  constructor(private readonly limit: number) {
    this.pruneAt = limit * 4 + 64;
  }

  /** Every file offered so far. */
  get count(): number {
    return this.offered;
  }

  offer(path: string, mtimeMs: number): void {
    this.offered += 1;
    if (mtimeMs < this.threshold) return;
    this.paths.push(path);
    this.times.push(mtimeMs);
    if (this.paths.length >= this.pruneAt) this.prune();
  }

  /** The `limit` newest files, newest first. */
  sorted(): Array<{ path: string; mtimeMs: number }> {
    if (this.limit <= 0) return [];
    this.prune();
    const entries = this.paths.map((path, index) => ({ path, mtimeMs: this.times[index]! }));
    // Files tied at the threshold compete by path, so the cut is made after the full sort.
    return entries.sort(byNewest).slice(0, this.limit);
  }

  /** Drops every buffered file older than the `limit`-th newest (ties at it are all kept). */
  private prune(): void {
    const { paths, times, limit } = this;
    if (times.length <= limit) return;
    if (limit <= 0) {
      this.paths = [];
      this.times = [];
      this.threshold = Infinity;
      return;
    }
    const threshold = Float64Array.from(times).sort()[times.length - limit]!;
    const keptPaths: string[] = [];
    const keptTimes: number[] = [];
    for (let index = 0; index < times.length; index += 1) {
      if (times[index]! < threshold) continue;
      keptPaths.push(paths[index]!);
      keptTimes.push(times[index]!);
    }
    this.paths = keptPaths;
    this.times = keptTimes;
    this.threshold = threshold;
    this.pruneAt = Math.max(this.pruneAt, keptPaths.length * 2);
  }
}

function byNewest(a: { path: string; mtimeMs: number }, b: { path: string; mtimeMs: number }): number {
  return b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1);
}
