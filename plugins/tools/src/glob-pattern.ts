const REGEX_SPECIAL = new Set(['.', '+', '^', '$', '(', ')', '|', '\\', '/']);

/**
 * Compiles a glob (`*`, `?`, `**`, `[abc]`, `[!abc]`, `{a,b}`) into an anchored RegExp over
 * POSIX paths. `*` and `?` never cross a `/`; `**` as a whole segment crosses any number.
 */
export function globToRegExp(glob: string, flags = ''): RegExp {
  let out = '';
  let braces = 0;
  for (let index = 0; index < glob.length; index += 1) {
    const char = glob[index]!;
    if (char === '*') {
      if (glob[index + 1] === '*') {
        const atStart = index === 0 || glob[index - 1] === '/';
        const next = glob[index + 2];
        if (atStart && next === '/') {
          out += '(?:[^/]*/)*';
          index += 2;
          continue;
        }
        if (atStart && next === undefined) {
          out += '.*';
          index += 1;
          continue;
        }
        out += '[^/]*';
        index += 1;
        continue;
      }
      out += '[^/]*';
    } else if (char === '?') {
      out += '[^/]';
    } else if (char === '[') {
      const close = glob.indexOf(']', index + 2);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(index + 1, close);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      out += `[${body.replace(/\\/g, '\\\\')}]`;
      index = close;
    } else if (char === '{') {
      braces += 1;
      out += '(?:';
    } else if (char === '}' && braces > 0) {
      braces -= 1;
      out += ')';
    } else if (char === ',' && braces > 0) {
      out += '|';
    } else if (char === '\\' && index + 1 < glob.length) {
      index += 1;
      out += `\\${glob[index]}`;
    } else {
      out += REGEX_SPECIAL.has(char) || char === '{' || char === '}' || char === '[' || char === ']' ? `\\${char}` : char;
    }
  }
  while (braces-- > 0) out += ')';
  return new RegExp(`^${out}$`, flags);
}

export interface PathFilter {
  /** `relPath` is POSIX, relative to the search root. */
  matches(relPath: string, baseName: string): boolean;
  /**
   * Whether the walk should skip this directory and everything under it. ripgrep applies
   * globs to directories too, so `!vendor` leaves out the `vendor/` folder, not just files
   * named `vendor`. Absent means no directory is skipped.
   */
  prunes?(relPath: string, baseName: string): boolean;
}

/** Splits on whitespace and top-level commas (not those inside `{}`). */
function splitGlobs(spec: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of spec) {
    if (char === '{') depth += 1;
    if (char === '}') depth = Math.max(0, depth - 1);
    if ((char === ',' && depth === 0) || /\s/.test(char)) {
      if (current) parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (current) parts.push(current);
  return parts;
}

interface GlobEntry {
  regex: RegExp;
  /** Matched against the relative path (the glob has a `/`), else against the base name. */
  full: boolean;
  /** Written with a trailing `/`: matches directories only, as in `.gitignore`. */
  dirOnly: boolean;
}

function parseGlob(glob: string): GlobEntry {
  const dirOnly = glob.endsWith('/');
  const body = dirOnly ? glob.replace(/\/+$/, '') : glob;
  return { regex: globToRegExp(body), full: body.includes('/'), dirOnly };
}

function testEntry(entry: GlobEntry, relPath: string, baseName: string): boolean {
  return entry.regex.test(entry.full ? relPath : baseName);
}

/**
 * ripgrep-style `--glob` filter: a glob without `/` matches the name, one with `/` the path
 * relative to the search root, one ending in `/` directories only; `!glob` excludes. With
 * only exclusions, everything else passes. Exclusions also prune matching directories (as
 * ripgrep does); inclusions never do, since they name the files wanted, wherever they are.
 */
export function compilePathFilter(spec: string): PathFilter {
  const include: GlobEntry[] = [];
  const exclude: GlobEntry[] = [];
  for (const raw of splitGlobs(spec)) {
    const negated = raw.startsWith('!');
    const glob = (negated ? raw.slice(1) : raw).replace(/^\.\//, '').replace(/^\//, '');
    if (!glob || glob === '/') continue;
    (negated ? exclude : include).push(parseGlob(glob));
  }
  const fileTest = (entry: GlobEntry, relPath: string, baseName: string) => !entry.dirOnly && testEntry(entry, relPath, baseName);
  return {
    matches(relPath, baseName) {
      if (exclude.some((entry) => fileTest(entry, relPath, baseName))) return false;
      return include.length === 0 || include.some((entry) => fileTest(entry, relPath, baseName));
    },
    prunes(relPath, baseName) {
      return exclude.some((entry) => testEntry(entry, relPath, baseName));
    },
  };
}
