/** Characters gathered as one string before they are encoded into a chunk. */
const PENDING_CHARS = 64 * 1024;

/** What `LineBuffer.take()` hands to the writer. */
export interface BufferedLines {
  chunks: Buffer[];
  bytes: number;
  lines: number;
}

/**
 * Accumulates JSONL lines as UTF-8 chunks of about 64K characters. Short-lived strings are
 * cheap; tens of thousands of line strings kept alive until the next write made garbage
 * collection the main cost of a fast stream, so lines are concatenated and encoded per
 * chunk instead.
 */
export class LineBuffer {
  lines = 0;
  private chunks: Buffer[] = [];
  private chunkBytes = 0;
  private pending = '';

  /** Bytes buffered, counting pending characters as one byte each (exact once encoded). */
  get bytes(): number {
    return this.chunkBytes + this.pending.length;
  }

  append(line: string): void {
    this.pending += line;
    this.lines += 1;
    if (this.pending.length >= PENDING_CHARS) this.seal();
  }

  /** Everything appended so far; the buffer is empty afterwards. */
  take(): BufferedLines {
    this.seal();
    const taken = { chunks: this.chunks, bytes: this.chunkBytes, lines: this.lines };
    this.chunks = [];
    this.chunkBytes = 0;
    this.lines = 0;
    return taken;
  }

  /** Puts lines that could not be written back in front of newer ones. */
  restore(taken: BufferedLines): void {
    this.seal();
    this.chunks = taken.chunks.concat(this.chunks);
    this.chunkBytes += taken.bytes;
    this.lines += taken.lines;
  }

  /** Drops the oldest chunks until at most `maxBytes` remain; returns the bytes dropped. */
  dropOldest(maxBytes: number): number {
    this.seal();
    let dropped = 0;
    while (this.chunkBytes > maxBytes && this.chunks.length > 0) {
      const chunk = this.chunks.shift()!;
      this.chunkBytes -= chunk.length;
      dropped += chunk.length;
    }
    return dropped;
  }

  private seal(): void {
    if (this.pending === '') return;
    const chunk = Buffer.from(this.pending, 'utf8');
    this.chunks.push(chunk);
    this.chunkBytes += chunk.length;
    this.pending = '';
  }
}
