import type { ReadAccess, ToolContext } from '@tessera/contracts';
import { readdirSync, type Dirent } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { PathFilter } from './glob-pattern.js';
import type { IgnoreRules } from './ignore-rules.js';

export interface WalkOptions {
  root: string;
  rules: IgnoreRules;
  /** Which files to hand over (by name / relative path), and which directories to skip; all when absent. */
  filter?: PathFilter;
  signal: AbortSignal;
  /** Synchronous work on one file. */
  onFile(path: string): void;
  /** Longest stretch of synchronous work before yielding to the event loop. Default 10 ms. */
  sliceMs?: number;
}

/**
 * The Read-deny test for one Glob or Grep call: asked once, so the rules are prepared once per
 * call; undefined when there is no `ReadAccess` or it denies nothing, so the search then pays
 * nothing per file. `readAccess` may be a function, resolved now (the plugins pass a lookup of
 * the optional `ReadAccess` service).
 */
export function deniedPathsFor(
  readAccess: ReadAccess | (() => ReadAccess | undefined) | undefined,
  context: Pick<ToolContext, 'cwd' | 'sessionId'>,
): ((absolutePath: string) => boolean) | undefined {
  const access = typeof readAccess === 'function' ? readAccess() : readAccess;
  return access?.deniedPaths({ cwd: context.cwd, sessionId: context.sessionId });
}

const toPosix = sep === '/' ? (path: string) => path : (path: string) => path.split(sep).join('/');

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Depth-first walk with synchronous file-system calls, done in slices of at most `sliceMs`
 * between which the event loop runs (so aborts, timers and streams are served). Synchronous
 * calls avoid a thread-pool round trip per file, which dominates when searching many small
 * files. Symbolic links are not followed (a link cannot lead a search out of the workspace);
 * ignored and excluded entries, and directories the filter prunes, are never visited. The
 * stack holds at most depth × width entries.
 */
export async function walkFiles(options: WalkOptions): Promise<void> {
  const { root, rules, filter, signal } = options;
  const sliceMs = options.sliceMs ?? 10;
  const stack: string[] = [root];
  let sliceStart = performance.now();
  let sinceCheck = 0;
  while (stack.length > 0) {
    if (signal.aborted) return;
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable directory: skipped, like grep -s
    }
    const kept = rules.filter(dir, entries);
    // Reverse so the stack pops sub-directories in name order.
    for (let index = kept.length - 1; index >= 0; index -= 1) {
      const entry = kept[index]!;
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (filter?.prunes?.(toPosix(relative(root, path)), entry.name)) continue;
      stack.push(path);
    }
    for (const entry of kept) {
      if (!entry.isFile()) continue;
      const path = join(dir, entry.name);
      if (filter && !filter.matches(toPosix(relative(root, path)), entry.name)) continue;
      options.onFile(path);
      if (++sinceCheck >= 16) {
        sinceCheck = 0;
        if (performance.now() - sliceStart > sliceMs) {
          await yieldToEventLoop();
          if (signal.aborted) return;
          sliceStart = performance.now();
        }
      }
    }
  }
}
