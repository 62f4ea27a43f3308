import { isAbsolute, resolve } from 'node:path';

/**
 * What a path word names once the shell has expanded it. Pure string work on the word's
 * pattern (see `BashWord.pattern`: quoted special characters are backslash-escaped).
 * - `literal`: one path, known from the text (`~`, `~+`, `$HOME` and `$PWD` are known values).
 * - `glob`: absolute shell glob patterns (`*`, `?`, `[…]`, braces expanded); the files they
 *   match are only known when the command runs.
 * - `unknown`: anything at all (`$VAR`, `$(…)`, `~user`, `~-`, too many brace expansions).
 */
export type ShellPath = { kind: 'literal'; paths: string[] } | { kind: 'glob'; patterns: string[] } | { kind: 'unknown' };

const MAX_EXPANSIONS = 64;

/** True when the pattern has an unescaped character from `set`. */
function hasUnescaped(pattern: string, set: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') i += 1;
    else if (set.includes(pattern[i]!)) return true;
  }
  return false;
}

/** Removes the escapes of a pattern that has no unescaped special character left. */
export function unescapePattern(pattern: string): string {
  return pattern.replace(/\\(.)/gs, '$1');
}

/** Index of the `}` closing the `{` at `open`, or -1; with whether a top-level `,` or `..` is inside. */
function braceGroup(pattern: string, open: number): { close: number; commas: number[] } | undefined {
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') i += 1;
    else if (char === '{') depth += 1;
    else if (char === '}') {
      depth -= 1;
      if (depth === 0) return { close: i, commas };
    } else if (char === ',' && depth === 1) commas.push(i);
  }
  return undefined;
}

/**
 * Bash brace expansion: `a{b,c}d` is `abd acd`, `{1..3}` is `1 2 3`. A group without a top-level
 * comma or a range stays as written. Undefined when there would be more than MAX_EXPANSIONS.
 */
export function expandBraces(pattern: string): string[] | undefined {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') {
      i += 1;
      continue;
    }
    if (pattern[i] !== '{') continue;
    const group = braceGroup(pattern, i);
    if (!group) return [pattern];
    const head = pattern.slice(0, i);
    const tail = pattern.slice(group.close + 1);
    const body = pattern.slice(i + 1, group.close);
    let parts: string[];
    if (group.commas.length > 0) {
      const bounds = [i, ...group.commas, group.close];
      parts = bounds.slice(1).map((end, index) => pattern.slice(bounds[index]! + 1, end));
    } else {
      const range = /^(?:(-?\d+)\.\.(-?\d+)|([a-zA-Z])\.\.([a-zA-Z]))(?:\.\.(-?\d+))?$/.exec(body);
      if (!range) {
        // Not a brace expansion: the `{` is literal; look for one further on.
        const rest = expandBraces(pattern.slice(i + 1));
        return rest?.map((text) => pattern.slice(0, i + 1) + text);
      }
      // Every word of the range is checked: `.e{m..o}v` names `.env` too.
      const values = expandRange(range);
      if (values === undefined) return undefined;
      parts = values;
    }
    const out: string[] = [];
    for (const part of parts) {
      const expanded = expandBraces(head + part + tail);
      if (expanded === undefined) return undefined;
      out.push(...expanded);
      if (out.length > MAX_EXPANSIONS) return undefined;
    }
    return out;
  }
  return [pattern];
}

/**
 * The words of a brace range `{1..10}`, `{01..3}`, `{a..z..2}`, as bash gives them. Undefined
 * when there are more than MAX_EXPANSIONS or a letter range crosses characters that are not
 * letters (`{Z..a}` gives `[`, `\\`, …).
 */
function expandRange(range: RegExpExecArray): string[] | undefined {
  const step = Math.abs(Number(range[5] ?? '1')) || 1;
  const numeric = range[1] !== undefined;
  const from = numeric ? Number(range[1]) : range[3]!.charCodeAt(0);
  const to = numeric ? Number(range[2]) : range[4]!.charCodeAt(0);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return undefined;
  if (Math.floor(Math.abs(to - from) / step) + 1 > MAX_EXPANSIONS) return undefined;
  const ends = numeric ? [range[1]!, range[2]!] : [];
  const width = ends.some((end) => /^-?0\d/.test(end)) ? Math.max(...ends.map((end) => end.length)) : 0;
  const out: string[] = [];
  for (let value = from; from <= to ? value <= to : value >= to; value += from <= to ? step : -step) {
    if (!numeric) {
      const char = String.fromCharCode(value);
      if (!/^[a-zA-Z]$/.test(char)) return undefined;
      out.push(char);
    } else if (width === 0) out.push(String(value));
    else out.push((value < 0 ? '-' : '') + String(Math.abs(value)).padStart(width - (value < 0 ? 1 : 0), '0'));
  }
  return out;
}

/**
 * Expands a path word's pattern where the command runs (`cwd`): the leading `~`, `~+`,
 * `$HOME` and `$PWD` to their values, braces, and then tells whether a glob remains.
 */
export function expandShellPath(pattern: string, cwd: string, homeDir: string): ShellPath {
  let text = pattern;
  const leading = /^(?:~\+|~|\$\{?(HOME|PWD)\}?)(?=\/|$)/.exec(text);
  if (leading) {
    const home = leading[0] === '~' || leading[1] === 'HOME';
    text = escapeLiteral(home ? homeDir : cwd) + text.slice(leading[0].length);
  } else if (/^~/.test(text)) return { kind: 'unknown' };
  if (hasUnescaped(text, '$`')) return { kind: 'unknown' };
  const words = expandBraces(text);
  if (words === undefined) return { kind: 'unknown' };
  if (words.some((word) => /^~/.test(word))) return { kind: 'unknown' };
  if (!words.some((word) => hasUnescaped(word, '*?['))) return { kind: 'literal', paths: words.map(unescapePattern) };
  // Resolved as text: `..` after a glob is taken lexically, as for literal paths.
  return { kind: 'glob', patterns: words.map((word) => (isAbsolute(word) ? resolve(word) : resolve(escapeLiteral(cwd), word))) };
}

function escapeLiteral(path: string): string {
  return path.replace(/[\\*?[\]{},~$`]/g, '\\$&');
}
