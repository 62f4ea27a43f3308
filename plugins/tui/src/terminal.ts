import { ProcessTerminal, type Terminal as PiTerminal } from '@mariozechner/pi-tui';

/**
 * What the interactive terminal draws on: Tessera's own interface (the shape every renderer
 * needs), so tests use `RecordingTerminal` and another renderer can replace pi-tui without
 * touching the app. It matches pi-tui's `Terminal`, which the renderer is given as is.
 */
export interface Terminal extends PiTerminal {}

/** The process's own terminal (raw stdin, bracketed paste, Kitty keys where the terminal answers). */
export function processTerminal(): Terminal {
  return new ProcessTerminal();
}

/**
 * A terminal in memory: everything written is kept (and counted), input is typed with
 * `type()`, and `resize()` changes the size the way a window does. Screen-accurate assertions
 * feed `output` to a terminal emulator (see `XtermScreen` in the tests).
 */
export class RecordingTerminal implements Terminal {
  private onInput: ((data: string) => void) | undefined;
  private onResize: (() => void) | undefined;
  private chunks: string[] = [];
  /** Total bytes written (UTF-8), the figure the streaming benchmark compares. */
  bytesWritten = 0;
  writes = 0;
  title = '';
  /** Called after every write (a screen emulator, a test waiting for text). */
  onWrite: ((data: string) => void) | undefined;

  constructor(
    private width = 80,
    private height = 24,
  ) {}

  start(onInput: (data: string) => void, onResize: () => void): void {
    this.onInput = onInput;
    this.onResize = onResize;
  }

  stop(): void {
    this.onInput = undefined;
    this.onResize = undefined;
  }

  async drainInput(): Promise<void> {}

  write(data: string): void {
    this.chunks.push(data);
    this.bytesWritten += Buffer.byteLength(data);
    this.writes += 1;
    this.onWrite?.(data);
  }

  get columns(): number {
    return this.width;
  }

  get rows(): number {
    return this.height;
  }

  get kittyProtocolActive(): boolean {
    return false;
  }

  moveBy(lines: number): void {
    if (lines > 0) this.write(`\x1b[${lines}B`);
    else if (lines < 0) this.write(`\x1b[${-lines}A`);
  }

  hideCursor(): void {
    this.write('\x1b[?25l');
  }

  showCursor(): void {
    this.write('\x1b[?25h');
  }

  clearLine(): void {
    this.write('\x1b[K');
  }

  clearFromCursor(): void {
    this.write('\x1b[J');
  }

  clearScreen(): void {
    this.write('\x1b[2J\x1b[H');
  }

  setTitle(title: string): void {
    this.title = title;
  }

  setProgress(): void {}

  /** Everything written so far. */
  get output(): string {
    return this.chunks.join('');
  }

  /** Types `data` as the terminal would deliver it (one key or escape sequence per call). */
  type(data: string): void {
    this.onInput?.(data);
  }

  /** Changes the size and tells the renderer, as SIGWINCH does. */
  resize(columns: number, rows: number): void {
    this.width = columns;
    this.height = rows;
    this.onResize?.();
  }
}
