import { Container, type TUI } from '@mariozechner/pi-tui';
import type { BackgroundTaskNotice, IToolState } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import { AssistantText, Gap, TaskRow, TextBlock, ThinkingRow, ToolRow, userPrompt } from './components.js';
import { style } from './theme.js';

/** Background task states after which a task's row no longer changes. */
const FINAL_TASK_STATES = new Set(['completed', 'failed', 'cancelled', 'closed', 'timed out']);
/** Lifecycle events → the status a task row shows (activity events leave it as it is). */
const TASK_STATES: Record<string, string> = { created: 'queued', started: 'running', updated: 'running', completed: 'completed', failed: 'failed', cancelled: 'cancelled', closed: 'closed', timeout: 'timed out' };

/**
 * The conversation on screen: finished items scroll into the terminal's own scrollback. It
 * streams the assistant's text and thinking, keeps one row per tool call, and keeps the rows of
 * running background tasks in `tasksArea`, which the app places below it.
 */
export class Transcript extends Container {
  /** Rows that still change (running background tasks) stay at the bottom, never in the scrollback. */
  readonly tasksArea = new Container();
  private currentText: AssistantText | undefined;
  private thinking: ThinkingRow | undefined;
  private readonly toolRows = new Map<string, ToolRow>();
  private readonly taskRows = new Map<string, TaskRow>();
  private spinnerTimer: NodeJS.Timeout | undefined;

  constructor(private readonly tui: TUI) {
    super();
  }

  /** How many background tasks are still running (their rows are in `tasksArea`). */
  get taskCount(): number {
    return [...this.taskRows.values()].length;
  }

  /** The answer streams in: the first delta of a reply starts its block (and ends the thinking). */
  textDelta(delta: string): void {
    this.thinking?.end();
    if (!this.currentText) {
      this.currentText = new AssistantText();
      this.addChild(this.currentText);
    }
    this.currentText.append(delta);
    this.tui.requestRender();
  }

  /** Thinking streams in: one collapsed row per turn. */
  thinkingDelta(delta: string): void {
    if (!this.thinking) {
      this.thinking = new ThinkingRow();
      this.addChild(this.thinking);
    }
    this.thinking.append(delta);
    this.tui.requestRender();
  }

  /** A tool call started or ended: one row per call, updated in place. */
  onTool(state: IToolState): void {
    this.thinking?.end();
    this.currentText = undefined;
    let row = this.toolRows.get(state.toolCallId);
    if (!row) {
      row = new ToolRow(state);
      this.toolRows.set(state.toolCallId, row);
      this.addChild(row);
    } else row.update(state);
    this.tickSpinner();
    this.tui.requestRender();
  }

  /** Redraws every 80 ms while a tool runs, so spinners and elapsed times move. */
  tickSpinner(): void {
    const running = [...this.toolRows.values()].some((row) => row.running);
    if (running && !this.spinnerTimer) {
      this.spinnerTimer = setInterval(() => this.tui.requestRender(), 80);
      this.spinnerTimer.unref();
    } else if (!running && this.spinnerTimer) {
      clearInterval(this.spinnerTimer);
      this.spinnerTimer = undefined;
    }
  }

  /** The conversation was compacted (`manual` or `auto`). */
  compacted(trigger: string): void {
    this.addChild(new TextBlock(`── Conversation compacted (${trigger}) · the summary replaces the earlier messages ──`, '', style.gray));
    this.addChild(new Gap());
    this.tui.requestRender();
  }

  /** Updates a background task's row; false when the event does not change what a row shows. */
  taskEvent(event: BackgroundTaskNotice): boolean {
    const status = TASK_STATES[event.type.replace(/^background_task_/, '')];
    if (status === undefined) return false;
    const label = typeof event.description === 'string' ? event.description : typeof event.command === 'string' ? event.command : undefined;
    let row = this.taskRows.get(event.taskId);
    if (!row) {
      row = new TaskRow(event.taskId, label ?? '', status);
      this.taskRows.set(event.taskId, row);
      this.tasksArea.addChild(row);
    } else row.update(label, status);
    if (FINAL_TASK_STATES.has(status)) {
      // Finished: a frozen copy goes into the transcript; the live row leaves the bottom.
      this.tasksArea.removeChild(row);
      this.taskRows.delete(event.taskId);
      this.addChild(row);
    }
    return true;
  }

  /** A prompt is sent: the text and thinking that stream next start new rows. */
  startTurn(): void {
    this.currentText = undefined;
    this.thinking = undefined;
  }

  /** The turn is over (answered, failed or interrupted). */
  endTurn(): void {
    (this.thinking as ThinkingRow | undefined)?.end();
    this.addChild(new Gap());
    this.currentText = undefined;
  }

  /** Another session replaces the shown one: its tool and task rows are no longer updated. */
  forgetRows(): void {
    this.toolRows.clear();
    this.taskRows.clear();
  }

  /** A line from the app (results, errors, hints), indented under the last item. */
  note(text: string, colour: (text: string) => string = style.gray): void {
    this.addChild(new TextBlock(text, '  ⎿ ', colour));
    this.addChild(new Gap());
    this.tui.requestRender();
  }

  /** A resumed conversation's prompts and answers, as they were shown. */
  renderHistory(session: InteractiveSession): void {
    for (const message of session.getMessages()) {
      if (message.role === 'user' && typeof message.content === 'string') {
        this.addChild(userPrompt(message.content));
        this.addChild(new Gap());
      } else if (message.role === 'assistant') {
        const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        if (text !== '') {
          const block = new AssistantText();
          block.append(text);
          this.addChild(block);
          this.addChild(new Gap());
        }
      }
    }
  }

  /** Stops the spinner's redraws. */
  stop(): void {
    if (this.spinnerTimer) clearInterval(this.spinnerTimer);
  }
}
