import { StringDecoder } from 'node:string_decoder';

export interface StdinLine {
  /** The parsed object, or undefined when the line is not a JSON object. */
  value: Record<string, unknown> | undefined;
  raw: string;
  /** 1-based. */
  line: number;
}

/** Longest line read (64 MiB): longer ones are reported and skipped, not buffered without end. */
const MAX_LINE_CHARS = 64 * 1024 * 1024;

/** Newline-delimited JSON from a stream, one object per call; blank lines are skipped. */
export class StdinLines {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  private readonly ready: StdinLine[] = [];
  private waiter: ((line: StdinLine | undefined) => void) | undefined;
  private ended = false;
  private count = 0;

  constructor(private readonly stream: NodeJS.ReadableStream) {
    stream.on('data', (chunk: Buffer | string) => this.push(typeof chunk === 'string' ? chunk : this.decoder.write(chunk)));
    stream.on('end', () => this.finish());
    stream.on('error', () => this.finish());
    stream.on('close', () => this.finish());
  }

  next(): Promise<StdinLine | undefined> {
    const line = this.ready.shift();
    if (line) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Stop reading (SIGTERM): pending `next()` calls see the end. */
  end(): void {
    this.finish();
    (this.stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  }

  private push(text: string): void {
    // Only the new text can hold the next newline: no rescanning of a long partial line.
    let newline = text.indexOf('\n');
    if (newline === -1) {
      if (this.buffer.length + text.length > MAX_LINE_CHARS) this.overflow();
      else this.buffer += text;
      return;
    }
    let start = 0;
    while (newline !== -1) {
      const piece = text.slice(start, newline);
      if (this.dropping) this.dropping = false;
      else if (this.buffer.length + piece.length > MAX_LINE_CHARS) this.overflow(true);
      else this.accept(this.buffer + piece);
      this.buffer = '';
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    const rest = text.slice(start);
    if (rest.length > MAX_LINE_CHARS) this.overflow();
    else if (!this.dropping) this.buffer = rest;
  }

  /** A line longer than the cap: reported once as a bad line, the rest of it skipped. */
  private dropping = false;

  private overflow(ended = false): void {
    if (!this.dropping) {
      this.count += 1;
      const line: StdinLine = { value: undefined, raw: `(a line longer than ${MAX_LINE_CHARS} characters)`, line: this.count };
      this.deliver(line);
    }
    this.buffer = '';
    this.dropping = !ended;
  }

  private finish(): void {
    if (this.ended) return;
    const rest = this.buffer + this.decoder.end();
    this.buffer = '';
    if (rest.trim() !== '' && !this.dropping) this.accept(rest);
    this.ended = true;
    if (this.waiter && this.ready.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(undefined);
    }
  }

  private accept(raw: string): void {
    this.count += 1;
    const trimmed = raw.trim();
    if (trimmed === '') return;
    let value: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) value = parsed as Record<string, unknown>;
    } catch {
      value = undefined;
    }
    this.deliver({ value, raw: trimmed, line: this.count });
  }

  private deliver(line: StdinLine): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(line);
    } else this.ready.push(line);
  }
}
