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

const toPosix = sep === '/' ? (path: string) => path : (path: string) => path.split(sep).join('/');

/**
 * `.gitignore` semantics for a walk that goes top-down: each directory's rules are loaded when
 * the walk enters it and apply to everything below; a deeper `!pattern` can re-include what an
 * upper file excluded, but nothing below an ignored directory is visited (as in git).
 */
export class IgnoreRules {
  private readonly chains = new Map<string, readonly Rule[]>();
  private readonly hiddenDirectories = new Map<string, boolean>();
  private readonly excluded: ReadonlySet<string>;
  private readonly gitignore: boolean;

  private constructor(
    private readonly searchRoot: string,
    options: SearchFilterOptions,
  ) {
    this.excluded = new Set(options.excludeDirectories ?? DEFAULT_EXCLUDED_DIRECTORIES);
    this.gitignore = options.respectGitignore ?? true;
  }

  /**
   * Rules for a walk starting at `searchRoot`; `.gitignore` files between `workspaceRoot` and
   * `searchRoot` apply too, so a search in a sub-folder of a repository still honours its root file.
   */
  static create(searchRoot: string, workspaceRoot: string | undefined, options: SearchFilterOptions = {}): IgnoreRules {
    const rules = new IgnoreRules(searchRoot, options);
    const ancestors: string[] = [];
    if (rules.gitignore && workspaceRoot && searchRoot !== workspaceRoot && searchRoot.startsWith(workspaceRoot + sep)) {
      for (let dir = dirname(searchRoot); ; dir = dirname(dir)) {
        ancestors.unshift(dir);
        if (dir === workspaceRoot || dirname(dir) === dir) break;
      }
    }
    let chain: readonly Rule[] = [];
    for (const dir of ancestors) chain = rules.extend(chain, dir);
    rules.chains.set(dirname(searchRoot), chain);
    return rules;
  }

  // Synchronous on purpose: searches walk synchronously in slices (see file-walker.ts).
  private extend(chain: readonly Rule[], dir: string): readonly Rule[] {
    if (!this.gitignore) return chain;
    let content: string | undefined;
    try {
      content = readFileSync(join(dir, '.gitignore'), 'utf8');
    } catch {
      content = undefined;
    }
    if (content === undefined || content.trim() === '') return chain;
    return [...chain, { dir, matcher: ignore().add(content) }];
  }

  /**
   * Rules that apply inside `dir`, loading its own `.gitignore` when `hasGitignore`. A walk
   * may start below the search root without reading the directories above (fast-glob does for
   * a pattern with a static prefix, `src/**∕*.ts`): their rules are loaded here first, so the
   * root's `.gitignore` still applies inside `src/`.
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

  /**
   * Whether `dir`, below the search root, lies in a directory the rules exclude or ignore (or
   * is one): a search that starts there directly must find nothing, as a top-down walk would
   * never have entered it.
   */
  isHidden(dir: string): boolean {
    if (dir === this.searchRoot || !dir.startsWith(this.searchRoot + sep)) return false;
    const known = this.hiddenDirectories.get(dir);
    if (known !== undefined) return known;
    const parent = dirname(dir);
    const hidden =
      this.isHidden(parent) ||
      this.excluded.has(dir.slice(parent.length + (parent.endsWith(sep) ? 0 : 1))) ||
      this.ignores(this.enter(parent, true), dir, true);
    this.hiddenDirectories.set(dir, hidden);
    return hidden;
  }

  /** Whether the file `path`, below the search root, is ignored (its directories included). */
  isIgnoredFile(path: string): boolean {
    const dir = dirname(path);
    return this.isHidden(dir) || this.ignores(this.enter(dir, true), path, false);
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
