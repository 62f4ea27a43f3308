import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

/** Directories path rules are anchored to. */
export interface PathAnchors {
  /** `./x` and `x/y` rules, and relative tool paths. */
  cwd: string;
  /** `/x` rules: the folder that holds the settings (the project root). */
  settingsRoot: string;
  /** `~/x` rules. */
  homeDir: string;
}

export type PathAnchor = 'absolute' | 'home' | 'root' | 'cwd' | 'anywhere';

export interface PathPattern {
  anchor: PathAnchor;
  /** The gitignore-style glob, relative to the anchor. */
  glob: string;
}

/**
 * Reads a `Read(…)` / `Edit(…)` specifier: `//abs`, `~/home`, `/settings-root`, `./cwd`,
 * `dir/file` (cwd), or a bare name that matches at any depth.
 */
export function parsePathPattern(specifier: string): PathPattern {
  let spec = specifier.trim();
  // `dir/**` and `dir/` both cover the folder itself and everything in it (see patternRegExp).
  // A `/**` suffix is a slash inside the pattern, so `dir/**` stays anchored (gitignore):
  // only a bare name, or a name with a trailing slash alone, matches at any depth.
  const globstarSuffix = spec.endsWith('/**') && spec.length > 3;
  if (globstarSuffix) spec = spec.slice(0, -3);
  if (spec.endsWith('/') && spec.length > 1) spec = spec.slice(0, -1);
  if (spec.startsWith('//')) return { anchor: 'absolute', glob: spec.slice(2) };
  if (spec === '~') return { anchor: 'home', glob: '' };
  if (spec.startsWith('~/')) return { anchor: 'home', glob: spec.slice(2) };
  if (spec.startsWith('/')) return { anchor: 'root', glob: spec.slice(1) };
  if (spec === '.') return { anchor: 'cwd', glob: '' };
  if (spec.startsWith('./')) return { anchor: 'cwd', glob: spec.slice(2) };
  if (spec.includes('/') || globstarSuffix) return { anchor: 'cwd', glob: spec };
  return { anchor: 'anywhere', glob: spec };
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function globSource(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === '*') {
      if (glob[i + 1] === '*') {
        if (glob[i + 2] === '/') {
          out += '(?:.*/)?';
          i += 2;
        } else {
          out += '.*';
          i += 1;
        }
      } else out += '[^/]*';
    } else if (char === '?') out += '[^/]';
    else if (char === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) out += '\\[';
      else {
        const body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = close;
      }
    } else out += escapeRegExp(char);
  }
  return out;
}

const regexCache = new Map<string, RegExp>();

/**
 * The regex for a pattern under one base directory. A match on a directory covers
 * everything inside it (gitignore semantics), hence the optional `/…` suffix.
 */
function patternRegExp(pattern: PathPattern, base: string, ignoreCase: boolean): RegExp {
  const key = `${ignoreCase ? 'i' : 's'}\0${pattern.anchor}\0${base}\0${pattern.glob}`;
  let regex = regexCache.get(key);
  if (regex) return regex;
  const body = globSource(pattern.glob);
  let source: string;
  if (pattern.anchor === 'anywhere') source = `^(?:.*/)?${body}(?:/.*)?$`;
  else {
    const root = base === '/' ? '' : escapeRegExp(base.endsWith('/') ? base.slice(0, -1) : base);
    source = pattern.glob === '' ? `^${root}(?:/.*)?$` : `^${root}/${body}(?:/.*)?$`;
  }
  regex = new RegExp(source, ignoreCase ? 'is' : 's');
  if (regexCache.size > 10_000) regexCache.clear();
  regexCache.set(key, regex);
  return regex;
}

/**
 * The real path of `path`, or of its nearest existing ancestor with the rest appended,
 * so a file that does not exist yet still resolves through symlinked parents.
 */
export function realPathNearest(path: string): string {
  // Most checked paths exist (reads, edits): one realpath answers. Only when it fails are the
  // ancestors walked.
  try {
    return realpathSync.native(path);
  } catch {
    // Missing (or unresolvable): its ancestors are walked.
  }
  const first = dirname(path);
  if (first === path) return path;
  let current = first;
  const rest: string[] = [path.slice(first.length + (first.endsWith(sep) ? 0 : 1))];
  for (let guard = 0; guard < 256; guard++) {
    // A failed realpath costs a thrown error (several µs); a path `stat` reports missing
    // (ENOENT) cannot resolve either, so the parent is tried without it.
    if (!missing(current)) {
      try {
        const real = realpathSync.native(current);
        return rest.length === 0 ? real : join(real, ...rest.reverse());
      } catch {
        // Not resolvable: the parent is tried.
      }
    }
    const parent = dirname(current);
    if (parent === current) return path;
    rest.push(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
    current = parent;
  }
  return path;
}

/** True only when `stat` says the path does not exist (ENOENT); any other error is left to realpath. */
function missing(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}

export function expandHome(path: string, homeDir: string): string {
  if (path === '~') return homeDir;
  if (path.startsWith('~/')) return join(homeDir, path.slice(2));
  return path;
}

/** The paths a tool path is checked as: the normalised path as given and its real path. */
export function pathCandidates(path: string, anchors: PathAnchors): string[] {
  const expanded = expandHome(path, anchors.homeDir);
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(anchors.cwd, expanded);
  const real = realPathNearest(absolute);
  return real === absolute ? [absolute] : [absolute, real];
}

const baseCache = new Map<string, string[]>();

function basesFor(anchor: PathAnchor, anchors: PathAnchors): string[] {
  const base =
    anchor === 'absolute' ? '/' : anchor === 'home' ? anchors.homeDir : anchor === 'root' ? anchors.settingsRoot : anchors.cwd;
  let bases = baseCache.get(base);
  if (!bases) {
    const real = realPathNearest(resolve(base));
    bases = real === base ? [base] : [base, real];
    if (baseCache.size > 1000) baseCache.clear();
    baseCache.set(base, bases);
  }
  return bases;
}

/**
 * The regexes a pattern is tested with: one per reading of its base (as given and real).
 * Exposed so a caller testing many paths against one pattern prepares them once.
 */
export function pathPatternRegExps(pattern: PathPattern, anchors: PathAnchors, ignoreCase: boolean): RegExp[] {
  return [...patternRegExps(pattern, anchors, ignoreCase)];
}

const ROOT_BASES: readonly string[] = ['/'];

interface PatternRegExps {
  /** The `basesFor` array they were built for (the same array while its base is cached). */
  bases: readonly string[];
  /** The pattern's fields they were built from (a pattern object changed in place is rebuilt). */
  anchor: PathAnchor;
  glob: string;
  sensitive: readonly RegExp[] | undefined;
  insensitive: readonly RegExp[] | undefined;
}

// Per pattern object (compiled rules keep theirs): its regexes for the bases last used, so a
// check does not build a cache key per rule.
const patternRegExpsCache = new WeakMap<PathPattern, PatternRegExps>();

function patternRegExps(pattern: PathPattern, anchors: PathAnchors, ignoreCase: boolean): readonly RegExp[] {
  const bases = pattern.anchor === 'anywhere' || pattern.anchor === 'absolute' ? ROOT_BASES : basesFor(pattern.anchor, anchors);
  let entry = patternRegExpsCache.get(pattern);
  if (entry === undefined || entry.bases !== bases || entry.anchor !== pattern.anchor || entry.glob !== pattern.glob) {
    entry = { bases, anchor: pattern.anchor, glob: pattern.glob, sensitive: undefined, insensitive: undefined };
    patternRegExpsCache.set(pattern, entry);
  }
  if (ignoreCase) return (entry.insensitive ??= bases.map((base) => patternRegExp(pattern, base, true)));
  return (entry.sensitive ??= bases.map((base) => patternRegExp(pattern, base, false)));
}

/** True when any candidate path matches the pattern under any reading of its base. */
export function matchesPathPattern(
  pattern: PathPattern,
  candidates: readonly string[],
  anchors: PathAnchors,
  ignoreCase: boolean,
): boolean {
  for (const regex of patternRegExps(pattern, anchors, ignoreCase)) {
    for (const candidate of candidates) if (regex.test(candidate)) return true;
  }
  return false;
}

/**
 * True when every candidate (lexical and real) lies inside one of the directories. Relative
 * directories resolve against `cwd` (the session's), as the file tools resolve them.
 */
export function insideDirectories(candidates: readonly string[], directories: readonly string[], cwd: string): boolean {
  const roots = directories.flatMap((entry) => {
    const directory = resolve(cwd, entry);
    return basesFor('cwd', { cwd: directory, settingsRoot: directory, homeDir: directory });
  });
  const inside = (candidate: string): boolean =>
    roots.some((root) => candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep));
  return candidates.length > 0 && candidates.every(inside);
}

/** `dot`: the token may stand for a leading `.` (a `[…]` class that lists `.`). */
type GlobToken = { kind: 'char'; char: string } | { kind: 'one'; dot?: boolean } | { kind: 'star' };

/** One path segment of a glob as tokens; a `[…]` class is read as any one character. */
function segmentTokens(segment: string, escapes: boolean, ignoreCase: boolean): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!;
    if (escapes && char === '\\' && i + 1 < segment.length) {
      const next = segment[++i]!;
      tokens.push({ kind: 'char', char: ignoreCase ? next.toLowerCase() : next });
    } else if (char === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (char === '?') tokens.push({ kind: 'one' });
    else if (char === '[' && segment.indexOf(']', i + 2) !== -1) {
      const close = segment.indexOf(']', i + 2);
      const members = segment.slice(i + 1, close);
      tokens.push({ kind: 'one', dot: !/^[!^]/.test(members) && members.includes('.') });
      i = close;
    } else tokens.push({ kind: 'char', char: ignoreCase ? char.toLowerCase() : char });
  }
  return tokens;
}

/**
 * Whether a shell glob segment cannot name a dot-file that the rule segment needs: bash (without
 * `dotglob`) never lets a leading `*`, `?` or `[…]` match a leading `.`, so `*` does not expand to
 * `.env`. A `[…]` class that lists `.` is let through, as some shells match it.
 */
function hidesLeadingDot(shell: readonly GlobToken[], rule: readonly GlobToken[]): boolean {
  const first = shell[0];
  const wild = first?.kind === 'star' || (first?.kind === 'one' && !first.dot);
  return wild && rule[0]?.kind === 'char' && rule[0].char === '.';
}

/** Whether some segment name matches both token lists. */
function segmentsMeet(a: readonly GlobToken[], b: readonly GlobToken[]): boolean {
  const seen = new Set<number>();
  const meet = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    if (seen.has(key)) return false;
    seen.add(key);
    if (i === a.length && j === b.length) return true;
    if (a[i]?.kind === 'star' && (meet(i + 1, j) || (j < b.length && meet(i, j + 1)))) return true;
    if (b[j]?.kind === 'star' && (meet(i, j + 1) || (i < a.length && meet(i + 1, j)))) return true;
    if (i === a.length || j === b.length || a[i]!.kind === 'star' || b[j]!.kind === 'star') return false;
    const x = a[i]!;
    const y = b[j]!;
    return (x.kind === 'one' || y.kind === 'one' || (x.kind === 'char' && y.kind === 'char' && x.char === y.char)) && meet(i + 1, j + 1);
  };
  return meet(0, 0);
}

/**
 * `glob` with the folders before its first wildcard segment replaced by their real path (links
 * resolved), or `glob` itself when that changes nothing: `link-secrets/*` expands inside
 * `secrets`, as a plain path through the link is checked by its real path too. A prefix with
 * an escaped (quoted) character is left as written.
 */
export function globWithRealPrefix(glob: string): string {
  const parts = glob.split('/');
  const first = parts.findIndex((part) => /(^|[^\\])[*?[{]/.test(part));
  if (first <= 1) return glob;
  const prefix = parts.slice(0, first).join('/');
  if (prefix.includes('\\')) return glob;
  const real = realPathNearest(prefix);
  return real === prefix ? glob : [real, ...parts.slice(first)].join('/');
}

/**
 * True when a rule pattern could match one of the paths a shell glob expands to: the glob is
 * absolute, its quoted characters backslash-escaped (see `expandShellPath`). Errs towards a
 * match — a `[…]` class counts as any character — since the answer guards deny rules. Like
 * `matchesPathPattern`, a rule that matches a directory covers everything inside it.
 */
export function globMightMatchPattern(pattern: PathPattern, glob: string, anchors: PathAnchors, ignoreCase: boolean): boolean {
  const shell = glob.split('/').filter((part) => part !== '').map((part) => segmentTokens(part, true, ignoreCase));
  const bases = pattern.anchor === 'anywhere' || pattern.anchor === 'absolute' ? ROOT_BASES : basesFor(pattern.anchor, anchors);
  const ruleGlob = pattern.anchor === 'anywhere' ? `**/${pattern.glob}` : pattern.glob;
  return bases.some((base) => {
    const rule = [...base.split('/'), ...ruleGlob.split('/')]
      .filter((part) => part !== '')
      .map((part) => (part.includes('**') ? undefined : segmentTokens(part, false, ignoreCase)));
    const seen = new Set<number>();
    // `undefined` is `**`: any number of segments.
    const meet = (s: number, r: number): boolean => {
      const key = s * (rule.length + 1) + r;
      if (seen.has(key)) return false;
      seen.add(key);
      if (r === rule.length) return true;
      const part = rule[r];
      if (part === undefined) return meet(s, r + 1) || (s < shell.length && meet(s + 1, r));
      return s < shell.length && !hidesLeadingDot(shell[s]!, part) && segmentsMeet(shell[s]!, part) && meet(s + 1, r + 1);
    };
    return meet(0, 0);
  });
}
