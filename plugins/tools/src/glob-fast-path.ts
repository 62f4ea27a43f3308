import { readdirSync, type Dirent } from 'node:fs';
import { sep } from 'node:path';
import type { IgnoreRules } from './ignore-rules.js';
import { FileTimes } from './file-times.js';
import { NewestFiles } from './newest-files.js';
import type { StatWorker } from './stat-worker.js';

/** Characters a fast-path name pattern may contain literally: none has a glob meaning. */
const LITERAL = /^[A-Za-z0-9_.-]$/;
/** One brace alternative: plain name characters (no `..`, which would be a brace range). */
const ALTERNATIVE = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/** Whether a file name matches. */
export type NameMatcher = (name: string) => boolean;

/**
 * The file-name matcher for patterns of the form `**∕<name>`, where `<name>` uses only plain
 * name characters, `*`, `?` and one level of `{a,b}` alternatives of plain names — the shape
 * of nearly every Glob call (`**∕*.ts`, `**∕*.{ts,tsx}`, `**∕package.json`). Undefined for
 * anything else (path prefixes, character classes, extglobs, escapes, negation, `**` inside a
 * name): those go through fast-glob.
 *
 * Within that subset fast-glob (with `dot: true`) matches a name exactly as this test does:
 * `*` is any run of characters including an empty one and leading dots, `?` is one character.
 * `glob-fast-path.test.ts` checks the two against each other on a tree of awkward names.
 * (`∕` in these comments stands for `/`, which after `**` would end the comment.)
 */
export function compileNamePattern(pattern: string): NameMatcher | undefined {
  if (!pattern.startsWith('**/')) return undefined;
  const name = pattern.slice(3);
  if (name === '' || name.includes('**')) return undefined;
  let source = '';
  for (let index = 0; index < name.length; index += 1) {
    const char = name[index]!;
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else if (char === '.') source += '\\.';
    else if (char === '{') {
      const close = name.indexOf('}', index);
      if (close === -1) return undefined;
      const alternatives = name.slice(index + 1, close).split(',');
      if (alternatives.length < 2 || !alternatives.every((alternative) => ALTERNATIVE.test(alternative))) return undefined;
      source += `(?:${alternatives.map((alternative) => alternative.replace(/\./g, '\\.')).join('|')})`;
      index = close;
    } else if (LITERAL.test(char)) source += char;
    else return undefined;
  }
  // `*.ts`, `*.test.ts`: a suffix test, the commonest shape, needs no RegExp.
  if (/^\*[A-Za-z0-9_.-]+$/.test(name)) {
    const suffix = name.slice(1);
    return (candidate) => candidate.endsWith(suffix);
  }
  const regex = new RegExp(`^${source}$`);
  return (candidate) => regex.test(candidate);
}

export interface NewestMatches {
  /** Up to `limit` matching files, newest first. */
  files: Array<{ path: string; mtimeMs: number }>;
  /** All matching files. */
  count: number;
  /**
   * Directories the pattern named (through a brace group, say) that lead outside the workspace
   * roots, as written in the pattern: they were not searched.
   */
  outside?: string[];
}

export interface WalkOptions {
  /** Shares the stats with this worker (see `FileTimes`); without one every file is stat'ed inline. */
  worker?: StatWorker | undefined;
  /** Checked between slices of the walk; an aborted walk stops early with what it found so far. */
  signal?: AbortSignal | undefined;
  /** Absolute paths that must not be listed (Read deny rules); they are neither counted nor stat'ed. */
  denied?: ((path: string) => boolean) | undefined;
}

/** Directories read between two looks at the clock. */
const DIRECTORIES_PER_CHECK = 64;
/** The walk gives the event loop a turn after this long, so timers, aborts and answers run. */
const SLICE_MS = 10;

/**
 * Walks `root` for regular files whose name matches `name`, with the same filtering the
 * fast-glob path applies (ignore rules per directory, symbolic links neither followed nor
 * listed, unreadable directories skipped, denied paths dropped) and one `stat` per match for its modification
 * time, shared with the stat worker when there is one. Directories are read synchronously —
 * a thread-pool round trip per directory would cost more than the read — in slices of about
 * `SLICE_MS`, with an event-loop turn between slices. Purpose-built because on a 20,000-file
 * tree fast-glob's own walk and matching cost twice the whole of this; paths are joined by
 * concatenation for the same reason.
 */
export async function newestMatchingFiles(root: string, name: NameMatcher, rules: IgnoreRules, limit: number, options: WalkOptions = {}): Promise<NewestMatches> {
  const newest = new NewestFiles(limit);
  const times = new FileTimes(newest, options.worker);
  const stack: string[] = [root];
  let sliceStart = performance.now();
  let read = 0;
  while (stack.length > 0) {
    scanDirectory(stack.pop()!, name, rules, stack, times, options.denied);
    read += 1;
    if (read % DIRECTORIES_PER_CHECK === 0 && performance.now() - sliceStart > SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) break;
      sliceStart = performance.now();
    }
  }
  await times.done();
  return { files: newest.sorted(), count: newest.count };
}

// One call per directory rather than one long loop: V8 optimises small, often called
// functions within the first call, while a single long-running loop waits for on-stack
// replacement, which on a busy machine can take several calls.
function scanDirectory(dir: string, name: NameMatcher, rules: IgnoreRules, stack: string[], times: FileTimes, denied: WalkOptions['denied']): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable (or not a directory): skipped, as fast-glob's suppressErrors does
  }
  const prefix = dir.endsWith(sep) ? dir : dir + sep;
  // With no .gitignore rule in force only excluded directory names filter, checked inline.
  const kept = rules.chainFor(dir, entries).length === 0 ? entries : rules.filter(dir, entries);
  for (let index = 0; index < kept.length; index += 1) {
    const entry = kept[index]!;
    if (entry.isDirectory()) {
      if (!rules.isExcludedDirectory(entry.name)) stack.push(prefix + entry.name);
    } else if (entry.isFile() && name(entry.name)) {
      const path = prefix + entry.name;
      // Per match, not per file, and only a comparison when no deny rule applies.
      if (denied === undefined || !denied(path)) times.add(path);
    }
  }
}
