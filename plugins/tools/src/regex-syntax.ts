/**
 * Grep patterns are written for ripgrep (Rust's `regex` syntax), which models and Claude Code
 * users both assume. Most of it is JavaScript syntax too; this rewrites the parts that are not:
 *
 * - leading inline flags `(?i)`, `(?s)`, `(?m)`, `(?x)` (any combination) become RegExp flags,
 *   and `x` (verbose mode) strips unescaped whitespace and `#` comments outside classes;
 * - `(?P<name>…)` named groups become `(?<name>…)`;
 * - POSIX classes inside brackets, `[[:alpha:]_]`, `[[:^digit:]]`, become ASCII ranges;
 * - `\A` and `\z` (start and end of the text) become `^` and `$`;
 * - one-letter Unicode classes `\pL`, `\PN` become `\p{L}`, `\P{N}` (and need the `u` flag);
 * - code-point escapes `\x{…}`, `\U{…}`, `\UXXXXXXXX` become `\u{…}` (with the `u` flag);
 * - `\b{start}` / `\b{end}` become lookaround word boundaries.
 *
 * Anything else passes through unchanged, and the caller reports what RegExp rejects.
 */
export interface TranslatedPattern {
  source: string;
  /** Flags the pattern asked for inline (`i`, `s`, `m`), to add to the caller's own. */
  flags: string;
  /** Whether the pattern needs the `u` flag (Unicode property classes). */
  unicode: boolean;
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Negated POSIX classes that have a JavaScript escape, usable inside a larger class. */
const NEGATED_ESCAPES: Record<string, string> = { digit: '\\D', space: '\\S', word: '\\W' };

export class PatternSyntaxError extends Error {}

export function translateRipgrepPattern(pattern: string): TranslatedPattern {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([imsxU]+)\)/.exec(source);
  if (inline) {
    source = source.slice(inline[0].length);
    for (const flag of inline[1]!) if (!flags.includes(flag)) flags += flag;
  }
  const verbose = flags.includes('x');
  flags = flags.replace(/[xU]/g, '');
  let out = '';
  let unicode = false;
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index]!;
    if (char === '\\') {
      const next = source[index + 1];
      const codePoint = codePointEscape(source, index);
      if (codePoint) {
        out += codePoint.text;
        unicode = true;
        index += codePoint.length - 1;
        continue;
      }
      if (next === 'A') out += '^';
      else if (next === 'z') out += '$';
      else if ((next === 'p' || next === 'P') && source[index + 2] !== '{' && /[A-Za-z]/.test(source[index + 2] ?? '')) {
        out += `\\${next}{${source[index + 2]}}`;
        unicode = true;
        index += 1;
      } else if ((next === 'p' || next === 'P') && source[index + 2] === '{') {
        out += `\\${next}`;
        unicode = true;
      } else if (next === 'b' && source.startsWith('{start}', index + 2)) {
        out += '\\b(?=\\w)';
        index += 7;
      } else if (next === 'b' && source.startsWith('{end}', index + 2)) {
        out += '\\b(?<=\\w)';
        index += 5;
      } else if (next === ' ' || next === '#') out += next; // escaped in verbose mode; RegExp's u flag rejects the escape
      else out += char + (next ?? '');
      index += 1;
      continue;
    }
    if (char === '[') {
      const classUnicode = { value: false };
      const translated = translateClass(source, index, classUnicode);
      if (classUnicode.value) unicode = true;
      out += translated.text;
      index = translated.end;
      continue;
    }
    if (char === '(' && source.startsWith('(?P<', index)) {
      out += '(?<';
      index += 3;
      continue;
    }
    if (verbose && /\s/.test(char)) continue;
    if (verbose && char === '#') {
      const newline = source.indexOf('\n', index);
      index = newline === -1 ? source.length : newline;
      continue;
    }
    out += char;
  }
  return { source: out, flags, unicode };
}

/**
 * Rust's code-point escapes — `\x{1F600}`, `\u{1F600}`, `\U{1F600}`, `\U0001F600` — as
 * JavaScript's `\u{…}` (which needs the `u` flag); undefined for any other escape.
 */
function codePointEscape(source: string, index: number): { text: string; length: number } | undefined {
  const match = /^\\(?:[xuU]\{([0-9A-Fa-f]{1,8})\}|U([0-9A-Fa-f]{8}))/.exec(source.slice(index, index + 12));
  if (!match) return undefined;
  const hex = (match[1] ?? match[2]!).replace(/^0+(?=.)/, '');
  return { text: `\\u{${hex}}`, length: match[0].length };
}

/** The class starting at `start` (a `[`), translated; `end` is the index of its closing `]`. */
function translateClass(source: string, start: number, unicode: { value: boolean }): { text: string; end: number } {
  let index = start + 1;
  let negated = false;
  if (source[index] === '^') {
    negated = true;
    index += 1;
  }
  let body = '';
  const negatedPosix: string[] = [];
  // A `]` right after the opening bracket is a literal, as in ripgrep.
  if (source[index] === ']') {
    body += '\\]';
    index += 1;
  }
  for (; index < source.length; index += 1) {
    const char = source[index]!;
    if (char === ']') {
      return { text: assembleClass(body, negated, negatedPosix), end: index };
    }
    if (char === '\\') {
      const codePoint = codePointEscape(source, index);
      if (codePoint) {
        body += codePoint.text;
        unicode.value = true;
        index += codePoint.length - 1;
        continue;
      }
      body += char + (source[index + 1] ?? '');
      index += 1;
      continue;
    }
    if (char === '[' && source[index + 1] === ':') {
      const close = source.indexOf(':]', index + 2);
      const name = close === -1 ? undefined : source.slice(index + 2, close);
      if (name !== undefined && /^\^?[a-z]+$/.test(name)) {
        const positive = name.replace(/^\^/, '');
        const ranges = POSIX_CLASSES[positive];
        if (!ranges) throw new PatternSyntaxError(`unknown POSIX class [:${name}:]; known: ${Object.keys(POSIX_CLASSES).join(', ')}`);
        if (name.startsWith('^')) negatedPosix.push(positive);
        else body += ranges;
        index = close + 1;
        continue;
      }
    }
    if (char === '[') {
      // A literal `[` inside a class (ripgrep needs it escaped; RegExp takes it either way).
      body += '\\[';
      continue;
    }
    body += char;
  }
  // No closing bracket: leave it for RegExp to report.
  return { text: source.slice(start), end: source.length - 1 };
}

function assembleClass(body: string, negated: boolean, negatedPosix: string[]): string {
  if (negatedPosix.length === 0) return `[${negated ? '^' : ''}${body}]`;
  // `[[:^alpha:]]` alone is the negation of the whole class.
  if (body === '' && negatedPosix.length === 1 && !negated) return `[^${POSIX_CLASSES[negatedPosix[0]!]}]`;
  const escapes = negatedPosix.map((name) => NEGATED_ESCAPES[name]);
  if (escapes.every((escape) => escape !== undefined)) return `[${negated ? '^' : ''}${body}${escapes.join('')}]`;
  throw new PatternSyntaxError(
    `a negated POSIX class ([:^${negatedPosix.join(':], [:^')}:]) can only stand alone in its brackets here; write the negation as [^…] instead`,
  );
}
