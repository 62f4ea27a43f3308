import { Container, Editor, matchesKey, TUI } from '@mariozechner/pi-tui';
import { describeError, PERMISSION_MODES, type ApprovalAnswer, type IExecutionResult, type PermissionMode } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import type { PendingApproval } from './approvals.js';
import { ClampedContainer, Gap, TextBlock, userPrompt } from './components.js';
import { CommandRunner } from './command-runner.js';
import { HistorySearch } from './history-search.js';
import { ModalHost, type Overlayable } from './modal-host.js';
import { PermissionPrompt } from './permission-prompt.js';
import { age, rewindConversation } from './rewind.js';
import { StatusBar } from './status-bar.js';
import { editorTheme, style } from './theme.js';
import { Transcript } from './transcript.js';
import type { TesseraTuiOptions } from './tui-options.js';

export { rewindConversation } from './rewind.js';
export type { TesseraTuiOptions } from './tui-options.js';

/** Plain typed text (no escape sequence, no control character): the editor's fast path. */
const PRINTABLE = /^[^\x00-\x1f\x7f]+$/;

/** How a pressed key twice counts as a double press (Esc Esc, Ctrl-C Ctrl-C, Ctrl-D Ctrl-D). */
const DOUBLE_PRESS_MS = 800;

/**
 * The `tessera` interactive terminal: a transcript (finished items scroll into the terminal's
 * own scrollback; only the bottom redraws), a multi-line prompt with history, `/` and `@`
 * completion, inline permission prompts and pickers, a status line, and Claude Code's keys.
 */
export class TesseraTui {
  readonly tui: TUI;
  private readonly transcript: Transcript;
  private readonly queuedRow = new TextBlock('', '', style.gray);
  private readonly noticeRow = new TextBlock('', '', style.yellow);
  private readonly promptArea = new Container();
  private readonly status: StatusBar;
  private readonly editor: Editor;
  private readonly modals: ModalHost;
  private readonly historySearch: HistorySearch;
  private readonly commands: CommandRunner;
  private session: InteractiveSession | undefined;
  private readonly ready: Promise<InteractiveSession>;
  private unsubscribe: Array<() => void> = [];
  private queued: string | undefined;
  private busy = false;
  private readonly approvalModals = new WeakMap<PendingApproval, Overlayable>();
  private lastKey: { key: string; at: number } | undefined;
  private noticeTimer: NodeJS.Timeout | undefined;
  private detachApprovals: (() => void) | undefined;
  private exited = false;

  constructor(private readonly options: TesseraTuiOptions) {
    this.ready = Promise.resolve(options.session);
    // A session that fails to start is reported by `start()`; never unhandled here.
    this.ready.catch(() => undefined);
    this.tui = new TUI(options.terminal, true);
    this.transcript = new Transcript(this.tui);
    this.editor = new Editor(this.tui, editorTheme, { paddingX: 1, autocompleteMaxVisible: 8 });
    this.editor.onSubmit = (text) => void this.submit(text);
    // Never wipe the scrollback when the bottom shrinks (a prompt closing): clear the rows instead.
    this.tui.setClearOnShrink(false);
    this.status = new StatusBar(options, this.tui, () => this.renderStatus());
    const root = new ClampedContainer();
    root.addChild(this.transcript);
    root.addChild(this.transcript.tasksArea);
    root.addChild(this.queuedRow);
    root.addChild(this.noticeRow);
    root.addChild(this.promptArea);
    root.addChild(this.status.statusRow);
    this.tui.addChild(root);
    this.promptArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.addInputListener((data) => this.onKey(data));
    this.modals = new ModalHost(this.tui, this.promptArea, this.editor, options.terminal);
    this.historySearch = new HistorySearch(this.tui, this.noticeRow, this.editor, () => this.options.recentPrompts?.() ?? []);
    this.commands = new CommandRunner({
      options,
      tui: this.tui,
      editor: this.editor,
      transcript: this.transcript,
      modals: this.modals,
      status: this.status,
      session: () => this.s,
      setBusy: (busy) => {
        this.busy = busy;
      },
      exit: (code) => this.exit(code),
      notice: (text, ms) => this.notice(text, ms),
      renderStatus: () => this.renderStatus(),
      runPrompt: (text) => this.runPrompt(text),
      openSessionPicker: () => this.openSessionPicker(),
      replaceSession: (id) => this.replaceSession(id),
    });
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
      (pending) => this.modals.withdraw(this.approvalModals.get(pending)),
    );
    // The prompt is on screen before the session is ready; what is typed meanwhile waits.
    this.renderStatus();
    this.tui.start();
    // First paint now, before the session's modules load and compose (they keep the loop busy).
    this.renderNow();
    const session = await this.ready;
    this.transcript.renderHistory(session);
    this.attach(session);
    await this.commands.refreshCompletions();
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
    this.transcript.stop();
    if (this.noticeTimer) clearTimeout(this.noticeTimer);
    this.status.close();
    this.detachApprovals?.();
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    this.tui.stop();
  }

  /** A line from the host (sign-in requests, warnings) in the transcript. */
  announce(text: string): void {
    this.transcript.note(text, style.yellow);
  }

  /** Asks the user to choose (a modal list; Esc answers undefined). */
  pick(title: string, items: Array<{ value: string; label: string; description?: string }>): Promise<string | undefined> {
    return new Promise((resolve) => this.modals.choose(title, items, resolve));
  }

  /** The session on screen (it changes after `/resume` or `/clear`); undefined before it is ready. */
  getSession(): InteractiveSession | undefined {
    return this.session;
  }

  private attach(session: InteractiveSession): void {
    for (const off of this.unsubscribe) off();
    this.session = session;
    this.unsubscribe = [
      session.on('text_delta', (delta) => this.transcript.textDelta(delta)),
      session.on('thinking_delta', (delta) => this.transcript.thinkingDelta(delta)),
      session.on('tool_start', (state) => this.transcript.onTool(state)),
      session.on('tool_end', (state) => this.transcript.onTool(state)),
      session.on('interrupted', () => this.transcript.note('Interrupted · tell Tessera what to do instead', style.yellow)),
      session.getSession().subscribe((event) => {
        if (event.type !== 'compact') return;
        this.transcript.compacted(event.trigger);
      }),
      session.on('context_update', (state) => {
        this.status.contextPercent = state.usedPercentage;
        this.renderStatus();
      }),
      session.on('background_task_event', (event) => {
        if (this.transcript.taskEvent(event)) this.renderStatus();
      }),
    ];
    this.renderStatus();
  }

  // ── Input ────────────────────────────────────────────────────────────────────────────────

  private onKey(data: string): { consume?: boolean } | undefined {
    if (this.exited) return { consume: true };
    const key = matchesKey(data, 'escape') ? 'escape' : matchesKey(data, 'ctrl+c') ? 'ctrl+c' : matchesKey(data, 'ctrl+d') ? 'ctrl+d' : data;
    const double = this.lastKey !== undefined && this.lastKey.key === key && Date.now() - this.lastKey.at < DOUBLE_PRESS_MS;
    this.lastKey = { key, at: Date.now() };
    const modal = this.modals.current;
    if (modal) {
      if (key === 'ctrl+c' && double) return this.exit(0);
      modal.handleInput(data);
      this.tui.requestRender();
      return { consume: true };
    }
    if (this.historySearch.active) return this.historySearch.onSearchKey(data, key);
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
      this.historySearch.open();
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
    if (text.startsWith('/')) return this.commands.runCommand(text);
    if (text.startsWith('!')) return this.commands.runShell(text.slice(1).trim());
    if (text.startsWith('#') && !text.startsWith('##')) return this.commands.remember(text.slice(1).trim());
    await this.runPrompt(text);
  }

  private async runPrompt(text: string): Promise<void> {
    this.transcript.addChild(userPrompt(text));
    this.transcript.addChild(new Gap());
    this.busy = true;
    this.transcript.startTurn();
    this.renderStatus();
    this.tui.requestRender();
    let result: IExecutionResult | undefined;
    try {
      result = await this.s.submit(text);
    } catch (error) {
      this.transcript.addChild(new TextBlock(describeError(error), style.red('⏺ '), style.red));
    }
    if (result?.usage) {
      const { promptTokens = 0, completionTokens = 0, cacheReadTokens = 0, cacheWriteTokens = 0 } = result.usage;
      this.status.costUsd += this.options.costOf?.({ input: promptTokens - cacheReadTokens - cacheWriteTokens, output: completionTokens, cacheRead: cacheReadTokens, cacheWrite: cacheWriteTokens }) ?? 0;
    }
    this.transcript.endTurn();
    this.busy = false;
    this.transcript.tickSpinner();
    this.renderStatus();
    const next = this.queued;
    this.queued = undefined;
    this.queuedRow.setText('');
    this.tui.requestRender();
    if (next !== undefined) await this.submit(next);
  }

  // ── Modals: permission prompts, the session picker, rewind ──────────────────────────────

  private showApproval(pending: PendingApproval): void {
    const prompt = new PermissionPrompt(pending.request, this.options.cwd, (choice, reason) => {
      this.modals.close();
      let answer: ApprovalAnswer;
      if (choice === 'once') answer = true;
      else if (choice === 'always') {
        answer = 'allow-session';
        const rule = pending.request.suggestedRule;
        if (rule && this.options.saveAllowRule) {
          this.options.saveAllowRule(rule).then(
            (file) => this.transcript.note(`Saved ${rule} to ${file}`),
            (error: unknown) => this.transcript.note(`Could not save ${rule}: ${describeError(error)}`, style.red),
          );
        }
      } else answer = { behavior: 'deny', message: reason ? `The user declined this call and said: ${reason}` : 'The user declined this call.' };
      pending.answer(answer);
    });
    this.approvalModals.set(pending, prompt);
    this.modals.open(prompt);
  }

  /** The session picker: name or first prompt, age, size; type to filter. */
  async openSessionPicker(): Promise<void> {
    if (!this.options.listSessions || !this.options.switchSession) {
      this.transcript.note('Resuming is not available in this host.', style.red);
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
      this.transcript.note('No stored sessions to resume in this directory.');
      return;
    }
    this.modals.choose('Resume a session', items, (id) => {
      if (id === undefined) return;
      void this.replaceSession(id).then(
        () => this.transcript.note(`Resumed session ${id}.`),
        (error: unknown) => this.transcript.note(`Could not resume ${id}: ${describeError(error)}`, style.red),
      );
    });
  }

  private async replaceSession(id: string | undefined): Promise<void> {
    const next = await this.options.switchSession!(id);
    this.transcript.forgetRows();
    this.attach(next);
    if (id !== undefined) this.transcript.renderHistory(next);
    await this.commands.refreshCompletions();
    this.renderStatus();
  }

  /** Esc Esc on an empty prompt: pick a checkpoint, then code, conversation or both. */
  async openRewind(): Promise<void> {
    if (!this.session) return;
    let checkpoints;
    try {
      checkpoints = await this.s.listEditCheckpoints();
    } catch (error) {
      this.transcript.note(`Rewind is not available: ${describeError(error)}`, style.red);
      return;
    }
    if (checkpoints.length === 0) {
      this.notice('Nothing to rewind to yet: a checkpoint is made for every prompt.');
      return;
    }
    const items = [...checkpoints].reverse().map((checkpoint) => ({ value: checkpoint.id, label: checkpoint.prompt.slice(0, 60), description: `${checkpoint.fileCount} file(s) · ${age(checkpoint.createdAt)}` }));
    this.modals.choose('Rewind to before…', items, (id) => {
      if (id === undefined) return;
      const checkpoint = checkpoints.find((candidate) => candidate.id === id)!;
      this.modals.choose(
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
      this.transcript.note(lines.join(' '));
    } catch (error) {
      this.transcript.note(`Rewind failed: ${describeError(error)}`, style.red);
    }
  }

  private renderStatus(): void {
    this.status.render({ interactive: this.session, tasks: this.transcript.taskCount, busy: this.busy });
  }
}

export { PERMISSION_MODES };
