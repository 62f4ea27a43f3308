import { Container, Markdown, truncateToWidth, visibleWidth, wrapTextWithAnsi, type Component } from '@mariozechner/pi-tui';
import type { IDiffLine, IToolState } from '@tessera/contracts';
import { markdownTheme, style } from './theme.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** At most this many output lines of a command are shown under its row. */
const OUTPUT_TAIL = 5;
/** At most this many diff lines of an edit are shown under its row. */
const DIFF_LINES = 12;

/** Wraps text (ANSI-aware) to `width`, each line prefixed; continuation lines get `indent`. */
function wrap(text: string, width: number, first: string, indent: string): string[] {
  const room = Math.max(1, width - visibleWidth(first));
  const lines: string[] = [];
  for (const line of wrapTextWithAnsi(text, room)) lines.push(`${lines.length === 0 ? first : indent}${line}`);
  return lines.length === 0 ? [first.trimEnd()] : lines;
}

/** A block of plain lines with a prefix (notes, errors, user prompts). */
export class TextBlock implements Component {
  constructor(
    private text: string,
    private readonly prefix = '',
    private readonly colour: (text: string) => string = (text) => text,
  ) {}

  setText(text: string): void {
    this.text = text;
  }

  render(width: number): string[] {
    if (this.text === '') return [];
    const indent = ' '.repeat(visibleWidth(this.prefix));
    const out: string[] = [];
    for (const [index, line] of this.text.split('\n').entries()) out.push(...wrap(this.colour(line), width, index === 0 ? this.prefix : indent, indent));
    return out;
  }

  invalidate(): void {}
}

/**
 * A container whose lines never exceed the width: pi-tui refuses (throws on) a line wider than
 * the terminal, so everything the app draws goes through one of these.
 */
export class ClampedContainer extends Container {
  override render(width: number): string[] {
    const lines = super.render(width);
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index]!;
      if (line.length > width && visibleWidth(line) > width) lines[index] = truncateToWidth(line, width);
    }
    return lines;
  }
}

/** One blank line between transcript items. */
export class Gap implements Component {
  render(): string[] {
    return [''];
  }
  invalidate(): void {}
}

/** The user's prompt as it was sent. */
export function userPrompt(text: string): Component {
  return new TextBlock(text, style.gray('> '), style.bold);
}

/** The assistant's reply: Markdown, re-rendered as it streams (the component caches per text and width). */
export class AssistantText implements Component {
  private readonly markdown: Markdown;
  private text = '';

  constructor() {
    this.markdown = new Markdown('', 0, 0, markdownTheme);
  }

  append(delta: string): void {
    this.text += delta;
    this.markdown.setText(this.text);
  }

  getText(): string {
    return this.text;
  }

  render(width: number): string[] {
    if (this.text === '') return [];
    const lines = this.markdown.render(Math.max(1, width - 2));
    return lines.map((line, index) => `${index === 0 ? style.accent('⏺ ') : '  '}${line}`);
  }

  invalidate(): void {
    this.markdown.invalidate();
  }
}

/** Thinking, shown collapsed: one line with its size, then how long it took. */
export class ThinkingRow implements Component {
  private chars = 0;
  private readonly started = Date.now();
  private ended: number | undefined;

  append(delta: string): void {
    this.chars += delta.length;
  }

  end(): void {
    this.ended ??= Date.now();
  }

  render(width: number): string[] {
    const text =
      this.ended === undefined
        ? `✻ Thinking… (${this.chars} chars)`
        : `✻ Thought for ${Math.max(1, Math.round((this.ended - this.started) / 1000))}s (${this.chars} chars, collapsed)`;
    return [truncateToWidth(style.italic(style.gray(text)), width)];
  }

  invalidate(): void {}
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
}

function diffLine(line: IDiffLine, width: number): string {
  const number = line.type === 'remove' ? line.oldLine : line.newLine ?? line.oldLine;
  const gutter = line.type === 'hunk' ? '     ' : `${String(number ?? '').padStart(4)} `;
  const sign = line.type === 'add' ? '+' : line.type === 'remove' ? '-' : ' ';
  const body = truncateToWidth(`${gutter}${sign} ${line.text}`, width - 4);
  if (line.type === 'add') return `    ${style.green(body)}`;
  if (line.type === 'remove') return `    ${style.red(body)}`;
  return `    ${style.gray(body)}`;
}

/**
 * One tool call: a spinner and the elapsed time while it runs, then a one-line outcome with
 * the Edit diff (line numbers) or the tail of a command's output; failures in red.
 */
export class ToolRow implements Component {
  private readonly started = Date.now();
  private ended: number | undefined;

  constructor(private state: IToolState) {}

  get id(): string {
    return this.state.toolCallId;
  }

  get running(): boolean {
    return this.state.isRunning;
  }

  update(state: IToolState): void {
    this.state = state;
    if (!state.isRunning) this.ended ??= Date.now();
  }

  render(width: number): string[] {
    const { state } = this;
    const argument = state.firstArg === '' ? '' : `(${state.firstArg})`;
    const elapsed = (this.ended ?? Date.now()) - this.started;
    if (state.isRunning) {
      const frame = SPINNER[Math.floor(Date.now() / 80) % SPINNER.length]!;
      return [truncateToWidth(`${style.accent(frame)} ${style.bold(state.toolName)}${argument} ${style.gray(`· ${seconds(elapsed)}`)}`, width)];
    }
    const failed = state.result === 'error' || state.result === 'denied';
    const bullet = failed ? style.red('⏺') : style.green('⏺');
    const lines = [truncateToWidth(`${bullet} ${style.bold(state.toolName)}${argument} ${style.gray(`· ${seconds(elapsed)}`)}`, width)];
    const summary = this.summary();
    if (summary) lines.push(truncateToWidth(`  ⎿  ${failed ? style.red(summary) : style.gray(summary)}`, width));
    if (state.todos && !failed) {
      for (const todo of state.todos) lines.push(todoLine(todo, width));
    } else if (state.diffLines && state.diffLines.length > 0 && !failed) {
      for (const line of state.diffLines.slice(0, DIFF_LINES)) lines.push(diffLine(line, width));
      if (state.diffLines.length > DIFF_LINES) lines.push(style.gray(`    … ${state.diffLines.length - DIFF_LINES} more diff lines`));
    } else if (state.toolResultData && !state.diffLines) {
      const output = state.toolResultData.replace(/\s+$/, '').split('\n');
      const tail = output.slice(-OUTPUT_TAIL);
      if (output.length > OUTPUT_TAIL) lines.push(style.gray(`     … ${output.length - OUTPUT_TAIL} earlier lines`));
      for (const line of tail) lines.push(truncateToWidth(`     ${failed ? style.red(line) : line}`, width));
    }
    return lines;
  }

  private summary(): string {
    const { state } = this;
    if (state.result === 'denied' || state.denied) return 'Denied';
    if (state.result === 'error') return `Failed${state.errorCode ? ` (${state.errorCode})` : ''}`;
    if (state.diffLines) {
      const added = state.diffLines.filter((line) => line.type === 'add').length;
      const removed = state.diffLines.filter((line) => line.type === 'remove').length;
      return `Updated ${state.diffFile ?? state.firstArg} with ${added} addition${added === 1 ? '' : 's'} and ${removed} removal${removed === 1 ? '' : 's'}`;
    }
    if (state.todos) {
      const done = state.todos.filter((todo) => todo.status === 'completed').length;
      return state.todos.length === 0 ? 'Cleared the todo list' : `Updated todos (${done}/${state.todos.length} done)`;
    }
    if (state.toolResultData !== undefined) {
      const count = state.toolResultData.replace(/\s+$/, '').split('\n').filter((line) => line !== '').length;
      return count === 0 ? '(no output)' : `${count} line${count === 1 ? '' : 's'} of output`;
    }
    return 'Done';
  }

  invalidate(): void {}
}

/** One item of a TodoWrite list: ☒ done (struck through), ◼ in progress (bold), ☐ pending. */
function todoLine(todo: NonNullable<IToolState['todos']>[number], width: number): string {
  if (todo.status === 'completed') return truncateToWidth(`     ${style.gray(`☒ ${style.strike(todo.content)}`)}`, width);
  if (todo.status === 'in_progress') return truncateToWidth(`     ${style.bold(`◼ ${todo.activeForm ?? todo.content}`)}`, width);
  return truncateToWidth(`     ☐ ${todo.content}`, width);
}

/** A background task or subagent: its id, what it runs and its status. */
export class TaskRow implements Component {
  constructor(
    private readonly taskId: string,
    private label: string,
    private status: string,
  ) {}

  update(label: string | undefined, status: string): void {
    if (label) this.label = label;
    this.status = status;
  }

  render(width: number): string[] {
    const colour = this.status === 'failed' || this.status === 'cancelled' || this.status === 'timed out' ? style.red : this.status === 'completed' ? style.green : style.yellow;
    return [truncateToWidth(`${style.cyan('◆')} ${style.bold('Task')} ${this.taskId} ${this.label} ${colour(`[${this.status}]`)}`, width)];
  }

  invalidate(): void {}
}
