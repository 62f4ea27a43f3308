/**
 * A small shell reader for permission checks. It does not run or expand anything; it finds
 * every command a Bash string would start — across `&&`, `||`, `;`, `|`, `|&`, `&`,
 * newlines, `( … )` subshells, `$( … )`, backticks, `<( … )` / `>( … )` and unquoted
 * here-documents — and the files it redirects to or from. When the text cannot be read
 * with certainty (an unterminated quote or substitution, an ANSI-C escape it cannot decode),
 * `complete` is false and the caller must not allow the command by rule.
 */

export interface BashWord {
  /** The word as written, quotes included. */
  raw: string;
  /** The word with quotes and escapes removed (substitutions are left as written). */
  value: string;
  /**
   * The word as the shell will expand it: `value`, but with every quoted character that
   * globbing, brace, tilde or parameter expansion would act on escaped with a backslash. An
   * unescaped `*`, `?`, `[`, `{`, leading `~`, `$` or backtick is expanded when the command
   * runs, so the path it names is not known from the text alone.
   */
  pattern: string;
}

export interface BashSubcommand {
  words: BashWord[];
}

export interface BashRedirect {
  direction: 'in' | 'out';
  /** The target with quotes removed. */
  target: string;
  /** The target as the shell will expand it (see `BashWord.pattern`). */
  pattern: string;
}

export interface ParsedBashCommand {
  subcommands: BashSubcommand[];
  redirects: BashRedirect[];
  complete: boolean;
}

const OPERATOR_CHARS = new Set([';', '&', '|', '\n']);
const MAX_DEPTH = 16;

class BashReader {
  private index = 0;
  complete = true;
  readonly subcommands: BashSubcommand[] = [];
  readonly redirects: BashRedirect[] = [];
  private words: BashWord[] = [];
  // `dup-out` / `dup-in`: `>&` / `<&`, a file unless the word is an fd; `data`: a here-string.
  private pendingRedirect: BashRedirect['direction'] | 'heredoc' | 'dup-out' | 'dup-in' | 'data' | undefined;
  private heredocs: Array<{ delimiter: string; quoted: boolean; stripTabs: boolean }> = [];

  constructor(
    private readonly text: string,
    private readonly depth: number,
  ) {}

  read(): void {
    if (this.depth > MAX_DEPTH) {
      this.complete = false;
      return;
    }
    const { text } = this;
    while (this.index < text.length) {
      const char = text[this.index]!;
      if (char === ' ' || char === '\t' || char === '\r') {
        this.index += 1;
      } else if (char === '\\' && text[this.index + 1] === '\n') {
        this.index += 2;
      } else if (OPERATOR_CHARS.has(char) && !(char === '&' && text[this.index + 1] === '>')) {
        if (char === '\n') this.endCommand(true);
        else {
          this.endCommand(false);
          this.index += 1;
          // `&&`, `||`, `;;`, `|&`: one operator.
          const next = text[this.index];
          if (next !== undefined && (next === char || (char === '|' && next === '&'))) this.index += 1;
        }
      } else if (char === '#' ) {
        while (this.index < text.length && text[this.index] !== '\n') this.index += 1;
      } else if (char === '(' && this.words.length === 0) {
        const inner = this.readBalanced(this.index + 1, '(', ')');
        this.nested(inner);
      } else if (char === ')') {
        // A stray closer (e.g. `case` patterns): end the command, keep reading.
        this.endCommand(false);
        this.index += 1;
      } else {
        this.readWord();
      }
    }
    this.endCommand(false);
    if (this.heredocs.length > 0) this.complete = false;
  }

  private endCommand(newline: boolean): void {
    if (this.pendingRedirect !== undefined) {
      // A redirection with no target (`echo >`) is not valid shell.
      this.complete = false;
      this.pendingRedirect = undefined;
    }
    const words = stripKeywords(this.words);
    if (words.length > 0) this.subcommands.push({ words });
    this.words = [];
    if (newline) {
      this.index += 1;
      if (this.heredocs.length > 0) this.readHeredocBodies();
    }
  }

  private readHeredocBodies(): void {
    const { text } = this;
    for (const heredoc of this.heredocs) {
      const lines: string[] = [];
      let found = false;
      while (this.index < text.length) {
        const end = text.indexOf('\n', this.index);
        const line = text.slice(this.index, end === -1 ? text.length : end);
        this.index = end === -1 ? text.length : end + 1;
        const compared = heredoc.stripTabs ? line.replace(/^\t+/, '') : line;
        if (compared === heredoc.delimiter) {
          found = true;
          break;
        }
        lines.push(line);
      }
      if (!found) this.complete = false;
      if (!heredoc.quoted) this.scanForSubstitutions(lines.join('\n'));
    }
    this.heredocs = [];
  }

  /** Parses `$( … )` and backticks found inside text that is otherwise data. */
  private scanForSubstitutions(body: string): void {
    for (let i = 0; i < body.length; i++) {
      const char = body[i];
      if (char === '\\') i += 1;
      else if (char === '$' && body[i + 1] === '(') {
        const reader = new BashReader(body, this.depth + 1);
        const inner = reader.readBalanced(i + 2, '(', ')');
        this.nested(inner);
        this.complete &&= reader.complete;
        i = reader.index - 1;
      } else if (char === '`') {
        const close = findBacktick(body, i + 1);
        if (close === -1) {
          this.complete = false;
          this.nested(body.slice(i + 1));
          return;
        }
        this.nested(body.slice(i + 1, close).replace(/\\`/g, '`'));
        i = close;
      }
    }
  }

  private nested(inner: string): void {
    const reader = new BashReader(inner, this.depth + 1);
    reader.read();
    this.subcommands.push(...reader.subcommands);
    this.redirects.push(...reader.redirects);
    this.complete &&= reader.complete;
  }

  /** Returns the text between an opener (already passed) and its matching closer. */
  private readBalanced(start: number, open: string, close: string): string {
    const { text } = this;
    let depth = 1;
    let i = start;
    while (i < text.length) {
      const char = text[i]!;
      if (char === '\\') i += 2;
      // `$$` is the shell's PID: a `'` after it opens a plain single-quoted string, not `$'…'`.
      else if (char === '$' && text[i + 1] === '$') i += 2;
      else if (char === '$' && text[i + 1] === "'") {
        // `$'…'`: a backslash escapes the next character, `\'` included.
        i = skipAnsiC(text, i + 2);
        if (i === -1) break;
      } else if (char === "'") {
        const end = text.indexOf("'", i + 1);
        if (end === -1) break;
        i = end + 1;
      } else if (char === '"') {
        i = skipDoubleQuoted(text, i + 1);
        if (i === -1) break;
      } else if (char === '`') {
        const end = findBacktick(text, i + 1);
        if (end === -1) break;
        i = end + 1;
      } else {
        if (char === open) depth += 1;
        else if (char === close) {
          depth -= 1;
          if (depth === 0) {
            this.index = i + 1;
            return text.slice(start, i);
          }
        }
        i += 1;
      }
    }
    this.complete = false;
    this.index = text.length;
    return text.slice(start);
  }

  private readWord(): void {
    const { text } = this;
    const start = this.index;
    let value = '';
    // Redirection operators, with an optional fd number in front (`2>`, `2>&1`).
    const head = text.slice(this.index, this.index + 8);
    const redirect = /^[<>]\(/.test(head) ? null : /^(\d*)(&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|>|<)/.exec(head);
    if (redirect) {
      this.index += redirect[0].length;
      const op = redirect[2]!;
      if (op === '<<' || op === '<<-') {
        this.pendingRedirect = 'heredoc';
        this.heredocStripTabs = op === '<<-';
      } else this.pendingRedirect = redirectKind(op);
      return;
    }
    let quoted = false;
    let pattern = '';
    while (this.index < text.length) {
      const char = text[this.index]!;
      if (char === ' ' || char === '\t' || char === '\r' || char === '\n' || char === ';' || char === '|' || char === ')') break;
      if (char === '&' || char === '<' || char === '>') {
        if (char === '<' || char === '>') {
          if (text[this.index + 1] === '(') {
            // Process substitution: its command runs.
            const from = this.index;
            this.index += 2;
            this.nested(this.readBalanced(this.index, '(', ')'));
            value += text.slice(from, this.index);
            continue;
          }
          if (/^\d+$/.test(text.slice(start, this.index))) {
            // `2>file`: the digits were an fd, not a word.
            this.index = start;
            const match = /^(\d+)/.exec(text.slice(start))!;
            this.index = start + match[1]!.length;
            const rest = /^(&>>|&>|>>|>\||>&|<<<|<<-|<<|<&|<>|>|<)/.exec(text.slice(this.index))!;
            this.index += rest[0].length;
            const op = rest[0];
            if (op.startsWith('<<') && op !== '<<<') {
              this.pendingRedirect = 'heredoc';
              this.heredocStripTabs = op === '<<-';
            } else this.pendingRedirect = redirectKind(op);
            return;
          }
        }
        break;
      }
      if (char === '\\' && text[this.index + 1] === '\n') {
        // A line continuation: bash removes it, so `r\<newline>m` is `rm`.
        this.index += 2;
      } else if (char === '\\') {
        const next = text[this.index + 1] ?? '';
        value += next;
        pattern += `\\${next}`;
        this.index += 2;
        quoted = true;
      } else if (char === '$' && text[this.index + 1] === '$') {
        // `$$` is the shell's PID: a `'` after it opens a plain single-quoted string, not `$'…'`.
        value += '$$';
        pattern += '$$';
        this.index += 2;
      } else if (char === '$' && text[this.index + 1] === "'") {
        const decoded = this.readAnsiC();
        value += decoded;
        pattern += escapePattern(decoded, true);
        quoted = true;
      } else if (char === "'") {
        const end = text.indexOf("'", this.index + 1);
        const content = end === -1 ? text.slice(this.index + 1) : text.slice(this.index + 1, end);
        if (end === -1) this.complete = false;
        this.index = end === -1 ? text.length : end + 1;
        value += content;
        pattern += escapePattern(content, true);
        quoted = true;
      } else if (char === '"' || (char === '$' && text[this.index + 1] === '"')) {
        // `$"…"` is a double-quoted string translated by the locale; the `$` is not part of it.
        if (char === '$') this.index += 1;
        const content = this.readDoubleQuoted();
        value += content;
        pattern += escapePattern(content, false);
        quoted = true;
      } else if (char === '$' && text[this.index + 1] === '(') {
        const from = this.index;
        this.index += 2;
        this.nested(this.readBalanced(this.index, '(', ')'));
        value += text.slice(from, this.index);
        pattern += text.slice(from, this.index);
      } else if (char === '$' && text[this.index + 1] === '{') {
        const from = this.index;
        this.index += 2;
        const inner = this.readBalanced(this.index, '{', '}');
        this.scanForSubstitutions(inner);
        value += text.slice(from, this.index);
        pattern += text.slice(from, this.index);
      } else if (char === '`') {
        const close = findBacktick(text, this.index + 1);
        if (close === -1) {
          this.complete = false;
          this.nested(text.slice(this.index + 1));
          value += text.slice(this.index);
          pattern += text.slice(this.index);
          this.index = text.length;
        } else {
          this.nested(text.slice(this.index + 1, close).replace(/\\`/g, '`'));
          value += text.slice(this.index, close + 1);
          pattern += text.slice(this.index, close + 1);
          this.index = close + 1;
        }
      } else {
        value += char;
        pattern += char;
        this.index += 1;
      }
    }
    const raw = text.slice(start, this.index);
    if (raw.length === 0) {
      // A lone `&`, `<` or `>` that no rule above consumed: skip it.
      this.index += 1;
      return;
    }
    this.addWord({ raw, value, pattern }, quoted);
  }

  private heredocStripTabs = false;

  private addWord(word: BashWord, quoted: boolean): void {
    const pending = this.pendingRedirect;
    this.pendingRedirect = undefined;
    if (pending === 'heredoc') {
      this.heredocs.push({ delimiter: word.value, quoted, stripTabs: this.heredocStripTabs });
      return;
    }
    if (pending === 'data') return;
    if (pending === 'dup-out' || pending === 'dup-in') {
      // `2>&1`, `>&-`, `<&3-` duplicate or close a descriptor. Any other word is a file:
      // `>& f` is `&> f` (stdout and stderr), so it is checked like `> f`.
      if (/^\d*-?$/.test(word.value) && word.value !== '') return;
      this.redirects.push({ direction: pending === 'dup-out' ? 'out' : 'in', target: word.value, pattern: word.pattern });
      return;
    }
    if (pending !== undefined) {
      this.redirects.push({ direction: pending, target: word.value, pattern: word.pattern });
      return;
    }
    this.words.push(word);
  }

  /**
   * Reads a `$'…'` string (the index is on the `$`) and returns its decoded value. Unlike a
   * plain single-quoted string, a backslash escapes the next character, so `$'\''` is `'`.
   */
  private readAnsiC(): string {
    const { text } = this;
    const end = skipAnsiC(text, this.index + 2);
    const body = text.slice(this.index + 2, end === -1 ? text.length : end - 1);
    this.index = end === -1 ? text.length : end;
    if (end === -1) this.complete = false;
    const decoded = decodeAnsiC(body);
    // An escape that is not decoded here (`\c`) leaves the value unknown.
    if (decoded === undefined) {
      this.complete = false;
      return body;
    }
    return decoded;
  }

  /** Reads a double-quoted string (the index is on the opening quote); returns its value. */
  private readDoubleQuoted(): string {
    const { text } = this;
    let value = '';
    this.index += 1;
    while (this.index < text.length) {
      const char = text[this.index]!;
      if (char === '"') {
        this.index += 1;
        return value;
      }
      if (char === '\\') {
        const next = text[this.index + 1] ?? '';
        value += '$`"\\\n'.includes(next) ? (next === '\n' ? '' : next) : `\\${next}`;
        this.index += 2;
      } else if (char === '$' && text[this.index + 1] === '(') {
        const from = this.index;
        this.index += 2;
        this.nested(this.readBalanced(this.index, '(', ')'));
        value += text.slice(from, this.index);
      } else if (char === '`') {
        const close = findBacktick(text, this.index + 1);
        if (close === -1) break;
        this.nested(text.slice(this.index + 1, close).replace(/\\`/g, '`'));
        value += text.slice(this.index, close + 1);
        this.index = close + 1;
      } else {
        value += char;
        this.index += 1;
      }
    }
    this.complete = false;
    this.index = text.length;
    return value;
  }
}

function findBacktick(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '`') return i;
  }
  return -1;
}

/** The index after the `'` that closes a `$'…'` string whose body starts at `from`; -1 if none. */
function skipAnsiC(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === "'") return i + 1;
  }
  return -1;
}

const ANSI_C_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?',
};

/** Decodes the body of a `$'…'` string as bash does; undefined for an escape it does not decode. */
function decodeAnsiC(body: string): string | undefined {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char !== '\\') {
      out += char;
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) return out + char;
    const simple = ANSI_C_ESCAPES[next];
    let match: RegExpExecArray | null;
    if (simple !== undefined) {
      out += simple;
      i += 1;
    } else if ((match = /^[0-7]{1,3}/.exec(body.slice(i + 1)))) {
      out += String.fromCharCode(parseInt(match[0], 8) & 0xff);
      i += match[0].length;
    } else if ((match = /^x([0-9a-fA-F]{1,2})/.exec(body.slice(i + 1)))) {
      out += String.fromCharCode(parseInt(match[1]!, 16));
      i += match[0].length;
    } else if ((match = /^(?:u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8}))/.exec(body.slice(i + 1)))) {
      const code = parseInt(match[1] ?? match[2]!, 16);
      if (code > 0x10ffff) return undefined;
      out += String.fromCodePoint(code);
      i += match[0].length;
    } else if (next === 'c') return undefined;
    else {
      out += `\\${next}`;
      i += 1;
    }
  }
  return out;
}

function redirectKind(op: string): 'in' | 'out' | 'dup-out' | 'dup-in' | 'data' {
  if (op === '>&') return 'dup-out';
  if (op === '<&') return 'dup-in';
  if (op === '<<<') return 'data';
  return op.includes('<') && op !== '<>' ? 'in' : 'out';
}

/**
 * Escapes the characters of quoted text that expansions would otherwise act on. In double
 * quotes `$` and backticks still expand, so they stay as they are.
 */
function escapePattern(text: string, single: boolean): string {
  return text.replace(single ? /[\\*?[\]{},~$`]/g : /[\\*?[\]{},~]/g, '\\$&');
}

function skipDoubleQuoted(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i + 1;
  }
  return -1;
}

// Shell grammar words that only frame other commands; dropping them lets
// `if grep x; then rm y; fi` be checked as `grep x` and `rm y`.
// `coproc` runs its command in the background, so it frames it like `time` does.
const LEADING_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'time', 'coproc']);
const LONE_KEYWORDS = new Set(['fi', 'done', 'esac', '}', 'then', 'do', 'else', '{', '!']);

function stripKeywords(words: BashWord[]): BashWord[] {
  let start = 0;
  while (start < words.length && words[start]!.raw === words[start]!.value && LEADING_KEYWORDS.has(words[start]!.raw)) {
    const keyword = words[start]!.raw;
    start += 1;
    // `time -p cmd`: the keyword's own option is not the command.
    if (keyword === 'time') while (words[start]?.raw === '-p' || words[start]?.raw === '--') start += 1;
    // `coproc NAME { cmd; }`: the name only labels the compound command.
    if (keyword === 'coproc' && words[start + 1]?.raw === '{') start += 1;
  }
  let end = words.length;
  while (end > start && LONE_KEYWORDS.has(words[end - 1]!.raw) && words[end - 1]!.raw === '}') end -= 1;
  const kept = words.slice(start, end);
  if (kept.length === 1 && LONE_KEYWORDS.has(kept[0]!.raw)) return [];
  return kept;
}

/** Splits a Bash command into every command it would run, and the files it redirects. */
export function parseBashCommand(command: string): ParsedBashCommand {
  const reader = new BashReader(command, 0);
  reader.read();
  return { subcommands: reader.subcommands, redirects: reader.redirects, complete: reader.complete };
}
