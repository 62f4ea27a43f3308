import {
  Container,
  Editor,
  Input,
  matchesKey,
  SelectList,
  truncateToWidth,
  TUI,
  type AutocompleteItem,
  type Component,
  type SlashCommand,
} from '@mariozechner/pi-tui';
import {
  describeError,
  PERMISSION_MODES,
  type ApprovalAnswer,
  type ICommandInteraction,
  type ICommandResult,
  type IExecutionResult,
  type IToolState,
  type PermissionMode,
  type ToolUseBlock,
} from '@tessera/contracts';
import type { InteractiveSession, IResumableSession } from '@tessera/kernel';
import type { PendingApproval, TerminalApprovals } from './approvals.js';
import { AssistantText, ClampedContainer, Gap, TaskRow, TextBlock, ThinkingRow, ToolRow, userPrompt } from './components.js';
import { WorkspaceCompletion } from './mention-completion.js';
import { PermissionPrompt } from './permission-prompt.js';
import { StatusLineRunner, type StatusLineCommand } from './status-line.js';
import type { Terminal } from './terminal.js';
import { editorTheme, selectListTheme, style } from './theme.js';

/** Plain typed text (no escape sequence, no control character): the editor's fast path. */
const PRINTABLE = /^[^\x00-\x1f\x7f]+$/;

/** Background task states after which a task's row no longer changes. */
const FINAL_TASK_STATES = new Set(['completed', 'failed', 'cancelled', 'closed', 'timed out']);
/** Lifecycle events → the status a task row shows (activity events leave it as it is). */
const TASK_STATES: Record<string, string> = { created: 'queued', started: 'running', updated: 'running', completed: 'completed', failed: 'failed', cancelled: 'cancelled', closed: 'closed', timeout: 'timed out' };

/** How a pressed key twice counts as a double press (Esc Esc, Ctrl-C Ctrl-C, Ctrl-D Ctrl-D). */
const DOUBLE_PRESS_MS = 800;

/** The mode indicator under the prompt, as Claude Code words it. */
const MODE_LABELS: Record<PermissionMode, string> = {
  default: '⏸ manual mode on',
  acceptEdits: '⏵⏵ accept edits on',
  plan: '⏸ plan mode on',
  bypassPermissions: '⏵⏵ bypass permissions on',
  dontAsk: '⏵⏵ don’t ask mode on',
} as Record<PermissionMode, string>;

export interface TesseraTuiOptions {
  terminal: Terminal;
  /** The session, or its promise: the prompt is drawn at once and typed input waits for it. */
  session: InteractiveSession | Promise<InteractiveSession>;
  /** The mode the status line shows before the session is ready. */
  initialMode?: PermissionMode;
  approvals: TerminalApprovals;
  cwd: string;
  version: string;
  /** The model's display name (changes with `/model`). */
  modelLabel: () => string;
  /** Shift+Tab may cycle into `bypassPermissions` (`--allow-dangerously-skip-permissions`). */
  allowBypass?: boolean;
  /** Claude Code's `statusLine` setting. */
  statusLine?: StatusLineCommand;
  /** The current git branch, shown in the status line. */
  gitBranch?: string;
  /** USD for a turn's tokens on the current model (0 when its price is unknown). */
  /** USD for one turn's usage: uncached input, output, cache reads and cache writes (priced apart). */
  costOf?: (usage: { input: number; output: number; cacheRead: number; cacheWrite: number }) => number;
  /** "Allow always": write `rule` to the local settings file; returns the file's display path. */
  saveAllowRule?: (rule: string) => Promise<string>;
  /** Stored sessions for the picker (`/resume`, `-r` with no id). */
  listSessions?: () => Promise<IResumableSession[]>;
  /** Replaces the running session by a resumed one (or a fresh one when `id` is undefined). */
  switchSession?: (id: string | undefined) => Promise<InteractiveSession>;
  /** Recent prompts, newest first (↑ history, Ctrl-R search). */
  recentPrompts?: () => readonly string[];
  /** `/reload-plugins` (and a successful `/plugin …`): re-read bundle plugins; returns a line to show. */
  reloadPlugins?: () => Promise<string>;
  /** `/plugin` with no arguments: the installed plugins and how to manage them, as text to show. */
  pluginManager?: () => Promise<string>;
  /**
   * `/reset`, once the user confirmed: put the user settings aside (the host decides how; the
   * CLI moves the file to a backup); returns a line to show. The app exits afterwards.
   */
  resetSettings?: () => Promise<string>;
  /** Open the session picker as soon as the app starts (`tessera -r` with no id). */
  openPicker?: boolean;
  /** Told once the user asked to leave (Ctrl-C twice, Ctrl-D, `/exit`). */
  onExit: (code: number) => void;
}

interface Overlayable extends Component {
  handleInput(data: string): void;
}

/**
 * The `tessera` interactive terminal: a transcript (finished items scroll into the terminal's
 * own scrollback; only the bottom redraws), a multi-line prompt with history, `/` and `@`
 * completion, inline permission prompts and pickers, a status line, and Claude Code's keys.
 */
export class TesseraTui {
  readonly tui: TUI;
  private readonly transcript = new Container();
  /** Rows that still change (running background tasks) stay at the bottom, never in the scrollback. */
  private readonly tasksArea = new Container();
  private readonly queuedRow = new TextBlock('', '', style.gray);
  private readonly noticeRow = new TextBlock('', '', style.yellow);
  private readonly promptArea = new Container();
  private readonly statusRow = new TextBlock('', '', style.gray);
  private readonly editor: Editor;
  private session: InteractiveSession | undefined;
  private readonly ready: Promise<InteractiveSession>;
  private unsubscribe: Array<() => void> = [];
  private currentText: AssistantText | undefined;
  private thinking: ThinkingRow | undefined;
  private readonly toolRows = new Map<string, ToolRow>();
  private readonly taskRows = new Map<string, TaskRow>();
  private spinnerTimer: NodeJS.Timeout | undefined;
  private queued: string | undefined;
  private busy = false;
  private modal: Overlayable | undefined;
  private readonly waitingModals: Overlayable[] = [];
  private readonly approvalModals = new WeakMap<PendingApproval, Overlayable>();
  private lastKey: { key: string; at: number } | undefined;
  private noticeTimer: NodeJS.Timeout | undefined;
  private costUsd = 0;
  private readonly started = Date.now();
  private contextPercent = 0;
  private statusRunner: StatusLineRunner | undefined;
  /** `/statusline on|off` and `/statusline branch on|off`, for this run of the app. */
  private statusEnabled = true;
  private showGitBranch = true;
  private detachApprovals: (() => void) | undefined;
  private exited = false;
  private historySearch: { query: string; matches: string[]; index: number } | undefined;

  constructor(private readonly options: TesseraTuiOptions) {
    this.ready = Promise.resolve(options.session);
    // A session that fails to start is reported by `start()`; never unhandled here.
    this.ready.catch(() => undefined);
    this.tui = new TUI(options.terminal, true);
    this.editor = new Editor(this.tui, editorTheme, { paddingX: 1, autocompleteMaxVisible: 8 });
    this.editor.onSubmit = (text) => void this.submit(text);
    // Never wipe the scrollback when the bottom shrinks (a prompt closing): clear the rows instead.
    this.tui.setClearOnShrink(false);
    const root = new ClampedContainer();
    root.addChild(this.transcript);
    root.addChild(this.tasksArea);
    root.addChild(this.queuedRow);
    root.addChild(this.noticeRow);
    root.addChild(this.promptArea);
    root.addChild(this.statusRow);
    this.tui.addChild(root);
    this.promptArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.addInputListener((data) => this.onKey(data));
    if (options.statusLine) this.statusRunner = new StatusLineRunner(options.statusLine, options.cwd, () => this.renderStatus());
  }

  /** Draws the banner and the prompt and starts taking keys. */
  async start(): Promise<void> {
    this.transcript.addChild(
      new TextBlock(
        `${style.accent('✻')} ${style.bold('Tessera')} ${style.gray(`v${this.options.version}`)}\n${style.gray(`  ${this.options.modelLabel()} · ${this.options.cwd}`)}\n${style.gray('  /help for commands · Esc interrupts · Shift+Tab cycles modes · Ctrl-C twice exits')}`,
      ),
    );
    this.transcript.addChild(new Gap());
    for (const prompt of [...(this.options.recentPrompts?.() ?? [])].reverse()) this.editor.addToHistory(prompt);
    this.detachApprovals = this.options.approvals.attach(
      (pending) => this.showApproval(pending),
      (pending) => this.withdrawModal(this.approvalModals.get(pending)),
    );
    // The prompt is on screen before the session is ready; what is typed meanwhile waits.
    this.renderStatus();
    this.tui.start();
    // First paint now, before the session's modules load and compose (they keep the loop busy).
    this.renderNow();
    const session = await this.ready;
    this.renderHistory(session);
    this.attach(session);
    await this.refreshCompletions();
    this.renderStatus();
    if (this.options.openPicker) await this.openSessionPicker();
  }

  /** Resolves with the session once it is ready. */
  whenReady(): Promise<InteractiveSession> {
    return this.ready;
  }

  /** The session; only called on paths that run after it is ready. */
  private get s(): InteractiveSession {
    if (!this.session) throw new Error('The session is not ready yet.');
    return this.session;
  }

  /** Stops drawing and restores the terminal (idempotent). */
  stop(): void {
    if (this.spinnerTimer) clearInterval(this.spinnerTimer);
    if (this.noticeTimer) clearTimeout(this.noticeTimer);
    this.statusRunner?.close();
    this.detachApprovals?.();
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    this.tui.stop();
  }

  /** A line from the host (sign-in requests, warnings) in the transcript. */
  announce(text: string): void {
    this.note(text, style.yellow);
  }

  /** Asks the user to choose (a modal list; Esc answers undefined). */
  pick(title: string, items: Array<{ value: string; label: string; description?: string }>): Promise<string | undefined> {
    return new Promise((resolve) => this.choose(title, items, resolve));
  }

  /** The session on screen (it changes after `/resume` or `/clear`); undefined before it is ready. */
  getSession(): InteractiveSession | undefined {
    return this.session;
  }

  private attach(session: InteractiveSession): void {
    for (const off of this.unsubscribe) off();
    this.session = session;
    this.unsubscribe = [
      session.on('text_delta', (delta) => {
        this.thinking?.end();
        if (!this.currentText) {
          this.currentText = new AssistantText();
          this.transcript.addChild(this.currentText);
        }
        this.currentText.append(delta);
        this.tui.requestRender();
      }),
      session.on('thinking_delta', (delta) => {
        if (!this.thinking) {
          this.thinking = new ThinkingRow();
          this.transcript.addChild(this.thinking);
        }
        this.thinking.append(delta);
        this.tui.requestRender();
      }),
      session.on('tool_start', (state) => this.onTool(state)),
      session.on('tool_end', (state) => this.onTool(state)),
      session.on('interrupted', () => this.note('Interrupted · tell Tessera what to do instead', style.yellow)),
      session.getSession().subscribe((event) => {
        if (event.type !== 'compact') return;
        this.transcript.addChild(new TextBlock(`── Conversation compacted (${event.trigger}) · the summary replaces the earlier messages ──`, '', style.gray));
        this.transcript.addChild(new Gap());
        this.tui.requestRender();
      }),
      session.on('context_update', (state) => {
        this.contextPercent = state.usedPercentage;
        this.renderStatus();
      }),
      session.on('background_task_event', (event) => {
        const status = TASK_STATES[event.type.replace(/^background_task_/, '')];
        if (status === undefined) return;
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
          this.transcript.addChild(row);
        }
        this.renderStatus();
      }),
    ];
    this.renderStatus();
  }

  private onTool(state: IToolState): void {
    this.thinking?.end();
    this.currentText = undefined;
    let row = this.toolRows.get(state.toolCallId);
    if (!row) {
      row = new ToolRow(state);
      this.toolRows.set(state.toolCallId, row);
      this.transcript.addChild(row);
    } else row.update(state);
    this.tickSpinner();
    this.tui.requestRender();
  }

  /** Redraws every 80 ms while a tool runs, so spinners and elapsed times move. */
  private tickSpinner(): void {
    const running = [...this.toolRows.values()].some((row) => row.running);
    if (running && !this.spinnerTimer) {
      this.spinnerTimer = setInterval(() => this.tui.requestRender(), 80);
      this.spinnerTimer.unref();
    } else if (!running && this.spinnerTimer) {
      clearInterval(this.spinnerTimer);
      this.spinnerTimer = undefined;
    }
  }

  // ── Input ────────────────────────────────────────────────────────────────────────────────

  private onKey(data: string): { consume?: boolean } | undefined {
    if (this.exited) return { consume: true };
    const key = matchesKey(data, 'escape') ? 'escape' : matchesKey(data, 'ctrl+c') ? 'ctrl+c' : matchesKey(data, 'ctrl+d') ? 'ctrl+d' : data;
    const double = this.lastKey !== undefined && this.lastKey.key === key && Date.now() - this.lastKey.at < DOUBLE_PRESS_MS;
    this.lastKey = { key, at: Date.now() };
    if (this.modal) {
      if (key === 'ctrl+c' && double) return this.exit(0);
      this.modal.handleInput(data);
      this.tui.requestRender();
      return { consume: true };
    }
    if (this.historySearch) return this.onSearchKey(data, key);
    if (key === 'ctrl+c') {
      if (this.busy) {
        this.interrupt();
        return { consume: true };
      }
      if (double) return this.exit(0);
      if (this.editor.getText() !== '') this.editor.setText('');
      this.notice('Press Ctrl-C again to exit');
      return { consume: true };
    }
    if (key === 'ctrl+d') {
      if (this.editor.getText() !== '') return undefined;
      if (double) return this.exit(0);
      this.notice('Press Ctrl-D again to exit');
      return { consume: true };
    }
    if (key === 'escape') {
      if (this.editor.isShowingAutocomplete()) return undefined;
      if (this.busy) {
        this.interrupt();
        return { consume: true };
      }
      if (double) {
        if (this.editor.getText() !== '') this.editor.setText('');
        else void this.openRewind();
        this.lastKey = undefined;
      }
      return { consume: true };
    }
    if (matchesKey(data, 'shift+tab')) {
      this.cycleMode();
      return { consume: true };
    }
    if (matchesKey(data, 'ctrl+r')) {
      this.historySearch = { query: '', matches: [...(this.options.recentPrompts?.() ?? [])], index: 0 };
      this.renderSearch();
      return { consume: true };
    }
    // Typed text is echoed at once: the renderer's 16 ms frame pacing is for streamed output.
    if (PRINTABLE.test(data)) {
      this.editor.handleInput(data);
      this.renderNow();
      return { consume: true };
    }
    return undefined;
  }

  /** Draws now instead of at the next paced frame (pi-tui's renderer, pinned, has it as `doRender`). */
  private renderNow(): void {
    const renderer = this.tui as unknown as { doRender?: () => void; lastRenderAt?: number };
    if (typeof renderer.doRender !== 'function') {
      this.tui.requestRender();
      return;
    }
    renderer.lastRenderAt = performance.now();
    renderer.doRender();
  }

  private onSearchKey(data: string, key: string): { consume: boolean } {
    const search = this.historySearch!;
    if (key === 'escape' || key === 'ctrl+c') {
      this.historySearch = undefined;
      this.noticeRow.setText('');
    } else if (matchesKey(data, 'enter') || matchesKey(data, 'tab')) {
      const chosen = search.matches[search.index];
      this.historySearch = undefined;
      this.noticeRow.setText('');
      if (chosen !== undefined) this.editor.setText(chosen);
    } else if (matchesKey(data, 'ctrl+r')) {
      search.index = Math.min(search.index + 1, Math.max(0, search.matches.length - 1));
      this.renderSearch();
    } else if (matchesKey(data, 'backspace')) {
      search.query = search.query.slice(0, -1);
      this.filterSearch();
    } else if (data.length === 1 && data >= ' ') {
      search.query += data;
      this.filterSearch();
    }
    this.tui.requestRender();
    return { consume: true };
  }

  private filterSearch(): void {
    const search = this.historySearch!;
    const all = this.options.recentPrompts?.() ?? [];
    const query = search.query.toLowerCase();
    search.matches = all.filter((prompt) => prompt.toLowerCase().includes(query));
    search.index = 0;
    this.renderSearch();
  }

  private renderSearch(): void {
    const search = this.historySearch!;
    const match = search.matches[search.index];
    this.noticeRow.setText(`(reverse-i-search)\`${search.query}': ${match === undefined ? style.red('no match') : match.split('\n')[0]}`);
    this.tui.requestRender();
  }

  private exit(code: number): { consume: true } {
    if (!this.exited) {
      this.exited = true;
      this.session?.abort();
      this.options.onExit(code);
    }
    return { consume: true };
  }

  /** Esc while a turn runs: stop it (its text so far stays); a queued prompt is sent next. */
  private interrupt(): void {
    this.s.abort();
  }

  private cycleMode(): void {
    if (!this.session) return;
    const cycle: PermissionMode[] = ['default', 'acceptEdits', 'plan'];
    if (this.options.allowBypass) cycle.push('bypassPermissions');
    const session = this.s.getSession();
    const index = cycle.indexOf(session.getPermissionMode());
    session.setPermissionMode(cycle[(index + 1) % cycle.length]!);
    this.renderStatus();
    this.tui.requestRender();
  }

  private notice(text: string, ms = 2000): void {
    this.noticeRow.setText(text);
    if (this.noticeTimer) clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => {
      this.noticeRow.setText('');
      this.tui.requestRender();
    }, ms);
    this.noticeTimer.unref();
    this.tui.requestRender();
  }

  private note(text: string, colour: (text: string) => string = style.gray): void {
    this.transcript.addChild(new TextBlock(text, '  ⎿ ', colour));
    this.transcript.addChild(new Gap());
    this.tui.requestRender();
  }

  // ── Prompts ──────────────────────────────────────────────────────────────────────────────

  /** What Enter does with the prompt's text. */
  async submit(raw: string): Promise<void> {
    const text = raw.trim();
    if (text === '') return;
    if (!this.session) {
      this.notice('Starting the session…');
      await this.ready;
    }
    this.editor.addToHistory(raw);
    if (this.busy) {
      if (this.queued !== undefined) {
        this.editor.setText(raw);
        this.notice('A prompt is already queued; wait for this turn to finish or press Esc to interrupt.', 3000);
        return;
      }
      this.queued = text;
      this.queuedRow.setText(`Queued: ${text.split('\n')[0]}`);
      this.tui.requestRender();
      return;
    }
    if (text.startsWith('/')) return this.runCommand(text);
    if (text.startsWith('!')) return this.runShell(text.slice(1).trim());
    if (text.startsWith('#') && !text.startsWith('##')) return this.remember(text.slice(1).trim());
    await this.runPrompt(text);
  }

  private async runPrompt(text: string): Promise<void> {
    this.transcript.addChild(userPrompt(text));
    this.transcript.addChild(new Gap());
    this.busy = true;
    this.currentText = undefined;
    this.thinking = undefined;
    this.renderStatus();
    this.tui.requestRender();
    let result: IExecutionResult | undefined;
    try {
      result = await this.s.submit(text);
    } catch (error) {
      this.transcript.addChild(new TextBlock(describeError(error), style.red('⏺ '), style.red));
    }
    (this.thinking as ThinkingRow | undefined)?.end();
    if (result?.usage) {
      const { promptTokens = 0, completionTokens = 0, cacheReadTokens = 0, cacheWriteTokens = 0 } = result.usage;
      this.costUsd += this.options.costOf?.({ input: promptTokens - cacheReadTokens - cacheWriteTokens, output: completionTokens, cacheRead: cacheReadTokens, cacheWrite: cacheWriteTokens }) ?? 0;
    }
    this.transcript.addChild(new Gap());
    this.currentText = undefined;
    this.busy = false;
    this.tickSpinner();
    this.renderStatus();
    const next = this.queued;
    this.queued = undefined;
    this.queuedRow.setText('');
    this.tui.requestRender();
    if (next !== undefined) await this.submit(next);
  }

  private async runCommand(text: string): Promise<void> {
    const [, name = '', args = ''] = /^\/(\S*)\s*([\s\S]*)$/.exec(text) ?? [];
    this.transcript.addChild(userPrompt(text));
    if (name === 'exit' || name === 'quit') {
      this.exit(0);
      return;
    }
    if (name === 'clear' || name === 'new' || name === 'reset') {
      if (this.options.switchSession) {
        await this.replaceSession(undefined);
        this.note('Started a new conversation.');
        return;
      }
    }
    let result: ICommandResult | null;
    this.busy = true;
    this.renderStatus();
    try {
      result = await this.s.executeCommand(name, args);
    } catch (error) {
      result = { success: false, message: describeError(error) };
    } finally {
      this.busy = false;
    }
    if (result === null) {
      this.note(`Unknown command /${name}. Type / to see the commands.`, style.red);
      return;
    }
    await this.showResult(result);
  }

  private async showResult(result: ICommandResult): Promise<void> {
    if (result.message !== '') this.note(result.message, result.success ? (text) => text : style.red);
    for (const diagnostic of result.diagnostics ?? []) this.note(diagnostic, style.yellow);
    for (const effect of result.effects ?? []) {
      switch (effect.type) {
        case 'session-exit-requested':
          this.exit(0);
          return;
        case 'session-picker-requested':
          await this.openSessionPicker();
          break;
        // The session itself applied `model-change-requested`, `language-change-requested` and
        // `session-renamed` (InteractiveSession.executeCommand); the status line shows the result.
        case 'statusline-settings-patch':
          if (typeof effect.patch.enabled === 'boolean') this.statusEnabled = effect.patch.enabled;
          if (typeof effect.patch.showGitBranch === 'boolean') this.showGitBranch = effect.patch.showGitBranch;
          break;
        case 'plugin-tui-requested':
          if (this.options.pluginManager) {
            try {
              this.note(await this.options.pluginManager());
            } catch (error) {
              this.note(`Listing plugins failed: ${describeError(error)}`, style.red);
            }
          } else this.note('Bundle plugins are not part of this composition.', style.yellow);
          break;
        case 'settings-reset-requested':
          this.confirmReset();
          break;
        case 'session-restart-requested':
          if (this.options.switchSession) await this.startFreshSession(effect.message);
          else {
            this.note(effect.message);
            this.exit(0);
            return;
          }
          break;
        case 'conversation-history-cleared':
          this.note('Conversation cleared.');
          break;
        case 'prompt-submit-requested':
          await this.runPrompt(effect.text);
          break;
        case 'plugin-registry-reload-requested':
          if (this.options.reloadPlugins) {
            try {
              this.note(await this.options.reloadPlugins());
            } catch (error) {
              this.note(`Reloading plugins failed: ${describeError(error)}`, style.red);
            }
          }
          break;
        default:
          break;
      }
    }
    if (result.interaction) this.showInteraction(result.interaction);
    this.renderStatus();
    await this.refreshCompletions();
  }

  /** `/reset`: asks first; on yes the host puts the user settings aside, then the app exits. */
  private confirmReset(): void {
    if (!this.options.resetSettings) {
      this.note('This host cannot reset settings.', style.yellow);
      return;
    }
    const reset = this.options.resetSettings;
    this.choose('Reset your user settings to the defaults? Tessera exits afterwards.', [
      { value: 'no', label: 'No, keep them' },
      { value: 'yes', label: 'Yes, reset and exit' },
    ], (value) => {
      if (value !== 'yes') {
        this.note('Settings kept.');
        return;
      }
      void reset().then(
        (line) => {
          this.note(line);
          this.exit(0);
        },
        (error: unknown) => this.note(`Resetting settings failed: ${describeError(error)}`, style.red),
      );
    });
  }

  /** `session-restart-requested`: a fresh session replaces this one (the old one stays stored). */
  private async startFreshSession(message: string): Promise<void> {
    try {
      await this.replaceSession(undefined);
      this.note(message);
    } catch (error) {
      this.note(`Starting a new session failed: ${describeError(error)}`, style.red);
    }
  }

  private async runShell(command: string): Promise<void> {
    if (command === '') return;
    this.transcript.addChild(userPrompt(`!${command}`));
    const session = this.s.getSession();
    const call: ToolUseBlock = { type: 'tool_use', id: `user-shell-${Date.now().toString(36)}`, name: 'Bash', input: { command } };
    this.busy = true;
    const controller = new AbortController();
    const stopOnAbort = this.s.on('interrupted', () => controller.abort());
    const unsubscribe = session.subscribe((event) => {
      if (event.type === 'tool_start' && event.toolCallId === call.id) this.onTool({ toolCallId: call.id, toolName: 'Bash', firstArg: command, isRunning: true });
    });
    try {
      // Loaded here, not at start-up: the first paint does not wait for the kernel's modules.
      const { executeToolCall } = await import('@tessera/kernel');
      const result = await executeToolCall(session, call, 0, controller.signal);
      const output = typeof result.output === 'string' ? result.output : result.output.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
      this.onTool({
        toolCallId: call.id,
        toolName: 'Bash',
        firstArg: command,
        isRunning: false,
        result: result.success ? 'success' : result.metadata?.denied === true ? 'denied' : 'error',
        toolResultData: output,
        ...(result.errorCode === undefined ? {} : { errorCode: result.errorCode }),
      });
      if (result.success) session.injectMessage('user', `<bash-input>${command}</bash-input>\n<bash-stdout>${output}</bash-stdout>`);
      else if (result.metadata?.denied === true) this.note(output, style.red);
    } finally {
      unsubscribe();
      stopOnAbort();
      this.busy = false;
      this.transcript.addChild(new Gap());
      this.tickSpinner();
      this.tui.requestRender();
    }
  }

  private async remember(text: string): Promise<void> {
    if (text === '') return;
    this.transcript.addChild(userPrompt(`#${text}`));
    const result = await this.s.executeCommand('memory', `add project notes ${text}`);
    this.note(result?.message ?? 'Project memory is not enabled in this session.', result?.success ? (line) => line : style.red);
  }

  private async refreshCompletions(): Promise<void> {
    let commands: SlashCommand[] = [];
    try {
      const registry = await this.s.getCommandRegistry();
      commands = registry.getCommands().map((command) => ({
        name: command.name,
        description: command.description,
        ...(command.argumentHint === undefined ? {} : { argumentHint: command.argumentHint }),
        ...(command.subcommands && command.subcommands.length > 0
          ? {
              getArgumentCompletions: (prefix: string): AutocompleteItem[] =>
                command.subcommands!.filter((sub) => sub.name.startsWith(prefix)).map((sub) => ({ value: sub.name, label: sub.name, description: sub.description })),
            }
          : {}),
      }));
    } catch {
      // No registry (a bare session): completion offers files only.
    }
    this.editor.setAutocompleteProvider(new WorkspaceCompletion(commands, this.options.cwd));
  }

  // ── Modals: permission prompts, pickers, command interactions ───────────────────────────

  /** Opens a modal; while one is open, the next waits its turn (nothing steals a prompt's focus). */
  private openModal(component: Overlayable): void {
    if (this.modal) {
      this.waitingModals.push(component);
      return;
    }
    this.modal = component;
    this.promptArea.clear();
    this.promptArea.addChild(component);
    this.tui.setFocus(component);
    this.tui.requestRender();
  }

  /** Takes a modal away, shown or waiting (an ask withdrawn because its turn was aborted). */
  private withdrawModal(component: Overlayable | undefined): void {
    if (!component) return;
    if (this.modal === component) this.closeModal();
    else {
      const index = this.waitingModals.indexOf(component);
      if (index >= 0) this.waitingModals.splice(index, 1);
    }
  }

  private closeModal(): void {
    this.modal = undefined;
    this.promptArea.clear();
    const next = this.waitingModals.shift();
    if (next) {
      this.openModal(next);
      return;
    }
    this.promptArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.requestRender();
  }

  private showApproval(pending: PendingApproval): void {
    const prompt = new PermissionPrompt(pending.request, this.options.cwd, (choice, reason) => {
      this.closeModal();
      let answer: ApprovalAnswer;
      if (choice === 'once') answer = true;
      else if (choice === 'always') {
        answer = 'allow-session';
        const rule = pending.request.suggestedRule;
        if (rule && this.options.saveAllowRule) {
          this.options.saveAllowRule(rule).then(
            (file) => this.note(`Saved ${rule} to ${file}`),
            (error: unknown) => this.note(`Could not save ${rule}: ${describeError(error)}`, style.red),
          );
        }
      } else answer = { behavior: 'deny', message: reason ? `The user declined this call and said: ${reason}` : 'The user declined this call.' };
      pending.answer(answer);
    });
    this.approvalModals.set(pending, prompt);
    this.openModal(prompt);
  }

  /** A list to pick from; typing filters it by label and description (any part, any case). */
  private choose(title: string, items: Array<{ value: string; label: string; description?: string }>, onPick: (value: string | undefined) => void): void {
    const header = new TextBlock(style.bold(title));
    const visible = Math.max(3, Math.min(10, this.options.terminal.rows - 6));
    let filter = '';
    const makeList = (): SelectList => {
      const needle = filter.toLowerCase();
      const shown = needle === '' ? items : items.filter((item) => `${item.label} ${item.description ?? ''}`.toLowerCase().includes(needle));
      const created = new SelectList(shown, visible, { ...selectListTheme, noMatch: () => style.gray('  Nothing matches the filter') });
      created.onSelect = (item) => {
        this.closeModal();
        onPick(item.value);
      };
      created.onCancel = () => {
        this.closeModal();
        onPick(undefined);
      };
      return created;
    };
    let list = makeList();
    const picker: Overlayable = {
      render: (width) => [...header.render(width), ...list.render(width), truncateToWidth(style.gray(filter === '' ? 'Type to filter · Enter to choose · Esc to cancel' : `Filter: ${filter}`), width)],
      invalidate: () => list.invalidate(),
      handleInput: (data) => {
        if (matchesKey(data, 'backspace')) {
          filter = filter.slice(0, -1);
          list = makeList();
        } else if (data.length === 1 && data >= ' ' && data !== '\x7f') {
          filter += data;
          list = makeList();
        } else list.handleInput(data);
      },
    };
    this.openModal(picker);
  }

  private showInteraction(interaction: ICommandInteraction): void {
    const { prompt } = interaction;
    const finish = async (value: string | undefined): Promise<void> => {
      const result = value === undefined ? await interaction.cancel?.() : await interaction.submit(value);
      if (result) await this.showResult(result);
    };
    if (prompt.kind === 'choice') {
      this.choose(prompt.title, prompt.choices.map((choice) => ({ ...choice })), (value) => void finish(value));
      return;
    }
    const input = new Input();
    const header = new TextBlock(`${style.bold(prompt.title)}${prompt.description ? `\n${style.gray(prompt.description)}` : ''}`);
    input.onSubmit = (value) => {
      if (prompt.validation && !new RegExp(prompt.validation.pattern).test(value)) {
        this.notice(prompt.validation.message, 3000);
        return;
      }
      this.closeModal();
      void finish(value);
    };
    this.openModal({
      render: (width) => [...header.render(width), ...(prompt.masked ? [`> ${'•'.repeat(input.getValue().length)}`] : input.render(width))],
      invalidate: () => input.invalidate(),
      handleInput: (data) => {
        if (matchesKey(data, 'escape')) {
          this.closeModal();
          void finish(undefined);
          return;
        }
        input.handleInput(data);
      },
    });
  }

  /** The session picker: name or first prompt, age, size; type to filter. */
  async openSessionPicker(): Promise<void> {
    if (!this.options.listSessions || !this.options.switchSession) {
      this.note('Resuming is not available in this host.', style.red);
      return;
    }
    const sessions = await this.options.listSessions();
    const current = this.s.getSessionId();
    const items = sessions
      .filter((session) => session.id !== current)
      .map((session) => ({
        value: session.id,
        label: (session.name ?? session.firstPrompt).split('\n')[0]!.slice(0, 60) || '(no prompt)',
        description: `${age(session.updatedAt)} · ${session.messageCount} messages`,
      }));
    if (items.length === 0) {
      this.note('No stored sessions to resume in this directory.');
      return;
    }
    this.choose('Resume a session', items, (id) => {
      if (id === undefined) return;
      void this.replaceSession(id).then(
        () => this.note(`Resumed session ${id}.`),
        (error: unknown) => this.note(`Could not resume ${id}: ${describeError(error)}`, style.red),
      );
    });
  }

  private async replaceSession(id: string | undefined): Promise<void> {
    const next = await this.options.switchSession!(id);
    this.toolRows.clear();
    this.taskRows.clear();
    this.attach(next);
    if (id !== undefined) this.renderHistory(next);
    await this.refreshCompletions();
    this.renderStatus();
  }

  /** A resumed conversation's prompts and answers, as they were shown. */
  private renderHistory(session: InteractiveSession): void {
    for (const message of session.getMessages()) {
      if (message.role === 'user' && typeof message.content === 'string') {
        this.transcript.addChild(userPrompt(message.content));
        this.transcript.addChild(new Gap());
      } else if (message.role === 'assistant') {
        const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        if (text !== '') {
          const block = new AssistantText();
          block.append(text);
          this.transcript.addChild(block);
          this.transcript.addChild(new Gap());
        }
      }
    }
  }

  /** Esc Esc on an empty prompt: pick a checkpoint, then code, conversation or both. */
  async openRewind(): Promise<void> {
    if (!this.session) return;
    let checkpoints;
    try {
      checkpoints = await this.s.listEditCheckpoints();
    } catch (error) {
      this.note(`Rewind is not available: ${describeError(error)}`, style.red);
      return;
    }
    if (checkpoints.length === 0) {
      this.notice('Nothing to rewind to yet: a checkpoint is made for every prompt.');
      return;
    }
    const items = [...checkpoints].reverse().map((checkpoint) => ({ value: checkpoint.id, label: checkpoint.prompt.slice(0, 60), description: `${checkpoint.fileCount} file(s) · ${age(checkpoint.createdAt)}` }));
    this.choose('Rewind to before…', items, (id) => {
      if (id === undefined) return;
      const checkpoint = checkpoints.find((candidate) => candidate.id === id)!;
      this.choose(
        `Restore to before “${checkpoint.prompt.slice(0, 40)}”`,
        [
          { value: 'both', label: 'Restore code and conversation' },
          { value: 'conversation', label: 'Restore conversation only' },
          { value: 'code', label: 'Restore code only' },
        ],
        (what) => {
          if (what !== undefined) void this.rewind(checkpoint.id, checkpoint.prompt, what as 'both' | 'conversation' | 'code');
        },
      );
    });
  }

  private async rewind(id: string, prompt: string, what: 'both' | 'conversation' | 'code'): Promise<void> {
    try {
      const lines: string[] = [];
      if (what !== 'conversation') {
        const result = await this.s.restoreEditCheckpoint(id);
        lines.push(`Restored ${result.restoredFiles.length} file(s), deleted ${result.deletedFiles.length}.`);
      }
      if (what !== 'code') {
        const kept = rewindConversation(this.s, prompt);
        lines.push(kept === undefined ? 'The conversation had no such prompt; it was left as it was.' : `The conversation now ends before “${prompt.slice(0, 40)}”.`);
        if (kept !== undefined) this.editor.setText(prompt);
      }
      this.note(lines.join(' '));
    } catch (error) {
      this.note(`Rewind failed: ${describeError(error)}`, style.red);
    }
  }

  // ── Status line ──────────────────────────────────────────────────────────────────────────

  private renderStatus(): void {
    const session = this.session?.getSession();
    const mode = session?.getPermissionMode() ?? this.options.initialMode ?? 'default';
    const tasks = [...this.taskRows.values()].length;
    const parts = [
      this.options.modelLabel(),
      MODE_LABELS[mode] ?? mode,
      `${Math.round(this.contextPercent)}% context`,
      `$${this.costUsd.toFixed(this.costUsd < 1 ? 4 : 2)}`,
      ...(this.options.gitBranch && this.showGitBranch ? [`⎇ ${this.options.gitBranch}`] : []),
      ...(tasks > 0 ? [`${tasks} task${tasks === 1 ? '' : 's'}`] : []),
      ...(this.busy ? ['Esc to interrupt'] : []),
    ];
    const custom = this.statusRunner?.text;
    // `/statusline off` hides the row (the prompt stays); `/statusline on` brings it back.
    this.statusRow.setText(!this.statusEnabled ? '' : custom ? `${custom}\n${parts.join(' · ')}` : parts.join(' · '));
    if (!session) {
      this.tui.requestRender();
      return;
    }
    this.statusRunner?.request({
      session_id: this.s.getSessionId(),
      ...(this.s.getName() === undefined ? {} : { session_name: this.s.getName()! }),
      cwd: this.options.cwd,
      model: { id: session.getModel() ?? this.options.modelLabel(), display_name: this.options.modelLabel() },
      workspace: { current_dir: this.options.cwd, project_dir: this.options.cwd },
      version: this.options.version,
      permission_mode: mode,
      cost: { total_cost_usd: this.costUsd, total_duration_ms: Date.now() - this.started },
      context_window: { used_percentage: this.contextPercent, context_window_size: this.s.getContextState().maxTokens },
    });
    this.tui.requestRender();
  }
}

/** Drops the conversation from the last prompt starting with `prompt`; the entries kept, or undefined. */
export function rewindConversation(interactive: InteractiveSession, prompt: string): number | undefined {
  const session = interactive.getSession();
  const entries = session.getFullHistory();
  const head = prompt.split('\n')[0]!.trim();
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index]!;
    if (entry.category !== 'chat') continue;
    const message = entry.data as { role?: string; content?: unknown };
    if (message.role !== 'user') continue;
    const text = typeof message.content === 'string' ? message.content : Array.isArray(message.content) ? message.content.map((block: { text?: string }) => block.text ?? '').join('') : '';
    if (text.trim().startsWith(head)) {
      session.truncateHistory(index);
      return index;
    }
  }
  return undefined;
}

function age(iso: string): string {
  const ms = Date.now() - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  if (ms < 60_000) return 'just now';
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)}h ago`;
  return `${Math.round(ms / 86_400_000)}d ago`;
}

export { PERMISSION_MODES };
