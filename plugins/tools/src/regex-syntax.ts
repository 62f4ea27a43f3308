/**
 * Grep patterns are written for ripgrep (Rust's `regex` syntax), which models and Claude Code
 * users both assume. Most of it is JavaScript syntax too; this rewrites the parts that are not:
 *
 * - leading inline flags `(?i)`, `(?s)`, `(?m)`, `(?x)` (any combination) become RegExp flags,
 *   and `x` (verbose mode) strips unescaped whitespace and `#` comments everywhere, inside
 *   character classes too, as Rust does;
 * - `(?P<name>…)` named groups become `(?<name>…)`;
 * - POSIX classes inside brackets, `[[:alpha:]_]`, `[[:^digit:]]`, become ASCII ranges;
 * - `\A` and `\z` (start and end of the text) become `^` and `$` when each line is searched on
 *   its own, and lookarounds that only match at the ends of the whole text in multiline mode;
 * - one-letter Unicode classes `\pL`, `\PN` become `\p{L}`, `\P{N}` (and need the `u` flag);
 * - code-point escapes `\x{…}`, `\U{…}`, `\UXXXXXXXX` become `\u{…}` (with the `u` flag);
 * - `\b{start}` / `\<` and `\b{end}` / `\>` become lookaround word boundaries;
 * - escaped ASCII punctuation that JavaScript does not need escaped (`\-`, `\#`, `\&`, `\ `)
 *   loses its backslash, since the `u` flag rejects such escapes.
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

/** How the translated pattern will be run, which decides what the text anchors become. */
export interface TranslateOptions {
  /**
   * True when the RegExp runs over a whole file with the `m` flag (Grep's `multiline`): `\A` and
   * `\z` then become `(?<![\s\S])` and `(?![\s\S])`, since `^` and `$` would match at every
   * line. False (the default) when each line is tested on its own: there `^` and `$` are the
   * ends of the text, and they stay right when the line-mode chunk pre-filter adds `m`.
   */
  multiline?: boolean;
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

/**
 * JavaScript's syntax characters, the only ones its `u` flag lets a backslash escape (and `-`
 * inside a class). Rust also accepts `\` before any other ASCII character but a letter, a digit,
 * `<` or `>`; those escapes are written here without the backslash, valid with or without `u`.
 */
const JS_SYNTAX_CHARACTERS = new Set('^$\\.*+?()[]{}|/');

export class PatternSyntaxError extends Error {}

/** One translated piece of the pattern and how many source characters it replaced. */
interface Piece {
  text: string;
  length: number;
  unicode: boolean;
}

/**
 * JavaScript RegExp source and flags for a ripgrep pattern (the rewrites listed above), so that
 * patterns written for ripgrep search the same here; throws `PatternSyntaxError` for what has no
 * translation, naming it.
 */
export function translateRipgrepPattern(pattern: string, options: TranslateOptions = {}): TranslatedPattern {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([imsxU]+)\)/.exec(source);
  if (inline) {
    source = source.slice(inline[0].length);
    for (const flag of inline[1]!) if (!flags.includes(flag)) flags += flag;
  }
  const verbose = flags.includes('x');
  flags = flags.replace(/[xU]/g, '');
  const multiline = options.multiline ?? false;
  let out = '';
  let unicode = false;
  let index = 0;
  for (;;) {
    if (verbose) index = skipVerbose(source, index);
    if (index >= source.length) break;
    const char = source[index]!;
    if (char === '\\') {
      const escape = translateEscape(source, index, { inClass: false, multiline });
      out += escape.text;
      if (escape.unicode) unicode = true;
      index += escape.length;
    } else if (char === '[') {
      const translated = translateClass(source, index, verbose);
      if (translated.unicode) unicode = true;
      out += translated.text;
      index = translated.end + 1;
    } else if (source.startsWith('(?P<', index)) {
      out += '(?<';
      index += 4;
    } else {
      out += char;
      index += 1;
    }
  }
  return { source: out, flags, unicode };
}

/**
 * Index of the first character at or after `index` that verbose mode keeps: unescaped
 * whitespace and `#` comments (to the end of the line) are skipped, in classes as elsewhere.
 */
function skipVerbose(source: string, index: number): number {
  let at = index;
  while (at < source.length) {
    if (/\s/.test(source[at]!)) at += 1;
    else if (source[at] === '#') {
      const newline = source.indexOf('\n', at);
      at = newline === -1 ? source.length : newline + 1;
    } else break;
  }
  return at;
}

/**
 * The escape starting at `index` (a backslash), rewritten to mean in JavaScript what it means
 * in Rust, valid with and without the `u` flag; escapes with no rewriting are left as written,
 * for RegExp to accept or report.
 */
function translateEscape(source: string, index: number, context: { inClass: boolean; multiline: boolean }): Piece {
  const codePoint = codePointEscape(source, index);
  if (codePoint) return { ...codePoint, unicode: true };
  const property = propertyEscape(source, index);
  if (property) return property;
  const next = source[index + 1];
  if (next === undefined) return { text: '\\', length: 1, unicode: false };
  if (!context.inClass) {
    const assertion = assertionEscape(source, index, context.multiline);
    if (assertion) return assertion;
  }
  if (isSuperfluousEscape(next, context.inClass)) return { text: next, length: 2, unicode: false };
  return { text: `\\${next}`, length: 2, unicode: false };
}

/**
 * Whether `\` + `char` is an escape Rust reads as `char` itself and JavaScript needs no
 * backslash for: ASCII other than letters, digits, `<` and `>` (Rust's own rule), minus the
 * characters that keep their escape (the syntax characters, and `-` in a class).
 */
function isSuperfluousEscape(char: string, inClass: boolean): boolean {
  if (!/^[\x00-\x7F]$/.test(char) || /^[0-9A-Za-z<>]$/.test(char)) return false;
  if (JS_SYNTAX_CHARACTERS.has(char)) return false;
  return !(inClass && char === '-');
}

const propertyNames = new Map<string, string>();

/**
 * A Rust Unicode class name as JavaScript spells it. Rust takes a bare script name
 * (`\p{Greek}`), JavaScript wants `Script=Greek`; general categories, binary properties and
 * explicit `name=value` forms are the same in both. Rust's loose spelling (`\p{greek}`,
 * `\p{Greek }`) is not matched here; such a name fails as JavaScript reports it.
 */
function unicodePropertyName(name: string): string {
  let spelled = propertyNames.get(name);
  if (spelled === undefined) {
    spelled = name;
    if (!name.includes('=') && !validProperty(name) && validProperty(`Script=${name}`)) spelled = `Script=${name}`;
    if (propertyNames.size < 256) propertyNames.set(name, spelled);
  }
  return spelled;
}

function validProperty(name: string): boolean {
  try {
    new RegExp(`\\p{${name}}`, 'u');
    return true;
  } catch {
    return false;
  }
}

/** Rust's Unicode classes, `\pL` (braced for JavaScript) and `\p{…}`, which need the `u` flag. */
function propertyEscape(source: string, index: number): Piece | undefined {
  const letter = source[index + 1];
  if (letter !== 'p' && letter !== 'P') return undefined;
  const braced = /^\{([^}]*)\}/.exec(source.slice(index + 2));
  if (braced) return { text: `\\${letter}{${unicodePropertyName(braced[1]!)}}`, length: 2 + braced[0].length, unicode: true };
  const name = source[index + 2];
  if (name !== undefined && /^[A-Za-z]$/.test(name)) return { text: `\\${letter}{${name}}`, length: 3, unicode: true };
  return undefined;
}

/** Zero-width escapes outside classes: text anchors and Rust's one-sided word boundaries. */
function assertionEscape(source: string, index: number, multiline: boolean): Piece | undefined {
  const next = source[index + 1];
  const piece = (text: string, length: number): Piece => ({ text, length, unicode: false });
  if (next === 'A') return piece(multiline ? '(?<![\\s\\S])' : '^', 2);
  if (next === 'z') return piece(multiline ? '(?![\\s\\S])' : '$', 2);
  if (next === '<') return piece('\\b(?=\\w)', 2);
  if (next === '>') return piece('\\b(?<=\\w)', 2);
  if (next === 'b' && source.startsWith('{start}', index + 2)) return piece('\\b(?=\\w)', 9);
  if (next === 'b' && source.startsWith('{end}', index + 2)) return piece('\\b(?<=\\w)', 7);
  return undefined;
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

/**
 * The class starting at `start` (a `[`), translated; `end` is the index of its closing `]`.
 * In verbose mode whitespace and `#` comments inside it are skipped too, as Rust does.
 */
function translateClass(source: string, start: number, verbose: boolean): { text: string; end: number; unicode: boolean } {
  const skip = (at: number) => (verbose ? skipVerbose(source, at) : at);
  let index = skip(start + 1);
  let negated = false;
  let unicode = false;
  if (source[index] === '^') {
    negated = true;
    index = skip(index + 1);
  }
  let body = '';
  const negatedPosix: string[] = [];
  // A `]` right after the opening bracket is a literal, as in ripgrep.
  if (source[index] === ']') {
    body += '\\]';
    index = skip(index + 1);
  }
  for (; index < source.length; index = skip(index)) {
    const char = source[index]!;
    if (char === ']') {
      return { text: assembleClass(body, negated, negatedPosix), end: index, unicode };
    }
    if (char === '\\') {
      const escape = translateEscape(source, index, { inClass: true, multiline: false });
      body += escape.text;
      if (escape.unicode) unicode = true;
      index += escape.length;
      continue;
    }
    const posix = posixClass(source, index);
    if (posix) {
      if (posix.negated) negatedPosix.push(posix.name);
      else body += posix.ranges;
      index = posix.end + 1;
      continue;
    }
    // A literal `[` inside a class (ripgrep needs it escaped; RegExp takes it either way).
    body += char === '[' ? '\\[' : char;
    index += 1;
  }
  throw new PatternSyntaxError(
    `unclosed character class at offset ${start} of the pattern${verbose ? ' (in verbose mode (?x), a # inside brackets starts a comment)' : ''}; close it with ] or write a literal [ as \\[`,
  );
}

/** The POSIX class (`[:alpha:]`, `[:^digit:]`) at `index` inside brackets; `end` is its last `]`. */
function posixClass(source: string, index: number): { name: string; negated: boolean; ranges: string; end: number } | undefined {
  if (source[index] !== '[' || source[index + 1] !== ':') return undefined;
  const close = source.indexOf(':]', index + 2);
  const name = close === -1 ? undefined : source.slice(index + 2, close);
  if (name === undefined || !/^\^?[a-z]+$/.test(name)) return undefined;
  const positive = name.replace(/^\^/, '');
  const ranges = POSIX_CLASSES[positive];
  if (!ranges) throw new PatternSyntaxError(`unknown POSIX class [:${name}:]; known: ${Object.keys(POSIX_CLASSES).join(', ')}`);
  return { name: positive, negated: name.startsWith('^'), ranges, end: close + 1 };
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
