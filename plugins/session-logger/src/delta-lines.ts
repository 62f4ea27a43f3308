import type { LineBuffer } from './line-buffer.js';
import { redactSecretText, SecretTextStream } from './redact-text.js';

/** Longest sequence/round number text: `-1.2345678901234567e+308`. */
const MAX_NUMBER_BYTES = 24;
const SEQUENCE = ',"sequence":';
const DELTA = ',"delta":';

/**
 * Encodes the JSONL line of a streamed-chunk event (`provider_stream_raw_delta`,
 * `text_delta`) straight into the `LineBuffer`'s bytes from its four fields: no data
 * copy, redaction walk, `JSON.stringify` or line string. The taps log every chunk twice
 * with the same fields, so the second line copies the first one's tail (`,"sequence":…}`)
 * bytes and shares its timestamp (one clock reading per chunk); the
 * `{"timestamp":…,"event":…` heads are re-encoded only when the millisecond changes, and
 * the `,"round":…,"executionId":…}` end only when the round or execution does. The bytes
 * are exactly what `JSON.stringify` writes for the record with its strings redacted. The
 * deltas of one stream (same round and execution, consecutive sequence numbers) go
 * through one `SecretTextStream`, so a secret split across chunks is redacted in each of
 * them; the general path redacts each string on its own. Data without exactly the taps'
 * shape (`sequence`, `delta`, `round`, `executionId`, in that order; finite numbers;
 * strings of at most `maxChars`) is refused (`false`) and takes the general path.
 */
export class DeltaLines {
  private timestamp = '';
  private rawHead = new Uint8Array(0);
  private textHead = new Uint8Array(0);
  private round = Number.NaN;
  private executionId: string | undefined;
  private end = new Uint8Array(0);
  /** The last tail written: its fields and where its bytes are. */
  private sequence = Number.NaN;
  private delta: string | undefined;
  private tailChunk: Uint8Array = new Uint8Array(0);
  private tailStart = 0;
  private tailEnd = 0;
  /** True right after a line with new fields, until the next line of this file. */
  private fresh = false;
  /** Redaction state of the stream the last delta belonged to. */
  private readonly secrets = new SecretTextStream();

  /**
   * @param sessionJson `"sessionId":"…"`, already serialised.
   * @param maxChars Longest string accepted inline: longer ones may need an external payload.
   */
  constructor(
    private readonly sessionJson: string,
    private readonly maxChars: number,
  ) {}

  /**
   * Writes the second line of a chunk — the same fields as the line written just before —
   * with that line's timestamp: both lines record one chunk, so the clock is read once per
   * chunk. `false` when `data` is not such a repeat.
   */
  repeat(buffer: LineBuffer, event: string, data: Record<string, unknown>): boolean {
    if (!this.fresh) return false;
    this.fresh = false;
    if (!(this.sameFields(data) && hasDeltaKeys(data))) return false;
    this.copyTail(buffer, event === 'text_delta' ? this.textHead : this.rawHead);
    return true;
  }

  /** Says that another line came after the last one written here. */
  interrupt(): void {
    this.fresh = false;
  }

  write(buffer: LineBuffer, event: string, timestamp: string, data: Record<string, unknown>): boolean {
    this.fresh = false;
    if (!hasDeltaKeys(data)) return false;
    if (timestamp !== this.timestamp) {
      this.timestamp = timestamp;
      this.rawHead = Buffer.from(`{"timestamp":"${timestamp}",${this.sessionJson},"event":"provider_stream_raw_delta"`);
      this.textHead = Buffer.from(`{"timestamp":"${timestamp}",${this.sessionJson},"event":"text_delta"`);
    }
    const head = event === 'text_delta' ? this.textHead : this.rawHead;
    if (this.sameFields(data)) {
      this.copyTail(buffer, head);
      return true;
    }
    const { sequence, delta, round, executionId } = data;
    if (!(Number.isFinite(sequence) && Number.isFinite(round) && typeof delta === 'string' && typeof executionId === 'string')) return false;
    if (delta.length > this.maxChars || executionId.length > this.maxChars) return false;
    // A chunk continues the stream of the previous one only when it is the next in sequence.
    if (round !== this.round || executionId !== this.executionId || sequence !== this.sequence + 1) this.secrets.reset();
    const text = this.secrets.push(delta);
    if (round !== this.round || executionId !== this.executionId) {
      this.round = round as number;
      this.executionId = executionId;
      // Finite numbers print the same through template literals as through JSON.stringify.
      this.end = Buffer.from(`,"round":${round as number},"executionId":${JSON.stringify(redactSecretText(executionId))}}\n`);
    }
    // JSON text of a string: at most 6 bytes (`\uXXXX`) per UTF-16 unit, plus quotes.
    buffer.reserve(head.length + SEQUENCE.length + MAX_NUMBER_BYTES + DELTA.length + text.length * 6 + 2 + this.end.length);
    const { chunk } = buffer;
    let offset = buffer.offset;
    chunk.set(head, offset);
    offset += head.length;
    const tailStart = offset;
    offset = writeAscii(chunk, offset, SEQUENCE);
    offset = writeNumber(chunk, offset, sequence as number);
    offset = writeAscii(chunk, offset, DELTA);
    offset = writeJsonString(chunk, offset, text);
    chunk.set(this.end, offset);
    offset += this.end.length;
    buffer.commit(offset);
    this.sequence = sequence as number;
    this.delta = delta;
    this.tailChunk = chunk;
    this.tailStart = tailStart;
    this.tailEnd = offset;
    this.fresh = true;
    return true;
  }

  private sameFields(data: Record<string, unknown>): boolean {
    return data.sequence === this.sequence && data.delta === this.delta && data.round === this.round && data.executionId === this.executionId;
  }

  /** `head`, then the bytes of the last tail written (usually earlier in this very chunk). */
  private copyTail(buffer: LineBuffer, head: Uint8Array): void {
    const length = this.tailEnd - this.tailStart;
    buffer.reserve(head.length + length);
    const { chunk } = buffer;
    const offset = buffer.offset + head.length;
    chunk.set(head, buffer.offset);
    if (this.tailChunk === chunk) chunk.copyWithin(offset, this.tailStart, this.tailEnd);
    else chunk.set(this.tailChunk.subarray(this.tailStart, this.tailEnd), offset);
    buffer.commit(offset + length);
  }
}

/** A finite number as JSON; small non-negative integers (every sequence number) without a string. */
function writeNumber(chunk: Uint8Array, offset: number, value: number): number {
  if (!(value >= 0 && value <= 0x7fffffff && (value | 0) === value)) return writeAscii(chunk, offset, `${value}`);
  let end = offset + 1;
  for (let rest = value; rest >= 10; rest = (rest / 10) | 0) end++;
  for (let index = end - 1, rest = value; index >= offset; index--, rest = (rest / 10) | 0) chunk[index] = 0x30 + (rest % 10);
  return end;
}

function writeAscii(chunk: Uint8Array, offset: number, text: string): number {
  for (let index = 0; index < text.length; index++) chunk[offset++] = text.charCodeAt(index);
  return offset;
}

/**
 * `text` as a JSON string. Printable ASCII without `"` or `\` is copied byte by byte;
 * anything else (escapes, non-ASCII, lone surrogates) is left to JSON.stringify and UTF-8
 * encoding, which then overwrite the partial copy.
 */
function writeJsonString(chunk: Buffer, offset: number, text: string): number {
  const start = offset;
  chunk[offset++] = 0x22;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return start + chunk.write(JSON.stringify(text), start, 'utf8');
    chunk[offset++] = code;
  }
  chunk[offset++] = 0x22;
  return offset;
}

/** Exactly the taps' keys, in the taps' order (so the line keeps JSON.stringify's key order). */
function hasDeltaKeys(data: Record<string, unknown>): boolean {
  // `for…in` also walks inherited keys, which JSON.stringify would not write.
  if (Object.getPrototypeOf(data) !== Object.prototype) return false;
  let index = 0;
  for (const key in data) {
    switch (index++) {
      case 0:
        if (key !== 'sequence') return false;
        break;
      case 1:
        if (key !== 'delta') return false;
        break;
      case 2:
        if (key !== 'round') return false;
        break;
      case 3:
        if (key !== 'executionId') return false;
        break;
      default:
        return false;
    }
  }
  return index === 4;
}
