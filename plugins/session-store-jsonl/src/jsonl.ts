/** A line that could not be used: 1-based line number and why. */
export interface JsonlProblem {
  line: number;
  reason: string;
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
   * Parses the complete lines of a UTF-8 chunk. Each line is decoded on its own, so no string
   * larger than one line is ever built; the chunk may be reused by the caller afterwards.
   */
  pushBytes(chunk: Uint8Array): void {
    const bytes = asBuffer(chunk);
    let start = 0;
    let end = bytes.indexOf(NEWLINE, start);
    if (end !== -1 && this.#byteCarry.length > 0) {
      this.#byteCarry.push(bytes.subarray(0, end));
      this.#line(Buffer.concat(this.#byteCarry).toString('utf8'), false);
      this.#byteCarry = [];
      start = end + 1;
      end = bytes.indexOf(NEWLINE, start);
    }
    while (end !== -1) {
      this.#line(bytes.toString('utf8', start, end), false);
      start = end + 1;
      end = bytes.indexOf(NEWLINE, start);
    }
    // Copy: the caller may refill `chunk` before the next call.
    if (start < bytes.length) this.#byteCarry.push(Buffer.from(bytes.subarray(start)));
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

  #line(raw: string, last: boolean): void {
    this.#lineNumber += 1;
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      if (last) this.#result.tornTail = true;
      this.#result.problems.push({ line: this.#lineNumber, reason: last ? 'incomplete last line (torn write), dropped' : `not JSON (${(error as Error).message})` });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      this.#result.problems.push({ line: this.#lineNumber, reason: 'not an object with a string "type"' });
      return;
    }
    if (this.marker !== undefined && raw.includes(this.marker)) this.#result.marked.push(this.#result.values.length);
    this.#result.values.push(value as Record<string, unknown>);
    this.#result.lines.push(this.#lineNumber);
  }
}

/** Parses a whole JSONL text leniently (see `JsonlParser`). */
export function parseJsonlLenient(text: string): JsonlParseResult {
  const parser = new JsonlParser();
  parser.push(text);
  return parser.end();
}
