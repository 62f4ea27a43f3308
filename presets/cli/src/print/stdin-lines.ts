import { StringDecoder } from 'node:string_decoder';

export interface StdinLine {
  /** The parsed object, or undefined when the line is not a JSON object. */
  value: Record<string, unknown> | undefined;
  raw: string;
  /** 1-based. */
  line: number;
}

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
    this.buffer += text;
    let newline = this.buffer.indexOf('\n');
    while (newline !== -1) {
      this.accept(this.buffer.slice(0, newline));
      this.buffer = this.buffer.slice(newline + 1);
      newline = this.buffer.indexOf('\n');
    }
  }

  private finish(): void {
    if (this.ended) return;
    const rest = this.buffer + this.decoder.end();
    this.buffer = '';
    if (rest.trim() !== '') this.accept(rest);
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
    const line: StdinLine = { value, raw: trimmed, line: this.count };
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(line);
    } else this.ready.push(line);
  }
}
