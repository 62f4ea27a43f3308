import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Diagnostic, SettingSource } from '@tessera/contracts';
import { extractCompactInstructions } from './compact-instructions.js';
import { readTextFile } from './read-text.js';

export interface ContextFile {
  /** Absolute path. */
  path: string;
  /** `user` (~), `project` (AGENTS.md / CLAUDE.md), `local` (CLAUDE.local.md), `import` (@path). */
  scope: 'user' | 'project' | 'local' | 'import';
  /** The text, possibly truncated (then it ends with a visible notice). */
  content: string;
  truncated: boolean;
  /** For imports: the file whose `@path` pulled this one in. */
  importedFrom?: string;
}

export interface LoadContextOptions {
  cwd: string;
  /**
   * Only these sources' files are read (`user`: ~/.claude/CLAUDE.md, ~/.tessera/AGENTS.md;
   * `project`: AGENTS.md, CLAUDE.md, .claude/CLAUDE.md; `local`: CLAUDE.local.md); a file's
   * `@path` imports come with it. Default: all. A left-out file is never opened, so it takes
   * nothing from `maxTotalChars`.
   */
  scopes?: readonly SettingSource[];
  /** Default `os.homedir()`. */
  home?: string;
  /** `@path` import hops allowed from a top-level file. Default 5. */
  maxImportDepth?: number;
  /** Characters kept per file before truncation. Default 40,000. */
  maxFileChars?: number;
  /** Characters kept across all files. Default 200,000. */
  maxTotalChars?: number;
}

export interface LoadedContext {
  /** Lowest precedence first: user files, then the directories from the top (below the filesystem root) down to cwd; imports follow their importer. */
  files: ContextFile[];
  /** Every "Compact Instructions" section, in file order, joined; undefined if none. */
  compactInstructions?: string;
  diagnostics: Diagnostic[];
}

const PROJECT_NAMES: ReadonlyArray<[string, ContextFile['scope']]> = [
  ['AGENTS.md', 'project'],
  ['CLAUDE.md', 'project'],
  [join('.claude', 'CLAUDE.md'), 'project'],
  ['CLAUDE.local.md', 'local'],
];
const USER_FILES = [join('.tessera', 'AGENTS.md'), join('.claude', 'CLAUDE.md')];
const IMPORT = /(^|\s)@((?:~\/|\.{0,2}\/)?[\w.-]+(?:\/[\w.-]+)*)/g;

/**
 * Finds the instruction files for a session: user-level files, then AGENTS.md / CLAUDE.md /
 * .claude/CLAUDE.md / CLAUDE.local.md in every directory from the topmost one below the
 * filesystem root down to cwd (as Claude Code reads them), plus their `@path` imports.
 */
export function loadContext(options: LoadContextOptions): LoadedContext {
  const cwd = resolve(options.cwd);
  const home = resolve(options.home ?? homedir());
  const state: LoadState = {
    files: [],
    diagnostics: [],
    loaded: new Set(),
    maxDepth: options.maxImportDepth ?? 5,
    maxFileChars: options.maxFileChars ?? 40_000,
    remaining: options.maxTotalChars ?? 200_000,
    home,
  };
  const scopes = options.scopes;
  if (scopes === undefined || scopes.includes('user')) for (const relative of USER_FILES) addFile(state, join(home, relative), 'user', [], undefined);
  const names = scopes === undefined ? PROJECT_NAMES : PROJECT_NAMES.filter(([, scope]) => scopes.includes(scope as SettingSource));
  if (names.length > 0) {
    for (const dir of directoriesFromRoot(cwd)) {
      if (dir === home) continue; // ~/CLAUDE.md is not a user-level file; avoid loading it twice as project.
      for (const [name, scope] of names) addFile(state, join(dir, name), scope, [], undefined);
    }
  }
  const sections = state.files
    .map((file) => extractCompactInstructions(file.content))
    .filter((section): section is string => section !== undefined);
  const result: LoadedContext = { files: state.files, diagnostics: state.diagnostics };
  if (sections.length > 0) result.compactInstructions = sections.join('\n\n');
  return result;
}

interface LoadState {
  files: ContextFile[];
  diagnostics: Diagnostic[];
  loaded: Set<string>;
  maxDepth: number;
  maxFileChars: number;
  remaining: number;
  home: string;
}

function addFile(state: LoadState, path: string, scope: ContextFile['scope'], chain: string[], importer: string | undefined): void {
  if (state.loaded.has(path) || !isFile(path)) return;
  const text = readTextFile(path);
  if (!text.ok) {
    state.diagnostics.push(text.diagnostic);
    return;
  }
  state.loaded.add(path);
  const limit = Math.min(state.maxFileChars, Math.max(state.remaining, 0));
  const full = text.value;
  let content = full;
  let truncated = false;
  if (full.length > limit) {
    truncated = true;
    content = `${full.slice(0, limit)}\n\n[Truncated: ${path} has ${full.length} characters; only the first ${limit} were loaded. Shorten it or split it with @imports.]`;
    state.diagnostics.push({
      severity: 'warning',
      file: path,
      message: `Context file truncated to ${limit} of ${full.length} characters (cap per file ${state.maxFileChars}, remaining total ${Math.max(state.remaining, 0)}).`,
    });
  }
  state.remaining -= Math.min(full.length, limit);
  const file: ContextFile = { path, scope, content, truncated };
  if (importer !== undefined) file.importedFrom = importer;
  state.files.push(file);
  followImports(state, path, content, [...chain, path]);
}

function followImports(state: LoadState, path: string, content: string, chain: string[]): void {
  const lines = content.split('\n');
  let inFence = false;
  lines.forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) return;
    const prose = line.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length));
    for (const match of prose.matchAll(IMPORT)) {
      const reference = match[2]!.replace(/[.,;:]+$/, '');
      const target = reference.startsWith('~/') ? join(state.home, reference.slice(2)) : resolve(dirname(path), reference);
      const located = { file: path, line: index + 1, column: match.index + match[1]!.length + 1 };
      if (chain.includes(target)) {
        state.diagnostics.push({ severity: 'warning', ...located, message: `Import cycle: @${reference} leads back to a file already being imported; it is skipped.` });
        continue;
      }
      if (!isFile(target)) {
        // `@name` in prose is often a mention, not an import: only report what looks like a path.
        if (/[/.]/.test(reference)) state.diagnostics.push({ severity: 'info', ...located, message: `@${reference} does not name a readable file; nothing was imported.` });
        continue;
      }
      if (chain.length > state.maxDepth) {
        state.diagnostics.push({ severity: 'warning', ...located, message: `@${reference} is beyond the import depth limit (${state.maxDepth}); it is skipped.` });
        continue;
      }
      addFile(state, target, 'import', chain, path);
    }
  });
}

/**
 * Every directory from the topmost one below the filesystem root down to cwd, as Claude Code
 * reads memory files ("up to, but not including, the root directory"): a CLAUDE.md in a parent
 * of the repository (a monorepo's parent, a workspace folder) applies too.
 */
function directoriesFromRoot(cwd: string): string[] {
  const chain: string[] = [];
  let dir = cwd;
  for (;;) {
    const parent = dirname(dir);
    // `dir` is the filesystem root (`/`, `C:\`): not read, unless cwd itself is the root.
    if (parent === dir) return chain.length === 0 ? [dir] : chain.reverse();
    chain.push(dir);
    dir = parent;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
