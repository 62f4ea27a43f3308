import type { ReadAccess, Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import fg from 'fast-glob';
import { readdirSync, type Dirent } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { FileTimes } from './file-times.js';
import { deniedPathsFor } from './file-walker.js';
import { compileNamePattern, newestMatchingFiles, type NewestMatches, type WalkOptions } from './glob-fast-path.js';
import { IgnoreRules, type SearchFilterOptions } from './ignore-rules.js';
import { NewestFiles } from './newest-files.js';
import { errorText, fail, succeed } from './result.js';
import { resolveSearchRoot } from './search-root.js';
import { StatWorker } from './stat-worker.js';
import { isInside, realpathOrUndefined, WorkspaceRoots, type WorkspaceOptions } from './workspace.js';

export interface GlobToolOptions extends WorkspaceOptions, SearchFilterOptions {
  /** Paths returned at most; a notice says when more matched. Default 100. */
  maxResults?: number;
  /**
   * Share the modification-time stats with a background worker thread (started by the first
   * call, stopped after a minute idle). Default true; false stats everything on the calling thread.
   */
  statWorker?: boolean;
  /**
   * Read permission rules: files they deny are left out of the results and the count, as
   * Claude Code applies `Read(…)` deny rules to Glob. A function is asked on every call (the
   * plugin looks up the `ReadAccess` service that way). Default: nothing is denied.
   */
  readAccess?: ReadAccess | (() => ReadAccess | undefined);
}

export interface GlobToolData {
  filenames: string[];
  numFiles: number;
  truncated: boolean;
}

export const globInputSchema = z.object({
  pattern: z.string().min(1).describe('The glob pattern to match files against, e.g. "**/*.ts" or "src/**/*.{ts,tsx}"'),
  path: z.string().optional().describe('The directory to search in. Defaults to the current working directory'),
});

export type GlobInput = z.infer<typeof globInputSchema>;

/**
 * fast-glob reads directories through this adapter, which drops ignored entries as each
 * directory is read. That applies nested `.gitignore` files and prunes heavy folders in the
 * same single walk, instead of listing everything and filtering afterwards.
 */
function filteringFs(rules: IgnoreRules) {
  return {
    readdirSync(path: string, options?: { withFileTypes?: boolean }): Dirent[] | string[] {
      const kept = rules.filter(path, readdirSync(path, { withFileTypes: true }));
      return options?.withFileTypes ? kept : kept.map((entry) => entry.name);
    },
  };
}

/** Makes an absolute pattern relative to the search root; refuses ones that climb out of it. */
function relativePattern(pattern: string, root: string): { ok: true; pattern: string } | { ok: false; message: string } {
  let candidate = pattern;
  if (isAbsolute(candidate)) {
    if (!isInside(candidate, root) && !candidate.startsWith(root + sep)) {
      return { ok: false, message: `Absolute pattern "${pattern}" is outside the search path ${root}. Pass the directory as path and a relative pattern.` };
    }
    candidate = relative(root, candidate) || '.';
  }
  if (candidate.split(/[\\/]/).includes('..')) {
    return { ok: false, message: `Pattern "${pattern}" climbs out of the search path with "..". Set path to the directory instead.` };
  }
  return { ok: true, pattern: candidate.split(sep).join('/') };
}

/**
 * Directory names taken literally when they lead a pattern: nothing in them has a glob
 * meaning. Parentheses are literal (see `literalParentheses`) unless they open an extglob,
 * which needs one of `@ ! + ? *` before them — all excluded here.
 */
const PLAIN_SEGMENT = /^[^*?[\]{}!+@\\]+$/;

/** Characters that make the following `(` an extglob group: `@(a|b)`, `!(x)`, `+(x)`, `?(x)`, `*(x)`. */
const EXTGLOB_LEAD = new Set(['@', '!', '+', '?', '*']);

/**
 * Escapes parentheses that do not belong to an extglob, so they match themselves, as in
 * ripgrep's globs and in git's: Next.js route groups (`app/(marketing)/page.tsx`) and names
 * like `photo (1).png` are common, while fast-glob would read `(x)` as a group matching `x`.
 * Escapes and character classes are copied unchanged.
 */
export function literalParentheses(pattern: string): string {
  let out = '';
  const open: boolean[] = []; // per open parenthesis: is it an extglob group?
  let inClass = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index]!;
    if (char === '\\') {
      out += char + (pattern[index + 1] ?? '');
      index += 1;
    } else if (inClass) {
      out += char;
      if (char === ']') inClass = false;
    } else if (char === '[') {
      inClass = true;
      out += char;
    } else if (char === '(') {
      const extglob = index > 0 && EXTGLOB_LEAD.has(pattern[index - 1]!);
      open.push(extglob);
      out += extglob ? '(' : '\\(';
    } else if (char === ')') {
      const extglob = open.pop();
      out += extglob === true ? ')' : '\\)';
    } else out += char;
  }
  return out;
}

/**
 * Splits the leading directories without glob syntax off a pattern (`src/lib/**∕*.ts` →
 * `src/lib` and `**∕*.ts`); the last segment always stays in the pattern. Searching from
 * `src/lib` then means what passing it as `path` means: the walk starts there (the `**∕<name>`
 * walk applies), the `.gitignore` files above it apply, and a directory named explicitly is
 * searched even if ignored, as ripgrep searches a path it is given.
 */
export function splitStaticPrefix(pattern: string): { prefix: string; rest: string } {
  const segments = pattern.split('/');
  let count = 0;
  while (count < segments.length - 1 && segments[count] !== '' && segments[count] !== '.' && PLAIN_SEGMENT.test(segments[count]!)) count += 1;
  return { prefix: segments.slice(0, count).join('/'), rest: segments.slice(count).join('/') };
}

/**
 * The `limit` newest files matching `pattern` under `root`, and how many matched. `**∕<name>`
 * patterns (the common case) take a purpose-built walk with a compiled name matcher; every
 * other pattern goes through fast-glob. Both filter identically and order identically
 * (`fastPath: false` forces fast-glob, so tests can hold the two against each other).
 * Nothing outside `roots` (real paths; default `root` alone) is searched or listed.
 */
export async function newestMatches(
  pattern: string,
  root: string,
  rules: IgnoreRules,
  limit: number,
  options: WalkOptions & { fastPath?: boolean; roots?: readonly string[] } = {},
): Promise<NewestMatches> {
  // POSIX only: on Windows fast-glob returns `/`-separated absolute paths, which the walk
  // (joining with `\`) would not reproduce.
  const name = options.fastPath !== false && sep === '/' ? compileNamePattern(pattern) : undefined;
  if (name) return newestMatchingFiles(root, name, rules, limit, options);
  const escaped = literalParentheses(pattern);
  const globOptions = {
    cwd: root,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    suppressErrors: true,
    fs: filteringFs(rules) as never,
  };
  const roots = options.roots ?? [root];
  const bases = checkBases(escaped, globOptions, roots);
  // The synchronous walk is markedly faster (no thread-pool round trip per directory); it
  // blocks the event loop for the walk, about 20 ms per 20,000 files.
  const matches = bases.outside.length === 0 ? fg.sync(escaped, globOptions) : bases.kept.length === 0 ? [] : fg.sync(bases.kept, globOptions);
  // A pattern without magic (`src/gen/a.ts`) is answered by a stat, not a directory read, so
  // the rules are applied to what it found.
  const literal = !fg.isDynamicPattern(escaped);
  const contained = realContainment(bases.linked, roots);
  const newest = new NewestFiles(limit);
  const times = new FileTimes(newest, options.worker);
  const denied = options.denied;
  for (const path of matches) {
    if (isInside(path, root) && contained(path) && !(literal && rules.isIgnoredFile(path)) && !denied?.(path)) times.add(path);
  }
  await times.done();
  return { files: newest.sorted(), count: newest.count, ...(bases.outside.length > 0 ? { outside: bases.outside } : {}) };
}

interface BaseCheck {
  /** The expanded patterns whose base directory is inside the roots. */
  kept: string[];
  /** Absolute base directories not known to be their own real path (reached through a link, or unresolvable). */
  linked: string[];
  /** Bases, as written, whose real path is outside the roots. */
  outside: string[];
}

/**
 * fast-glob expands braces into one task per static base (`{escape-dir,x}/**` → `escape-dir`
 * and `x`) and opens each base as a path, through any symbolic link in it, while
 * `followSymbolicLinks: false` only keeps the walk below the base from entering links. So the
 * bases are where a pattern can leave the workspace: each one fast-glob derives is resolved
 * here, and those outside the roots are not searched. Below a base nothing is followed, so a
 * base that is its own real path needs no further check on what is found under it.
 */
function checkBases(pattern: string, options: fg.Options, roots: readonly string[]): BaseCheck {
  const check: BaseCheck = { kept: [], linked: [], outside: [] };
  for (const task of fg.generateTasks(pattern, options)) {
    if (task.base === '.') {
      check.kept.push(...task.patterns);
      continue;
    }
    const lexical = resolve(options.cwd!, task.base);
    const real = realpathOrUndefined(lexical);
    if (real !== undefined && !roots.some((root) => isInside(real, root))) {
      check.outside.push(task.base);
      continue;
    }
    check.kept.push(...task.patterns);
    if (real !== lexical) check.linked.push(lexical);
  }
  return check;
}

/**
 * A test that a found file's real path is inside `roots`, for files under `linked` bases: one
 * `realpath` per directory, cached. Files elsewhere pass without a system call (their path is
 * already real). The file itself is never a link: `onlyFiles` without following links skips links.
 */
function realContainment(linked: readonly string[], roots: readonly string[]): (path: string) => boolean {
  if (linked.length === 0) return () => true;
  const directories = new Map<string, boolean>();
  return (path) => {
    if (!linked.some((base) => isInside(path, base))) return true;
    const directory = dirname(path);
    let inside = directories.get(directory);
    if (inside === undefined) {
      const real = realpathOrUndefined(directory);
      inside = real !== undefined && roots.some((root) => isInside(real, root));
      directories.set(directory, inside);
    }
    return inside;
  };
}

/**
 * Glob: fast-glob (plus a purpose-built walk for `**∕<name>` patterns) over the search path,
 * newest files first, `.gitignore` and heavy folders respected, symbolic links not followed,
 * files that Read permission rules deny left out, at most `maxResults` paths.
 */
export function globTool(options: GlobToolOptions = {}): Tool<GlobInput, GlobToolData> {
  const maxResults = options.maxResults ?? 100;
  const useWorker = options.statWorker ?? true;
  return defineTool<GlobInput, GlobToolData>({
    name: 'Glob',
    description:
      'Fast file pattern matching, e.g. "**/*.js" or "src/**/*.ts". Returns matching file paths, most recently modified first ' +
      `(at most ${maxResults}). Respects .gitignore and skips folders such as node_modules and .git. Use Grep to search file contents.`,
    inputSchema: globInputSchema,
    async execute(input, context) {
      const base = await resolveSearchRoot(input.path, context.cwd, options);
      if (!base.ok) return fail(base.message, base.code);
      const pattern = relativePattern(input.pattern, base.path);
      if (!pattern.ok) return fail(pattern.message, 'invalid_pattern');
      const split = splitStaticPrefix(pattern.pattern);
      const prefix = split.prefix;
      // `src/` names a directory: list the files in it.
      const rest = split.rest === '' ? '**' : split.rest;
      // The prefix is resolved like a path (real path, inside the workspace): a linked directory cannot lead out of it.
      const root = prefix === '' ? base : await resolveSearchRoot(join(base.path, prefix), context.cwd, options);
      if (!root.ok) {
        if (root.code === 'not_found') return succeed('No files found', { filenames: [], numFiles: 0, truncated: false });
        return fail(root.message, root.code);
      }
      try {
        const rules = IgnoreRules.create(root.path, root.workspaceRoot, options);
        const worker = useWorker ? StatWorker.available() : undefined;
        const denied = deniedPathsFor(options.readAccess, context);
        const found = await newestMatches(rest, root.path, rules, maxResults, { worker, signal: context.signal, denied, roots: root.roots });
        if (context.signal.aborted) return fail('Glob aborted.', 'aborted');
        const truncated = found.count > maxResults;
        const filenames = found.files.map((entry) => entry.path);
        let output = filenames.length === 0 ? 'No files found' : filenames.join('\n');
        if (truncated) output += `\n(Results are truncated: showing ${maxResults} of ${found.count}. Use a more specific path or pattern.)`;
        if (found.outside) output += `\n(Not searched: ${found.outside.join(', ')} — outside the workspace (${new WorkspaceRoots(options).describe(context.cwd)}), through a symbolic link or "..".)`;
        return succeed(output, { filenames, numFiles: found.count, truncated });
      } catch (error) {
        return fail(`Glob failed: ${errorText(error)}`, 'io_error');
      }
    },
  });
}
