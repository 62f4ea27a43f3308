/** Size of a fresh chunk; lines are encoded straight into it. */
const CHUNK_BYTES = 64 * 1024;

/** What `LineBuffer.take()` hands to the writer. */
export interface BufferedLines {
  chunks: Buffer[];
  bytes: number;
  lines: number;
}

/**
 * Accumulates JSONL lines as UTF-8 bytes in 64 KiB chunks. Lines are encoded as they
 * arrive, so no line string outlives its `log()` call: tens of thousands of strings kept
 * alive until the next write made garbage collection the main cost of a fast stream, and
 * encoding a few hundred joined line strings at once spent most of its time flattening them.
 * Hot writers (see `DeltaLines`) fill `chunk` from `offset` directly after `reserve()`, then
 * `commit()`.
 */
export class LineBuffer {
  lines = 0;
  /** The chunk being filled; bytes before `offset` are written and never change again. */
  chunk: Buffer = Buffer.alloc(0);
  offset = 0;
  private chunks: Buffer[] = [];
  private chunkBytes = 0;

  /** Bytes buffered. */
  get bytes(): number {
    return this.chunkBytes + this.offset;
  }

  /** Makes `chunk` hold at least `bytes` free bytes from `offset`. */
  reserve(bytes: number): void {
    if (this.offset + bytes <= this.chunk.length) return;
    this.seal();
    this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, bytes));
  }

  /** Ends a line that a hot writer wrote into `chunk` up to `end`. */
  commit(end: number): void {
    this.offset = end;
    this.lines += 1;
  }

  append(line: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.reserve(line.length * 3);
    this.offset += this.chunk.write(line, this.offset, 'utf8');
    this.lines += 1;
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

  /** Moves the written bytes to `chunks`; the rest of the chunk stays in use for later lines. */
  private seal(): void {
    if (this.offset === 0) return;
    this.chunks.push(this.chunk.subarray(0, this.offset));
    this.chunkBytes += this.offset;
    this.chunk = this.chunk.subarray(this.offset);
    this.offset = 0;
  }
}
