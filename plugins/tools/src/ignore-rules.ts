import type { Dirent } from 'node:fs';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';

/** Folders no search descends into unless it starts inside them: VCS data, dependencies, caches. */
export const DEFAULT_EXCLUDED_DIRECTORIES: readonly string[] = [
  '.git', '.hg', '.svn', '.jj', 'node_modules', 'bower_components', '__pycache__', '.venv', '.tox', '.mypy_cache',
  '.pytest_cache', '.ruff_cache', '.next', '.nuxt', '.turbo', '.parcel-cache', '.gradle', '.cache',
];

export interface SearchFilterOptions {
  /** Apply `.gitignore` files (the search root's ancestors inside the workspace, and nested ones). Default true. */
  respectGitignore?: boolean;
  /** Directory names never descended into. Default `DEFAULT_EXCLUDED_DIRECTORIES`. */
  excludeDirectories?: readonly string[];
}

interface Rule {
  dir: string;
  matcher: Ignore;
}

/** A directory's `.gitignore`, or undefined when it has none (or an empty one). */
function readGitignore(dir: string): string | undefined {
  let content: string;
  try {
    content = readFileSync(join(dir, '.gitignore'), 'utf8');
  } catch {
    return undefined;
  }
  return content.trim() === '' ? undefined : content;
}

/** A pattern without a slash other than a trailing one: git matches it against names at any depth. */
function isNameOnlyPattern(line: string): boolean {
  const pattern = line.trim();
  if (pattern === '' || pattern.startsWith('#')) return false;
  const body = pattern.replace(/^!/, '').replace(/\/$/, '');
  return body !== '' && !body.includes('/');
}

const toPosix = sep === '/' ? (path: string) => path : (path: string) => path.split(sep).join('/');

/**
 * `.gitignore` semantics for a walk that goes top-down: each directory's rules are loaded when
 * the walk enters it and apply to everything below; a deeper `!pattern` can re-include what an
 * upper file excluded, but nothing below an ignored directory is visited (as in git).
 */
export class IgnoreRules {
  private readonly chains = new Map<string, readonly Rule[]>();
  private readonly excluded: ReadonlySet<string>;
  private readonly gitignore: boolean;

  private constructor(options: SearchFilterOptions) {
    this.excluded = new Set(options.excludeDirectories ?? DEFAULT_EXCLUDED_DIRECTORIES);
    this.gitignore = options.respectGitignore ?? true;
  }

  /**
   * Rules for a walk starting at `searchRoot`; `.gitignore` files between `workspaceRoot` and
   * `searchRoot` apply too, so a search in a sub-folder of a repository still honours its root file.
   */
  static create(searchRoot: string, workspaceRoot: string | undefined, options: SearchFilterOptions = {}): IgnoreRules {
    const rules = new IgnoreRules(options);
    const ancestors: string[] = [];
    if (rules.gitignore && workspaceRoot && searchRoot !== workspaceRoot && searchRoot.startsWith(workspaceRoot + sep)) {
      for (let dir = dirname(searchRoot); ; dir = dirname(dir)) {
        ancestors.unshift(dir);
        if (dir === workspaceRoot || dirname(dir) === dir) break;
      }
    }
    let chain: readonly Rule[] = [];
    const contents: string[] = [];
    for (const dir of ancestors) {
      const content = rules.gitignore ? readGitignore(dir) : undefined;
      if (content === undefined) continue;
      chain = [...chain, { dir, matcher: ignore().add(content) }];
      contents.push(content);
    }
    // A search that starts inside an ignored or excluded directory (`node_modules/pkg`, a
    // gitignored `dist/`) was asked for explicitly, as a path given to ripgrep is: the rules
    // from above would hide everything in it, so only their name-only patterns (`*.log`,
    // `build/`), which git applies at any depth, are kept, anchored at the search root.
    if (workspaceRoot && ancestors.length > 0 && rules.startsHidden(searchRoot, workspaceRoot, chain)) {
      const names = contents.flatMap((content) => content.split(/\r?\n/)).filter(isNameOnlyPattern);
      chain = names.length > 0 ? [{ dir: searchRoot, matcher: ignore().add(names) }] : [];
    }
    rules.chains.set(dirname(searchRoot), chain);
    return rules;
  }

  /** Whether `searchRoot`, or a directory between it and `workspaceRoot`, is excluded by name or ignored by `chain`. */
  private startsHidden(searchRoot: string, workspaceRoot: string, chain: readonly Rule[]): boolean {
    const names = relative(workspaceRoot, searchRoot).split(sep);
    if (names.some((name) => this.excluded.has(name))) return true;
    return chain.length > 0 && this.ignores(chain, searchRoot, true);
  }

  // Synchronous on purpose: searches walk synchronously in slices (see file-walker.ts).
  private extend(chain: readonly Rule[], dir: string): readonly Rule[] {
    if (!this.gitignore) return chain;
    const content = readGitignore(dir);
    return content === undefined ? chain : [...chain, { dir, matcher: ignore().add(content) }];
  }

  /**
   * Rules that apply inside `dir`, loading its own `.gitignore` when `hasGitignore`. When the
   * directories between the search root and `dir` were never read (a path checked without a
   * walk), their rules are loaded here first, so the root's `.gitignore` still applies.
   */
  enter(dir: string, hasGitignore: boolean): readonly Rule[] {
    const known = this.chains.get(dir);
    if (known) return known;
    const parentDir = dirname(dir);
    const parent = this.chains.get(parentDir) ?? (parentDir === dir ? [] : this.enter(parentDir, true));
    const chain = hasGitignore ? this.extend(parent, dir) : parent;
    this.chains.set(dir, chain);
    return chain;
  }

  /** Whether the file `path`, below the search root, is ignored (for a path found without reading its directory). */
  isIgnoredFile(path: string): boolean {
    return this.ignores(this.enter(dirname(path), true), path, false);
  }

  isExcludedDirectory(name: string): boolean {
    return this.excluded.has(name);
  }

  /** Whether `path` (inside a directory whose chain is `chain`) is ignored. */
  ignores(chain: readonly Rule[], path: string, isDirectory: boolean): boolean {
    let ignored = false;
    for (const rule of chain) {
      const rel = toPosix(relative(rule.dir, path));
      if (rel === '' || rel.startsWith('..')) continue;
      const verdict = rule.matcher.test(isDirectory ? `${rel}/` : rel);
      if (verdict.ignored) ignored = true;
      else if (verdict.unignored) ignored = false;
    }
    return ignored;
  }

  /**
   * The `.gitignore` rules that apply to the entries of `dir` (its own file included). Empty
   * when none do: then only the excluded-directory names filter, which a walker can check
   * inline instead of calling `filter`.
   */
  chainFor(dir: string, entries: readonly Dirent[]): readonly Rule[] {
    return this.enter(dir, this.gitignore && entries.some((entry) => entry.name === '.gitignore' && entry.isFile()));
  }

  /** The entries of `dir` a search should see. */
  filter<T extends Dirent>(dir: string, entries: readonly T[]): T[] {
    const chain = this.chainFor(dir, entries);
    return entries.filter((entry) => {
      const isDirectory = entry.isDirectory();
      if (isDirectory && this.excluded.has(entry.name)) return false;
      return chain.length === 0 || !this.ignores(chain, join(dir, entry.name), isDirectory);
    });
  }
}
