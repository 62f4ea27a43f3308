/** Per path: the promise that settles when the last queued holder releases it. */
const tails = new Map<string, Promise<void>>();

/**
 * Runs `work` while holding a process-wide lock on `path`; holders of the same path run one
 * after another, in the order they asked. Write and Edit hold it from the freshness check
 * through the write and the read-record update: without it, two sessions that both read a
 * file could each pass the check, and the second write would silently drop the first one's
 * change. With it, the second sees the first's write (and is refused as a stale read). The
 * lock is per process and per path string (the tools pass the resolved real path); it does
 * not guard against other processes, which the freshness check reports instead.
 */
export async function withPathLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(path);
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous ? previous.then(() => held) : held;
  tails.set(path, tail);
  try {
    if (previous) await previous;
    return await work();
  } finally {
    release();
    // The last holder leaves no entry behind, so the map holds only paths in use.
    if (tails.get(path) === tail) tails.delete(path);
  }
}

/** Paths with a holder or a queue right now; for tests that check nothing is left behind. */
export function lockedPathCount(): number {
  return tails.size;
}
