import {
  BackgroundTasks,
  CheckpointRestoreBusyError,
  Diagnostics,
  EditCheckpoints,
  processWarningDiagnostics,
  isAbortError,
  TesseraError,
  describeError,
  withResponseLanguage,
  type BackgroundTaskNotice,
  type IContextWindowState,
  type ICommandResult,
  type IEditCheckpointInspection,
  type IEditCheckpointRestoreResult,
  type IEditCheckpointSummary,
  type IExecutionResult,
  type IHistoryEntry,
  type ImageBlock,
  type IToolState,
  type ITransportAdapter,
  type Message,
  type SessionEndReason,
  type TextBlock,
} from '@tessera/contracts';
import type { Kernel } from '../kernel.js';
import type { Session } from '../session.js';
import { PromptBlockedError } from '../errors.js';
import type { ICommandListing } from './command-executor.js';
import type { CommandRegistry } from './command-registry.js';
import { InteractiveEventEmitter, type InteractiveSessionEvents } from './events.js';
import { InteractiveSessionClosedError, PromptQueueFullError } from './interactive-session-errors.js';
import { codeOf, displayedTimeline, requireCheckpoints, stopBackgroundTasks } from './interactive-session-helpers.js';
import type { InteractiveSessionOptions, IResumableSession, ISubmitOptions } from './interactive-session-options.js';
import { SessionCommands } from './session-commands.js';
import { createSession, reportUnsandboxedTools, resumableSessions } from './session-setup.js';
import { TurnRecorder } from './turn-recorder.js';

// The package exports these from here (kernel/src/index.ts); they are declared beside the facade.
export {
  InteractiveSessionClosedError,
  PromptQueueFullError,
  ResumeSessionCwdMismatchError,
  ResumeSessionNotFoundError,
} from './interactive-session-errors.js';
export type { IResumableSession, ISubmitOptions, InteractiveSandboxClient, InteractiveSessionOptions } from './interactive-session-options.js';
export { SESSION_APPLIED_EFFECTS } from './session-commands.js';

interface Pending {
  input: string;
  displayInput: string | undefined;
  rawInput: string | undefined;
  options: ISubmitOptions | undefined;
  resolve: (result: IExecutionResult | undefined) => void;
  reject: (error: unknown) => void;
}

// Its parts beside it: `TurnRecorder` (the session's stream and the running turn), `SessionCommands`
// (commands and skills), `session-setup.ts` (creating, resuming and listing sessions).

/**
 * The facade every CLI, server and embedder talks to (spec: InteractiveSession). It holds a
 * kernel `Session` (composition, never a subclass) and adds typed events mapped from the
 * session's one event stream, a prompt queue of one, tool states, the timeline with event
 * entries, persistence and resume, commands and edit checkpoints through their tokens.
 */
export class InteractiveSession {
  private readonly events = new InteractiveEventEmitter((name, error) =>
    (this.session?.services.getOptional(Diagnostics) ?? processWarningDiagnostics).report({
      severity: 'warning',
      code: 'TESSERA_LISTENER_ERROR',
      source: 'interactive-session',
      message: `An InteractiveSession "${name}" listener threw: ${describeError(error)}`,
    }),
  );
  private session: Session | undefined;
  private readonly ready: Promise<Session>;
  private pending: Pending | undefined;
  private current: Promise<IExecutionResult | undefined> | undefined;
  private closed: Promise<void> | undefined;
  private readonly commands: SessionCommands;
  private readonly turn: TurnRecorder;
  private unsubscribers: Array<() => void> = [];

  constructor(private readonly options: InteractiveSessionOptions) {
    if (!options.kernel && !options.session) {
      throw new TesseraError('InteractiveSession needs a kernel (options.kernel) or a session (options.session).', {
        code: 'invalid_interactive_options',
        category: 'configuration',
        recoverable: false,
      });
    }
    this.commands = new SessionCommands(this, () => this.session, options);
    this.turn = new TurnRecorder(this.events);
    this.ready = this.initialize();
    // Initialisation errors surface on the first call that awaits `ready`; never unhandled.
    this.ready.catch(() => undefined);
  }

  /** Resolves once the session exists (system prompt built, resume loaded, sandbox restored). */
  async whenReady(): Promise<void> {
    await this.ready;
  }

  /** Listens to one event until the returned function is called. A listener that throws is reported as a diagnostic, never breaks the turn. */
  on<K extends keyof InteractiveSessionEvents>(name: K, listener: InteractiveSessionEvents[K]): () => void {
    return this.events.on(name, listener);
  }

  // ------------------------------------------------------------------ prompts

  /**
   * Runs `input` (after the running prompt, when one runs). `displayInput` is what the timeline
   * (`getHistory()`) shows for it instead (e.g. `/audit` for an expanded skill prompt); the model
   * still gets `input`. `rawInput` is what `userPromptSubmit` taps and Claude Code hooks see as
   * the typed prompt (`RunOptions.rawPrompt`). `options.content` sends the prompt as blocks with
   * images (see `ISubmitOptions`).
   * Resolves with the execution result, or `undefined` when the prompt was cancelled from the
   * queue. A third prompt while one runs and one waits is refused (`prompt_queue_full`).
   */
  async submit(input: string, displayInput?: string, rawInput?: string, options?: ISubmitOptions): Promise<IExecutionResult | undefined> {
    if (this.closed) throw new InteractiveSessionClosedError(this.session?.sessionId ?? this.options.sessionId ?? 'unknown');
    if (this.turn.executing || this.pending) {
      if (this.pending) throw new PromptQueueFullError();
      return new Promise((resolve, reject) => {
        this.pending = { input, displayInput, rawInput, options, resolve, reject };
      });
    }
    return this.execute(input, displayInput, rawInput, options);
  }

  /** Clears the queue and aborts the running prompt; `interrupted` fires once the abort completed. */
  abort(): void {
    this.cancelQueue();
    // Also before the session's run has started (the prompt is still being prepared): the turn's
    // own signal is already aborted when `run` starts, so the run ends at once.
    if (this.turnAbort) this.turnAbort.aborted = true;
    this.session?.abort();
  }

  /** Aborts the prompt being executed, from its first step on. */
  /** The running prompt's abort request (set before its session run starts, the run starts aborted). */
  private turnAbort: { aborted: boolean } | undefined;

  /** Drops the queued prompt (its `submit` resolves with `undefined`); returns its text. */
  cancelQueue(): string | null {
    const pending = this.pending;
    this.pending = undefined;
    pending?.resolve(undefined);
    return pending?.input ?? null;
  }

  /** True while a prompt runs. */
  isExecuting(): boolean {
    return this.turn.executing;
  }

  /** The text of the prompt waiting behind the running one, or `null`. */
  getPendingPrompt(): string | null {
    return this.pending?.input ?? null;
  }

  /** The assistant text streamed so far in the current model call. */
  getStreamingText(): string {
    return this.turn.streamingText;
  }

  /** Copies of the tool calls of this turn that are still running. */
  getActiveTools(): IToolState[] {
    return this.turn.turnTools.filter((state) => state.isRunning).map((state) => ({ ...state }));
  }

  private async execute(input: string, displayInput: string | undefined, rawInput: string | undefined, options?: ISubmitOptions): Promise<IExecutionResult | undefined> {
    this.turn.executing = true;
    // A flag, not an AbortController: once the session's run has started, `abort()` reaches it
    // through `Session.abort`; a controller per prompt would cost more than the rest of a short turn's bookkeeping.
    const turnAbort = { aborted: false };
    this.turnAbort = turnAbort;
    const run = this.runPrompt(input, displayInput, rawInput, turnAbort, options?.content);
    this.current = run;
    try {
      return await run;
    } finally {
      this.current = undefined;
      this.turn.executing = false;
      if (this.turnAbort === turnAbort) this.turnAbort = undefined;
      const next = this.pending;
      this.pending = undefined;
      if (next && !this.closed) this.execute(next.input, next.displayInput, next.rawInput, next.options).then(next.resolve, next.reject);
      else next?.resolve(undefined);
    }
  }

  private async runPrompt(
    input: string,
    displayInput: string | undefined,
    rawInput: string | undefined,
    turnAbort: { aborted: boolean },
    content: ReadonlyArray<TextBlock | ImageBlock> | undefined,
  ): Promise<IExecutionResult | undefined> {
    const session = await this.ready;
    this.turn.start(session, input, displayInput, rawInput);
    // Spec: an injected session without a cwd of its own creates no project checkpoints (its cwd
    // would be the process's); give `cwd`, or use the checkpoint APIs explicitly.
    const checkpoints = this.options.session && this.options.cwd === undefined ? undefined : session.services.getOptional(EditCheckpoints);
    let checkpointOpen = false;
    let blocked = false;
    try {
      if (checkpoints) {
        await checkpoints.beginTurn({ sessionId: session.sessionId, cwd: session.cwd }, displayInput ?? input);
        checkpointOpen = true;
      }
      // Aborted while the prompt was prepared: the run starts aborted and ends at once.
      const response = await session.run(input, {
        onTextDelta: this.turn.onTextDelta,
        ...(turnAbort.aborted ? { signal: AbortSignal.abort() } : {}),
        ...(rawInput === undefined ? {} : { rawPrompt: rawInput }),
        ...(content === undefined ? {} : { content }),
      });
      // The summary entries were added on `turn_end`, before the session saved.
      const result = this.turn.turnResult ?? this.turn.finishTurn(session, response);
      this.events.emit('complete', result);
      return result;
    } catch (error) {
      blocked = error instanceof PromptBlockedError;
      const finished = this.turn.turnResult;
      const result = finished ?? this.turn.finishTurn(session, this.turn.streamingText);
      if (isAbortError(error)) {
        if (!finished) await session.save();
        this.events.emit('interrupted', result);
        return result;
      }
      if (!finished) {
        this.turn.addEvent(session, 'system', { level: 'error', message: describeError(error), ...codeOf(error) });
        await session.save();
      }
      this.events.emit('error', error instanceof Error ? error : new Error(describeError(error)));
      throw error;
    } finally {
      // A prompt blocked before the model saw it leaves no checkpoint behind (nothing ran).
      if (checkpointOpen) {
        const close = blocked && checkpoints!.discardTurn ? checkpoints!.discardTurn(session.sessionId) : checkpoints!.finalizeTurn(session.sessionId);
        await close.catch((error: unknown) => session.log('error', { phase: 'checkpoint', error: describeError(error) }));
      }
      this.events.emit('thinking', false);
    }
  }

  // ------------------------------------------------------------------ state

  /** The session id; before the session is ready, the id asked for (or `''`). */
  getSessionId(): string {
    return this.session?.sessionId ?? this.options.sessionId ?? '';
  }

  /** The underlying kernel session (after `whenReady()`). */
  getSession(): Session {
    if (!this.session) throw new TesseraError('The interactive session is not ready yet; await whenReady() first.', { code: 'session_not_ready', category: 'state', recoverable: true });
    return this.session;
  }

  /** What the model sees: chat messages only. */
  getMessages(): readonly Message[] {
    return this.session?.getHistory() ?? [];
  }

  /** The timeline: chat entries (user prompts without model-only context) and event entries. */
  getFullHistory(): IHistoryEntry[] {
    return displayedTimeline(this.session?.getFullHistory() ?? []);
  }

  /** Same as `getFullHistory()`. */
  getHistory(): IHistoryEntry[] {
    return this.getFullHistory();
  }

  /** Context-window usage with the auto-compaction threshold; zeros before the session is ready or without a tracker. */
  getContextState(): IContextWindowState & { autoCompactThreshold: number | false } {
    return this.turn.getContextState();
  }

  /** Compacts the conversation (see `Session.compact`) and saves the session. */
  async compact(instructions?: string): Promise<void> {
    const session = await this.ready;
    await session.compact(instructions);
    await session.save();
  }

  /** The user-facing session name, if one was given. */
  getName(): string | undefined {
    return this.session?.getName();
  }

  /** Names the session and saves it. */
  async setName(name: string): Promise<void> {
    const session = await this.ready;
    session.setName(name);
    await session.save();
  }

  /**
   * Sets the language replies are written in (`/language`): the system prompt's
   * "Response language" line is set (added when the prompt has none), the rest of the prompt
   * is kept, and the session is saved, so a resumed session keeps it. Not during a turn.
   */
  async setLanguage(language: string): Promise<void> {
    const session = await this.ready;
    const wanted = language.replace(/\s+/g, ' ').trim();
    if (wanted === '') throw new TypeError('A language is required (e.g. English, ko, 日本語).');
    session.setSystemMessage(withResponseLanguage(session.getSystemMessage() ?? '', wanted));
    await session.save();
  }

  // ------------------------------------------------------------------ commands

  /**
   * Runs a slash command (`compact`, `/compact`); `null` when no composed module has it. A
   * skill name (`/deploy staging`) runs the composed `skills` command with `deploy staging`.
   * `invocation` says who asks: the user (`user-slash`, the default) or a model through a tool
   * (`model-tool`: an MCP client's `command_*` call); commands keep user-only actions from the latter.
   */
  async executeCommand(name: string, args = '', options: { invocation?: 'user-slash' | 'model-tool' } = {}): Promise<ICommandResult | null> {
    const session = await this.ready;
    return this.commands.runCommand(session, name, args, options.invocation ?? 'user-slash');
  }

  /** Every executable command, sorted by name; `[]` before the session is ready. */
  listCommands(): ICommandListing[] {
    return this.session ? this.commands.listCommands(this.session) : [];
  }

  /**
   * The palette (spec: CommandRegistry): the executable commands, the modules' own sources
   * (plugin commands) and the skills as virtual commands, for autocomplete.
   */
  async getCommandRegistry(): Promise<CommandRegistry> {
    return this.commands.getCommandRegistry(await this.ready);
  }

  /**
   * Activates a skill (spec: executeSkillCommandByName) through the bound `SkillActivator`:
   * a forked skill answers with the subagent's result; an injected one is returned to the
   * model as instructions (`model-tool`) or submitted into this session (`user-slash`).
   * Every activation is recorded (`skill_activation` event, `skill-activation` timeline entry,
   * `skillActivationEvents` in the record).
   */
  async executeSkillCommandByName(name: string, args: string, request: { invocation: 'user-slash' | 'model-tool' }): Promise<ICommandResult> {
    return this.commands.executeSkillCommandByName(await this.ready, name, args, request);
  }

  // ------------------------------------------------------------------ checkpoints

  /** This session's edit checkpoints; `[]` without the checkpoints plugin. */
  async listEditCheckpoints(): Promise<IEditCheckpointSummary[]> {
    const session = await this.ready;
    return (await session.services.getOptional(EditCheckpoints)?.list(session.sessionId)) ?? [];
  }

  /** Describes a checkpoint; rejects when checkpoints are not enabled or the id is unknown. */
  async inspectEditCheckpoint(checkpointId: string): Promise<IEditCheckpointInspection> {
    const session = await this.ready;
    return requireCheckpoints(session).inspect(session.sessionId, checkpointId);
  }

  /** Restores files to `checkpointId` (rolling back later ones); refused while a prompt runs. */
  async restoreEditCheckpoint(checkpointId: string): Promise<IEditCheckpointRestoreResult> {
    // An ended session changes no file and saves nothing more (a stale copy is ended unsaved on purpose).
    if (this.closed) throw new InteractiveSessionClosedError(this.session?.sessionId ?? this.options.sessionId ?? 'unknown');
    // Known from the call on, before any wait: a `shutdown` that comes next waits for it.
    const restoring = (async () => {
      const session = await this.ready;
      if (this.turn.executing) throw new CheckpointRestoreBusyError(session.sessionId);
      const result = await requireCheckpoints(session).restore(session.sessionId, checkpointId);
      this.turn.addEvent(session, 'checkpoint-restored', result);
      await session.save();
      return result;
    })();
    this.restoring.add(restoring);
    try {
      return await restoring;
    } finally {
      this.restoring.delete(restoring);
    }
  }

  /** Restores under way: `shutdown` lets them finish (their history entries saved) before the session ends. */
  private readonly restoring = new Set<Promise<unknown>>();

  // ------------------------------------------------------------------ transports and lifecycle

  /** Attaches a transport (it calls back into this session); start it afterwards. */
  attachTransport(transport: ITransportAdapter<InteractiveSession>): void {
    transport.attach(this);
  }

  /**
   * Ends the session (spec: graceful shutdown): new prompts are refused, the running turn is
   * aborted, the background tasks this session started and that still run are stopped (unless
   * `cancelBackgroundTasks` is false: a host closing a stale copy of a session that lives on
   * elsewhere), a sandbox snapshot is taken when the client can, the session is saved and
   * `sessionEnd` fires. Idempotent.
   */
  shutdown(options: { reason?: SessionEndReason; message?: string; cancelBackgroundTasks?: boolean } = {}): Promise<void> {
    this.closed ??= (async () => {
      this.abort();
      await this.current?.catch(() => undefined);
      await Promise.allSettled([...this.restoring]);
      const session = await this.ready.catch(() => undefined);
      if (!session) return;
      if (options.cancelBackgroundTasks !== false) await stopBackgroundTasks(session);
      const snapshot = this.options.sandboxClient?.snapshot;
      if (snapshot) {
        try {
          session.setRecordField('sandboxSnapshotId', await snapshot.call(this.options.sandboxClient));
        } catch (error) {
          session.log('error', { phase: 'sandbox_snapshot', error: describeError(error) });
        }
      }
      if (options.message) this.turn.addEvent(session, 'system', { level: 'info', message: options.message });
      for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
      await session.shutdown({ reason: options.reason ?? 'other' });
    })();
    return this.closed;
  }

  // ------------------------------------------------------------------ set-up

  private async initialize(): Promise<Session> {
    const session = this.options.session ?? (await createSession(this.options.kernel!, this.options, this.commands.toolSource));
    this.session = session;
    this.turn.session = session;
    // Context estimates are passed on only to `context_update` listeners: none, no event objects.
    this.unsubscribers.push(session.observe(this.turn.onSessionEvent, { contextUpdates: () => this.events.has('context_update') }));
    // A session made elsewhere has no command tools yet: the model reaches commands through this facade.
    if (this.options.session) this.unsubscribers.push(session.addToolSource(this.commands.toolSource));
    reportUnsandboxedTools(session, this.options);
    const background = session.services.getOptional(BackgroundTasks);
    if (background?.subscribe) {
      this.unsubscribers.push(
        background.subscribe((event: BackgroundTaskNotice) => {
          if (event.sessionId === undefined || event.sessionId === session.sessionId) this.events.emit('background_task_event', event);
        }),
      );
    }
    return session;
  }

  /**
   * Stored sessions of `cwd` (all when omitted), newest first, for a picker: id, name, first
   * prompt, updated time and message count.
   */
  static async listResumableSessions(kernel: Kernel, cwd?: string): Promise<IResumableSession[]> {
    return resumableSessions(kernel, cwd);
  }
}
