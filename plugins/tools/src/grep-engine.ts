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
    const shown = text.length > this.settings.maxColumns ? `${text.slice(0, this.settings.maxColumns)} [… line truncated]` : text;
    return this.settings.lineNumbers ? `${this.path}${separator}${no}${separator}${shown}` : `${this.path}${separator}${shown}`;
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
  const lines: string[] = [];
  for (const line of [...printed].sort((a, b) => a - b)) {
    if (lines.length >= maxLines) break;
    const end = lineStarts[line + 1] === undefined ? content.length : lineStarts[line + 1]! - 1;
    const text = content.slice(lineStarts[line], end);
    lines.push(settings.lineNumbers ? `${path}:${line + 1}:${text}` : `${path}:${text}`);
  }
  return { count, lines };
}

/** One read buffer: scanning is synchronous, so only one file uses it at a time. */
const buffer = Buffer.allocUnsafe(CHUNK_BYTES);

/**
 * Bytes that every matching line must contain, when the pattern makes that easy to see: the
 * longest literal run outside groups, classes and optional parts, in a pattern without
 * top-level alternation. Files without it are skipped before any decoding (as grep does).
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
      index += 1;
      if (next !== undefined && depth === 0 && /[^A-Za-z0-9]/.test(next)) run += next;
      else end();
      continue;
    }
    if (char === '[') {
      end();
      const close = source.indexOf(']', index + 2);
      index = close === -1 ? source.length : close;
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
    if (char === '?' || char === '*' || (char === '{' && /^\{0?[,}]|^\{0,/.test(source.slice(index)))) {
      run = run.slice(0, -1);
      end();
      continue;
    }
    if (char === '+' || char === '{') {
      end();
      continue;
    }
    if (/[A-Za-z0-9_ \-:;,'"=<>/!@#%&~`]/.test(char)) run += char;
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
