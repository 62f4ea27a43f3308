import { readdirSync, statSync, type Dirent } from 'node:fs';
import { sep } from 'node:path';
import type { IgnoreRules } from './ignore-rules.js';
import { NewestFiles } from './newest-files.js';

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
}

/**
 * Walks `root` for regular files whose name matches `name`, with the same filtering the
 * fast-glob path applies (ignore rules per directory, symbolic links neither followed nor
 * listed, unreadable directories skipped) and one `stat` per match for its modification
 * time. Synchronous and purpose-built because on a 20,000-file tree fast-glob's own walk and
 * matching cost twice the whole of this; paths are joined by concatenation for the same reason.
 */
export function newestMatchingFiles(root: string, name: NameMatcher, rules: IgnoreRules, limit: number): NewestMatches {
  const newest = new NewestFiles(limit);
  const stack: string[] = [root];
  while (stack.length > 0) scanDirectory(stack.pop()!, name, rules, stack, newest);
  return { files: newest.sorted(), count: newest.count };
}

// One call per directory and per match rather than one long loop: V8 optimises small, often
// called functions within the first call, while a single long-running loop waits for on-stack
// replacement, which on a busy machine can take several calls.
function scanDirectory(dir: string, name: NameMatcher, rules: IgnoreRules, stack: string[], newest: NewestFiles): void {
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
    } else if (entry.isFile() && name(entry.name)) offerFile(prefix + entry.name, newest);
  }
}

/** Shared, so stating allocates no options object per file. */
const STAT_OPTIONS = { bigint: false, throwIfNoEntry: false } as const;

/** A file's modification time as Glob has always read it: stat (a match is a regular file, so no link is followed); 0 if it vanished. */
export function modificationTime(path: string): number {
  return statSync(path, STAT_OPTIONS)?.mtimeMs ?? 0;
}

function offerFile(path: string, newest: NewestFiles): void {
  newest.offer(path, modificationTime(path));
}
