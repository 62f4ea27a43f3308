import { isAscii } from 'node:buffer';

/** A line that could not be used: 1-based line number and why. */
export interface JsonlProblem {
  line: number;
  reason: string;
  /**
   * The entry's `id` and `parentId`, when the damaged line still shows them unambiguously
   * (one `"id":…,"parentId":…` pair as written keys), so what hung under it can be
   * reconnected to the entry it hung from.
   */
  link?: { id: string; parentId: string | null };
}

/**
 * An `"id"` key followed by a `"parentId"` key, as session entries are written (pi puts them
 * first, Tessera after the entry's own fields). Inside a JSON string the quotes would be
 * escaped, so text that merely mentions ids does not match.
 */
const LINK_PATTERN = /"id":"([^"\\]+)","parentId":(?:null|"([^"\\]+)")/g;

/** The one `id`/`parentId` pair of a damaged line, or undefined when there is none or more than one. */
function salvageLink(raw: string): JsonlProblem['link'] {
  let link: JsonlProblem['link'];
  for (const match of raw.matchAll(LINK_PATTERN)) {
    if (link !== undefined) return undefined;
    link = { id: match[1] as string, parentId: match[2] ?? null };
  }
  return link;
}

export interface JsonlParseResult {
  values: Record<string, unknown>[];
  /** 1-based line number of each value. */
  lines: number[];
  problems: JsonlProblem[];
  /** The last line had no newline and did not parse: a write torn by a crash. It was dropped. */
  tornTail: boolean;
  /** The text ended without a newline (appending must start a new line first). */
  endsWithoutNewline: boolean;
  /** Indexes into `values` whose raw line contains the parser's marker string. */
  marked: number[];
}

const NEWLINE = 0x0a;
/** How many bytes of whole lines `pushBytes` decodes into one string at a time. */
const DECODE_WINDOW_BYTES = 64 * 1024;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Incremental lenient JSONL parser: blank lines are skipped, malformed lines are reported
 * and skipped, every complete valid line is kept. Feed text with `push` or raw UTF-8 with
 * `pushBytes` (one or the other per parser), then call `end`.
 */
export class JsonlParser {
  readonly #result: JsonlParseResult = { values: [], lines: [], problems: [], tornTail: false, endsWithoutNewline: false, marked: [] };
  #carry = '';
  /** Bytes of an unfinished line, copied out of the (reusable) chunks they came from. */
  #byteCarry: Buffer[] = [];
  #lineNumber = 0;

  /** @param marker lines containing it are listed in `marked` (a cheap pre-filter for later passes). */
  constructor(private readonly marker?: string) {}

  push(chunk: string): void {
    const text = this.#carry === '' ? chunk : this.#carry + chunk;
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n', start);
      if (end === -1) break;
      this.#line(text.slice(start, end), false);
      start = end + 1;
    }
    this.#carry = text.slice(start);
  }

  /**
   * Parses the complete lines of a UTF-8 chunk. Lines are decoded a window of whole lines at
   * a time (about `DECODE_WINDOW_BYTES`, more only for a longer line), so no string much
   * larger than that is built however large the chunk; the chunk may be reused by the caller
   * afterwards.
   */
  pushBytes(chunk: Uint8Array): void {
    const bytes = asBuffer(chunk);
    let start = 0;
    const first = bytes.indexOf(NEWLINE);
    if (first === -1) {
      // Copy: the caller may refill `chunk` before the next call.
      if (bytes.length > 0) this.#byteCarry.push(Buffer.from(bytes));
      return;
    }
    if (this.#byteCarry.length > 0) {
      this.#byteCarry.push(bytes.subarray(0, first));
      this.#line(Buffer.concat(this.#byteCarry).toString('utf8'), false);
      this.#byteCarry = [];
      start = first + 1;
    }
    const last = bytes.lastIndexOf(NEWLINE);
    while (start <= last) {
      // The window ends at a newline (never inside a UTF-8 sequence): the last one in reach,
      // else the end of the line that outgrows it.
      let end = start + DECODE_WINDOW_BYTES >= last ? last : bytes.lastIndexOf(NEWLINE, start + DECODE_WINDOW_BYTES);
      if (end < start) end = bytes.indexOf(NEWLINE, start + DECODE_WINDOW_BYTES);
      const piece = bytes.subarray(start, end);
      // Plain ASCII (the usual case) decodes as latin1 without a UTF-8 pass: same text.
      this.#lines(piece.toString(isAscii(piece) ? 'latin1' : 'utf8'));
      start = end + 1;
    }
    // Copy: the caller may refill `chunk` before the next call.
    if (start < bytes.length) this.#byteCarry.push(Buffer.from(bytes.subarray(start)));
  }

  /** Each line of `text`: complete lines joined by newlines, without a final one. */
  #lines(text: string): void {
    // One search for the marker per window instead of one per line (it is rare).
    const mayMark = this.marker !== undefined && text.includes(this.marker);
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n', start);
      if (end === -1) break;
      this.#line(text.slice(start, end), false, mayMark);
      start = end + 1;
    }
    this.#line(start === 0 ? text : text.slice(start), false, mayMark);
  }

  end(): JsonlParseResult {
    const rest = this.#byteCarry.length > 0 ? Buffer.concat(this.#byteCarry).toString('utf8') : this.#carry;
    if (rest.trim() !== '') {
      this.#result.endsWithoutNewline = true;
      this.#line(rest, true);
    } else if (rest !== '') {
      this.#result.endsWithoutNewline = true;
    }
    this.#carry = '';
    this.#byteCarry = [];
    return this.#result;
  }

  #line(raw: string, last: boolean, mayMark = true): void {
    this.#lineNumber += 1;
    // A line that starts with "{" (nearly all) is not blank: no trimmed copy needed.
    if (raw.charCodeAt(0) !== 0x7b && raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      if (last) this.#result.tornTail = true;
      this.#problem(last ? 'incomplete last line (torn write), dropped' : `not JSON (${(error as Error).message})`, raw);
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      this.#problem('not an object with a string "type"', raw);
      return;
    }
    if (mayMark && this.marker !== undefined && raw.includes(this.marker)) this.#result.marked.push(this.#result.values.length);
    this.#result.values.push(value as Record<string, unknown>);
    this.#result.lines.push(this.#lineNumber);
  }

  #problem(reason: string, raw: string): void {
    const link = salvageLink(raw);
    this.#result.problems.push(link === undefined ? { line: this.#lineNumber, reason } : { line: this.#lineNumber, reason, link });
  }
}

/** Parses a whole JSONL text leniently (see `JsonlParser`). */
export function parseJsonlLenient(text: string): JsonlParseResult {
  const parser = new JsonlParser();
  parser.push(text);
  return parser.end();
}
