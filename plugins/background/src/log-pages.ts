import type { IBackgroundTaskLogCursor, IBackgroundTaskLogPage } from './types.js';

/** Bounded text capture for process-like runners. */
export interface ILimitedOutputCapture {
  readonly limitBytes: number;
  /** Bytes kept (≤ `limitBytes`). */
  readonly byteLength: number;
  /** Bytes offered after the limit was reached. */
  readonly droppedBytes: number;
  readonly truncated: boolean;
  append(chunk: string | Uint8Array): void;
  /** The kept text; never ends in half a UTF-8 character when truncated. */
  toString(): string;
}

/** Length of `buffer` without a trailing, incomplete UTF-8 sequence. */
function completeUtf8Length(buffer: Buffer): number {
  const end = buffer.length;
  // A sequence is at most 4 bytes, so only the last 3 bytes can start an unfinished one.
  for (let index = end - 1; index >= Math.max(0, end - 4); index--) {
    const byte = buffer[index]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return index + needed <= end ? end : index;
  }
  return end;
}

export function createLimitedOutputCapture(limitBytes: number): ILimitedOutputCapture {
  if (!Number.isInteger(limitBytes) || limitBytes < 0) {
    throw new RangeError(`createLimitedOutputCapture: limitBytes must be a non-negative integer, got ${limitBytes}.`);
  }
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  return {
    limitBytes,
    get byteLength() {
      return kept;
    },
    get droppedBytes() {
      return dropped;
    },
    get truncated() {
      return dropped > 0;
    },
    append(chunk) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
      const room = limitBytes - kept;
      if (buffer.length <= room) {
        chunks.push(buffer);
        kept += buffer.length;
        return;
      }
      if (room > 0) chunks.push(buffer.subarray(0, room));
      kept += Math.max(0, room);
      dropped += buffer.length - Math.max(0, room);
    },
    toString() {
      const all = Buffer.concat(chunks);
      return all.toString('utf8', 0, dropped > 0 ? completeUtf8Length(all) : all.length);
    },
  };
}

/**
 * Appends `[source] line` for every non-empty line of `text` (a trailing `\r` is dropped).
 * Returns how many lines were added. Callers that stream keep their own partial-line buffer.
 */
export function appendPrefixedLogLines(target: string[], source: string, text: string): number {
  let added = 0;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    target.push(`[${source}] ${line}`);
    added += 1;
  }
  return added;
}

export interface IBackgroundTaskLogPageOptions {
  /** Lines per page (default 200). */
  limit?: number;
  /** Absolute line number of `lines[0]` when older lines were dropped (default 0). */
  firstOffset?: number;
}

export const DEFAULT_LOG_PAGE_LINES = 200;

/**
 * One page of an append-only log. Cursors are absolute line numbers, so a cursor stays
 * valid while the log grows and while old lines are dropped from memory.
 */
export function createBackgroundTaskLogPage(
  lines: readonly string[],
  cursor?: IBackgroundTaskLogCursor,
  options: IBackgroundTaskLogPageOptions = {},
): IBackgroundTaskLogPage {
  const limit = options.limit ?? DEFAULT_LOG_PAGE_LINES;
  const firstOffset = options.firstOffset ?? 0;
  const requested = cursor?.offset ?? firstOffset;
  if (!Number.isInteger(requested) || requested < 0) {
    throw new RangeError(`Log cursor offset must be a non-negative integer, got ${String(requested)}.`);
  }
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`Log page limit must be a positive integer, got ${limit}.`);
  const totalLines = firstOffset + lines.length;
  const start = Math.min(Math.max(requested, firstOffset), totalLines);
  const end = Math.min(start + limit, totalLines);
  return {
    lines: lines.slice(start - firstOffset, end - firstOffset),
    cursor: { offset: start },
    nextCursor: { offset: end },
    hasMore: end < totalLines,
    truncated: requested < firstOffset,
    totalLines,
  };
}

/** An in-memory append-only log that keeps at most `maxLines` recent lines. */
export class BackgroundTaskLogBuffer {
  private lines: string[] = [];
  private firstOffset = 0;

  constructor(private readonly maxLines = 10_000) {}

  get totalLines(): number {
    return this.firstOffset + this.lines.length;
  }

  append(source: string, text: string): string[] {
    const added: string[] = [];
    appendPrefixedLogLines(added, source, text);
    if (added.length === 0) return added;
    this.lines.push(...added);
    const excess = this.lines.length - this.maxLines;
    if (excess > 0) {
      // Drop in batches so a chatty process does not shift the array on every line.
      const drop = Math.max(excess, Math.floor(this.maxLines / 10));
      this.lines = this.lines.slice(drop);
      this.firstOffset += drop;
    }
    return added;
  }

  page(cursor?: IBackgroundTaskLogCursor, limit?: number): IBackgroundTaskLogPage {
    return createBackgroundTaskLogPage(this.lines, cursor, {
      firstOffset: this.firstOffset,
      ...(limit === undefined ? {} : { limit }),
    });
  }
}
