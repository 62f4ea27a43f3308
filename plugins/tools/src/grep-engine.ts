import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export type GrepOutputMode = 'content' | 'files_with_matches' | 'count';

export interface GrepSettings {
  /** Line-mode regex (no `g`), tested against one line at a time. */
  line: RegExp;
  /** The same pattern with `m`, used to skip whole chunks that cannot contain a matching line. */
  chunk: RegExp;
  /** Multiline mode: `gms` regex run over the whole file. */
  multiline?: RegExp;
  mode: GrepOutputMode;
  before: number;
  after: number;
  lineNumbers: boolean;
  /** Lines longer than this are cut in content output. */
  maxColumns: number;
  /** Multiline mode reads whole files; larger ones are skipped. */
  maxMultilineBytes: number;
}

export interface FileMatches {
  path: string;
  /** Matching lines (ripgrep's `-c`), or 1 in files mode. */
  count: number;
  /** Formatted content lines (content mode only). */
  lines: string[];
  mtimeMs: number;
}

const CHUNK_BYTES = 256 * 1024;
const BINARY_PROBE_BYTES = 8192;

function hasNul(buffer: Buffer, length: number): boolean {
  return buffer.subarray(0, Math.min(length, BINARY_PROBE_BYTES)).includes(0);
}

/**
 * One content line as ripgrep prints it: `path:line:text` for a matching line, `path-line-text`
 * for a context line (without the number when `-n` is off), cut at `maxColumns`.
 */
function formatLine(path: string, settings: GrepSettings, no: number, text: string, separator: ':' | '-'): string {
  const shown = text.length > settings.maxColumns ? `${text.slice(0, settings.maxColumns)} [… line truncated]` : text;
  return settings.lineNumbers ? `${path}${separator}${no}${separator}${shown}` : `${path}${separator}${shown}`;
}

/** Line-by-line matcher with `-B`/`-A` context, fed in pieces (so large files stream). */
class LineScanner {
  lineNo = 0;
  count = 0;
  readonly lines: string[] = [];
  private readonly ring: Array<{ no: number; text: string }> = [];
  private afterLeft = 0;
  private lastPrinted = 0;
  private carry = '';
  done = false;

  constructor(
    private readonly path: string,
    private readonly settings: GrepSettings,
    private readonly maxLines: number,
  ) {}

  private format(no: number, text: string, separator: ':' | '-'): string {
    return formatLine(this.path, this.settings, no, text, separator);
  }

  private emit(line: string): void {
    if (this.lines.length < this.maxLines) this.lines.push(line);
  }

  private line(text: string): void {
    this.lineNo += 1;
    const no = this.lineNo;
    const { mode, before } = this.settings;
    if (this.settings.line.test(text)) {
      this.count += 1;
      if (mode === 'files_with_matches') {
        this.done = true;
        return;
      }
      if (mode === 'content') {
        const context = before > 0 || this.settings.after > 0;
        const first = this.ring.find((entry) => entry.no > this.lastPrinted)?.no ?? no;
        if (context && this.lastPrinted > 0 && first > this.lastPrinted + 1) this.emit('--');
        for (const entry of this.ring) if (entry.no > this.lastPrinted) this.emit(this.format(entry.no, entry.text, '-'));
        this.emit(this.format(no, text, ':'));
        this.lastPrinted = no;
        this.afterLeft = this.settings.after;
      }
    } else if (this.afterLeft > 0) {
      this.emit(this.format(no, text, '-'));
      this.lastPrinted = no;
      this.afterLeft -= 1;
    }
    if (before > 0) {
      this.ring.push({ no, text });
      if (this.ring.length > before) this.ring.shift();
    }
  }

  /** Consumes decoded text; `final` flushes a last line without a newline. */
  feed(text: string, final: boolean): void {
    let data = this.carry + text;
    this.carry = '';
    if (!final) {
      const end = data.lastIndexOf('\n');
      if (end === -1) {
        this.carry = data;
        return;
      }
      this.carry = data.slice(end + 1);
      data = data.slice(0, end + 1);
    }
    if (data.length === 0) return;
    // A chunk with no possible match and no pending after-context: count its lines, keep the
    // last few for before-context, and move on without testing each line.
    if (this.afterLeft === 0 && !this.settings.chunk.test(data)) {
      this.skip(data);
      return;
    }
    let start = 0;
    while (start < data.length && !this.done) {
      let end = data.indexOf('\n', start);
      if (end === -1) end = data.length;
      this.line(data.slice(start, end));
      start = end + 1;
    }
  }

  private skip(data: string): void {
    let newlines = 0;
    for (let index = data.indexOf('\n'); index !== -1; index = data.indexOf('\n', index + 1)) newlines += 1;
    const total = data.endsWith('\n') ? newlines : newlines + 1;
    const keep = Math.min(this.settings.before, total);
    if (keep > 0) {
      const body = data.endsWith('\n') ? data.slice(0, -1) : data;
      const tail = body.split('\n').slice(-keep);
      for (let index = 0; index < tail.length; index += 1) {
        this.ring.push({ no: this.lineNo + total - tail.length + index + 1, text: tail[index]! });
        if (this.ring.length > this.settings.before) this.ring.shift();
      }
    }
    this.lineNo += total;
  }
}

/**
 * Runs of lines to print: each matched line (0-based, ascending) widened by `before` / `after`
 * context within `0..lastLine`, touching or overlapping runs merged (as ripgrep joins them).
 */
function contextRuns(matched: number[], before: number, after: number, lastLine: number): Array<{ start: number; end: number }> {
  const runs: Array<{ start: number; end: number }> = [];
  for (const line of matched) {
    const start = Math.max(0, line - before);
    const end = Math.max(line, Math.min(lastLine, line + after));
    const previous = runs[runs.length - 1];
    if (previous && start <= previous.end + 1) previous.end = Math.max(previous.end, end);
    else runs.push({ start, end });
  }
  return runs;
}

/**
 * Multiline mode: the `gms` regex over the whole text. Content mode prints every line a match
 * touches, with `-B` / `-A` context and `--` between separate groups, as the line path does.
 */
function multilineMatches(path: string, content: string, settings: GrepSettings, maxLines: number): { count: number; lines: string[] } {
  const regex = settings.multiline!;
  regex.lastIndex = 0;
  const lineStarts = [0];
  for (let index = content.indexOf('\n'); index !== -1; index = content.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  const lineAt = (offset: number): number => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  };
  const printed = new Set<number>();
  let count = 0;
  for (let match = regex.exec(content); match; match = regex.exec(content)) {
    if (match[0].length === 0) regex.lastIndex += 1;
    count += 1;
    if (settings.mode !== 'content') {
      if (settings.mode === 'files_with_matches') break;
      continue;
    }
    const first = lineAt(match.index);
    const last = lineAt(match.index + Math.max(0, match[0].length - 1));
    for (let line = first; line <= last; line += 1) printed.add(line);
  }
  const matched = [...printed].sort((a, b) => a - b);
  // A final newline ends the last line; it does not start an empty one that context could show.
  const lastLine = content.endsWith('\n') ? lineStarts.length - 2 : lineStarts.length - 1;
  const runs = contextRuns(matched, settings.before, settings.after, lastLine);
  const withContext = settings.before > 0 || settings.after > 0;
  const lines: string[] = [];
  for (const run of runs) {
    if (withContext && lines.length > 0 && lines.length < maxLines) lines.push('--');
    for (let line = run.start; line <= run.end && lines.length < maxLines; line += 1) {
      const end = lineStarts[line + 1] === undefined ? content.length : lineStarts[line + 1]! - 1;
      lines.push(formatLine(path, settings, line + 1, content.slice(lineStarts[line], end), printed.has(line) ? ':' : '-'));
    }
  }
  return { count, lines };
}

/** One read buffer: scanning is synchronous, so only one file uses it at a time. */
const buffer = Buffer.allocUnsafe(CHUNK_BYTES);

/** Characters taken as themselves outside escapes, classes and groups. */
const LITERAL_CHAR = /[A-Za-z0-9_ \-:;,'"=<>/!@#%&~`]/;
/** ASCII punctuation, which a backslash turns into itself (`\.`, `\(`, `\/`). */
const ESCAPED_LITERAL = /[!-/:-@[-`{-~]/;
/** A `{n}`, `{n,}` or `{n,m}` quantifier; any other `{` is a plain character (or a syntax error). */
const BRACE_QUANTIFIER = /^\{(\d+)(?:,\d*)?\}/;

/**
 * Length of the escape that starts at `index` (the backslash), arguments included, so that
 * `\x54`, `\u0054`, `\u{1F600}`, `\cJ`, `\p{L}`, `\k<name>` and `\12` are never read as
 * literal text. Taking too much is safe (the literal only gets shorter); too little is not.
 */
function escapeLength(source: string, index: number): number {
  const next = source[index + 1];
  if (next === undefined) return 1;
  const rest = source.slice(index + 2);
  let argument: RegExpExecArray | null = null;
  if (next >= '0' && next <= '9') argument = /^[0-9]*/.exec(rest);
  else if (next === 'x') argument = /^[0-9A-Fa-f]{0,2}/.exec(rest);
  else if (next === 'u') argument = /^(?:\{[^}]*\}|[0-9A-Fa-f]{0,4})/.exec(rest);
  else if (next === 'c') argument = /^[A-Za-z]?/.exec(rest);
  else if (next === 'p' || next === 'P') argument = /^\{[^}]*\}/.exec(rest);
  else if (next === 'k') argument = /^<[^>]*>/.exec(rest);
  return 2 + (argument?.[0].length ?? 0);
}

/** Index of the `]` closing the class opened at `index`, by RegExp's rules (`[]` is empty, `\]` is escaped). */
function classEnd(source: string, index: number): number {
  for (let at = index + 1; at < source.length; at += 1) {
    if (source[at] === '\\') at += 1;
    else if (source[at] === ']') return at;
  }
  return source.length;
}

/**
 * Bytes that every matching line must contain, when the pattern makes that easy to see: the
 * longest literal run outside groups, classes, escapes with arguments and optional parts, in
 * a pattern without top-level alternation. Files without it are skipped before any decoding
 * (as grep does), so anything taken for literal text that is not must be left out.
 */
export function requiredLiteral(source: string, flags: string): string | undefined {
  if (flags.includes('i')) return undefined;
  let best = '';
  let run = '';
  let depth = 0;
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index]!;
    if (char === '\\') {
      const next = source[index + 1];
      if (depth === 0 && next !== undefined && ESCAPED_LITERAL.test(next)) run += next;
      else end();
      index += escapeLength(source, index) - 1;
      continue;
    }
    if (char === '[') {
      end();
      index = classEnd(source, index);
      continue;
    }
    if (char === '(') {
      depth += 1;
      end();
      continue;
    }
    if (char === ')') {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (char === '|') {
      if (depth === 0) return undefined;
      continue;
    }
    if (depth > 0) continue;
    const quantifier = char === '{' ? BRACE_QUANTIFIER.exec(source.slice(index)) : null;
    if (quantifier) {
      // `x{0,n}` may leave out x; `x{2}` repeats it, so the run cannot go on past it.
      if (Number(quantifier[1]) === 0) run = run.slice(0, -1);
      end();
      index += quantifier[0].length - 1;
      continue;
    }
    if (char === '?' || char === '*') {
      run = run.slice(0, -1);
      end();
      continue;
    }
    // `+` keeps the character before it but repeats it, so it ends the run like any other
    // non-literal character (`.`, `^`, `$`, a `{` that is not a quantifier).
    if (LITERAL_CHAR.test(char)) run += char;
    else end();
  }
  end();
  return best.length >= 3 ? best : undefined;
}

/**
 * Searches one file in 256 KB pieces (memory stays bounded whatever its size). Files with a NUL
 * byte in their first 8 KB are binary and skipped; a file that fits in one piece and lacks the
 * pattern's required literal is skipped without decoding. `undefined` when nothing matched.
 */
export function searchFile(path: string, settings: GrepSettings, maxLines: number, literal?: Buffer): FileMatches | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    if (settings.multiline) {
      const size = fstatSync(fd).size;
      if (size > settings.maxMultilineBytes) return undefined;
      const bytes = Buffer.allocUnsafe(size);
      let filled = 0;
      while (filled < size) {
        const read = readSync(fd, bytes, filled, size - filled, null);
        if (read === 0) break;
        filled += read;
      }
      if (hasNul(bytes, filled)) return undefined;
      const found = multilineMatches(path, bytes.toString('utf8', 0, filled), settings, maxLines);
      if (found.count === 0) return undefined;
      return { path, count: found.count, lines: found.lines, mtimeMs: fstatSync(fd).mtimeMs };
    }
    let decoder: StringDecoder | undefined;
    let scanner: LineScanner | undefined;
    let first = true;
    for (;;) {
      const bytesRead = readSync(fd, buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      if (first) {
        if (hasNul(buffer, bytesRead)) return undefined;
        // Whole file in one piece: no literal, no match.
        if (literal && bytesRead < buffer.length && buffer.subarray(0, bytesRead).indexOf(literal) === -1) return undefined;
        decoder = new StringDecoder('utf8');
        scanner = new LineScanner(path, settings, maxLines);
        first = false;
      }
      scanner!.feed(decoder!.write(buffer.subarray(0, bytesRead)), false);
      if (scanner!.done) break;
    }
    if (!scanner) return undefined;
    if (!scanner.done) scanner.feed(decoder!.end(), true);
    if (scanner.count === 0) return undefined;
    const mtimeMs = settings.mode === 'files_with_matches' ? fstatSync(fd).mtimeMs : 0;
    return { path, count: scanner.count, lines: scanner.lines, mtimeMs };
  } finally {
    closeSync(fd);
  }
}
