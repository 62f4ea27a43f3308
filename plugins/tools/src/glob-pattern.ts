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

/**
 * ripgrep-style `--glob` filter: a glob without `/` matches the file name, one with `/` the
 * path relative to the search root; `!glob` excludes. With only exclusions, everything else
 * passes.
 */
export function compilePathFilter(spec: string): PathFilter {
  const include: Array<{ regex: RegExp; full: boolean }> = [];
  const exclude: Array<{ regex: RegExp; full: boolean }> = [];
  for (const raw of splitGlobs(spec)) {
    const negated = raw.startsWith('!');
    const glob = (negated ? raw.slice(1) : raw).replace(/^\.\//, '').replace(/^\//, '');
    if (!glob) continue;
    const entry = { regex: globToRegExp(glob), full: glob.includes('/') };
    (negated ? exclude : include).push(entry);
  }
  const test = (entry: { regex: RegExp; full: boolean }, rel: string, base: string) => entry.regex.test(entry.full ? rel : base);
  return {
    matches(relPath, baseName) {
      if (exclude.some((entry) => test(entry, relPath, baseName))) return false;
      return include.length === 0 || include.some((entry) => test(entry, relPath, baseName));
    },
  };
}
