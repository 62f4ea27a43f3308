import { resolve as resolvePath } from 'node:path';
import {
  BackgroundTasks,
  CheckpointRestoreBusyError,
  CommandContribution,
  Diagnostics,
  SandboxPaths,
  SandboxToolFactory,
  EditCheckpoints,
  processWarningDiagnostics,
  isAbortError,
  isChatEntry,
  SessionStore,
  SkillActivator,
  SkillSourceContribution,
  SystemPromptBuilder,
  TesseraError,
  describeError,
  withResponseLanguage,
  type BackgroundTaskNotice,
  type IContextWindowState,
  type ICommandHostAdapters,
  type ICommandHostContext,
  type ICommandResult,
  type IEditCheckpointInspection,
  type IEditCheckpointRestoreResult,
  type IEditCheckpointSummary,
  type IExecutionResult,
  type IHistoryEntry,
  type IPromptFileReferenceRecord,
  type ImageBlock,
  type ISessionRecord,
  type ISkillActivationEvent,
  type IToolState,
  type ITransportAdapter,
  type IUsageSnapshot,
  type Message,
  type PermissionMode,
  type SandboxClientHandle,
  type SandboxToolSet,
  type SkillEntry,
  type ToolSource,
  type Provider,
  type SessionEndReason,
  type SessionEvent,
  type SessionServices,
  type TCommandEffect,
  type TextBlock,
  compareText,
  copyWith,
} from '@tessera/contracts';
import { randomUUID } from 'node:crypto';
import type { Kernel, KernelSessionOptions } from '../kernel.js';
import type { Session } from '../session.js';
import { PromptBlockedError, SessionBusyError } from '../errors.js';
import { ContainerSessionServices } from '../session-services.js';
import { canonicalName, SystemCommandExecutor, type ICommandListing } from './command-executor.js';
import { BuiltinCommandSource, CommandRegistry, SkillCommandSource } from './command-registry.js';
import { commandTools } from './command-tools.js';
import { InteractiveEventEmitter, type InteractiveSessionEvents } from './events.js';
import { firstArgOf, finishedToolState } from './tool-state.js';

/**
 * What a sandbox offers the interactive session: snapshots on shutdown (kept in the session
 * record as `sandboxSnapshotId`), restore on resume (not when forked). The tools reach the
 * sandbox through the same object (`SandboxToolFactory`), which then must be a full
 * `ISandboxClient` of `@tessera/plugin-tools`.
 */
export type InteractiveSandboxClient = SandboxClientHandle;

/** How to create an `InteractiveSession`: from a kernel (with the session options below) or around a ready `Session`. */
export interface InteractiveSessionOptions {
  /** The composed application; sessions are created from it. Either this or `session`. */
  kernel?: Kernel;
  /** A pre-built session (tests); the kernel options below are then ignored. */
  session?: Session;
  cwd?: string;
  sessionId?: string;
  provider?: Provider;
  model?: string;
  permissionMode?: PermissionMode;
  /** The system prompt as given; otherwise the `SystemPromptBuilder` builds one when bound. */
  systemPrompt?: string;
  /** Appended to the built system prompt (`--append-system-prompt`). */
  appendSystemPrompt?: string;
  /**
   * Continue a stored session (`SessionStore`): same id, history, name. With `cwd` given, the
   * session must be that folder's (`ResumeSessionCwdMismatchError`, `resume_cwd_mismatch`).
   */
  resumeSessionId?: string;
  /** With `resumeSessionId` or `continueMostRecent`: start a new id from the stored history and leave the original untouched. */
  forkSession?: boolean;
  /** Continue the most recently updated stored session of `cwd`; a fresh session when there is none. */
  continueMostRecent?: boolean;
  /** A user-facing name for a new session. */
  name?: string;
  /**
   * Runs this session's Bash, Read, Write and Edit in a sandbox: when the kernel's tools are not
   * sandboxed kernel-wide, the kernel's `SandboxToolFactory` (bound by `builtinTools()`) builds
   * tools routed through this client for this session, its subagents included, and the host's
   * BashOutput and KillShell are not offered (as under a kernel-wide sandbox). Also hydrates
   * (`workspaceManifest`), snapshots on shutdown and restores on resume.
   */
  sandboxClient?: InteractiveSandboxClient;
  /** Workspace root inside the sandbox for the per-session tools; default the factory's (`/workspace`). */
  sandboxRoot?: string;
  /** Applied once before the first turn when no sandbox snapshot was restored. */
  workspaceManifest?: unknown;
  /** How to apply `workspaceManifest` (e.g. `applyWorkspaceManifest` from `@tessera/plugin-tools`). */
  applyWorkspaceManifest?: (client: InteractiveSandboxClient, manifest: unknown, hostRoot: string) => Promise<unknown>;
  /** Adapters commands may ask for (`ICommandHostContext.getCommandHostAdapters()`). */
  commandHostAdapters?: ICommandHostAdapters;
  /** More options for the session the kernel creates (tools, limits…). */
  sessionOptions?: KernelSessionOptions;
}

/** A stored session as a picker lists it. */
export interface IResumableSession {
  id: string;
  name?: string;
  cwd: string;
  firstPrompt: string;
  updatedAt: string;
  messageCount: number;
}

/** `submit` was called while one prompt runs and another already waits; the queue holds one. */
export class PromptQueueFullError extends TesseraError {
  constructor() {
    super('A prompt is already queued behind the running one; wait for it, or cancel it with cancelQueue().', {
      code: 'prompt_queue_full',
      category: 'state',
      recoverable: true,
    });
  }
}

const HISTORY_SOURCE = Symbol('history source');

interface HistorySource {
  entries: readonly IHistoryEntry[];
  length: number;
  copy?: IHistoryEntry[];
}

/**
 * `IExecutionResult.history`: one getter shared by every result. A closure made per result
 * would give each result a hidden class of its own; V8 keeps those (and through the closure
 * the whole turn's timeline) alive until a full GC, which made every turn survive into the
 * old generation.
 */
const SUMMARY_TEXT = Symbol('tool summary text');

/** A `tool-summary` entry's `summary`, made on first read; shared by every entry, as `resultHistory` is. */
function toolSummaryText(this: { tools: readonly IToolState[]; [SUMMARY_TEXT]?: string }): string {
  return (this[SUMMARY_TEXT] ??= this.tools.map((tool) => `${tool.toolName}${tool.firstArg ? `(${tool.firstArg})` : ''}: ${tool.isRunning ? 'interrupted' : (tool.result ?? 'unknown')}`).join('\n'));
}

function resultHistory(this: { [HISTORY_SOURCE]: HistorySource }): IHistoryEntry[] {
  const source = this[HISTORY_SOURCE];
  return (source.copy ??= source.entries.slice(0, source.length).map(displayEntry));
}

/** Record field holding the context files' "Compact Instructions" (for a resumed or forked session). */
const COMPACT_FIELD = 'compactInstructions';

/** Background task statuses after which there is nothing to stop. */
const ENDED_TASK_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/**
 * Command effects `InteractiveSession.executeCommand` applies to its own session before it
 * returns the result (the result still lists them, for the host to show).
 */
export const SESSION_APPLIED_EFFECTS: ReadonlySet<TCommandEffect['type']> = new Set(['session-renamed', 'language-change-requested', 'model-change-requested']);

/** `submit` was called after `shutdown()`. */
export class InteractiveSessionClosedError extends TesseraError {
  constructor(sessionId: string) {
    super(`The interactive session ${sessionId} has been shut down; create a new one.`, { code: 'session_closed', category: 'state', recoverable: false, details: { sessionId } });
  }
}

/** `resumeSessionId` names no session in the store (or no store is bound). */
export class ResumeSessionNotFoundError extends TesseraError {
  constructor(sessionId: string) {
    super(`No stored session "${sessionId}" to resume; list the stored sessions (listResumableSessions) and pick one of their ids.`, {
      code: 'session_not_found',
      category: 'validation',
      recoverable: false,
      details: { sessionId },
    });
  }
}

/**
 * `resumeSessionId` names a session of another folder than the `cwd` given. As Claude Code does, a
 * stored session is resumed from its own folder: its files, context and permissions are that
 * folder's, and a host that serves several projects must not let one reach another's sessions.
 */
export class ResumeSessionCwdMismatchError extends TesseraError {
  constructor(sessionId: string, sessionCwd: string, cwd: string) {
    super(`Session "${sessionId}" belongs to ${sessionCwd}, not ${cwd}. Resume it from its own folder (cd ${sessionCwd}), or pass that folder as cwd.`, {
      code: 'resume_cwd_mismatch',
      category: 'validation',
      recoverable: false,
      details: { sessionId, sessionCwd, cwd },
    });
  }
}

/** More of a prompt than its text (`InteractiveSession.submit`'s fourth argument). */
export interface ISubmitOptions {
  /**
   * The prompt as content blocks, text and images in order (a pasted screenshot, a stream-json
   * message with images): the turn's user message carries them (`RunOptions.content`). `input`
   * should be their text; hooks and the timeline's display see that.
   */
  content?: ReadonlyArray<TextBlock | ImageBlock>;
}

interface Pending {
  input: string;
  displayInput: string | undefined;
  rawInput: string | undefined;
  options: ISubmitOptions | undefined;
  resolve: (result: IExecutionResult | undefined) => void;
  reject: (error: unknown) => void;
}

const EMPTY_CONTEXT: IContextWindowState = { usedTokens: 0, maxTokens: 0, usedPercentage: 0, exact: false };

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
  private executing = false;
  private pending: Pending | undefined;
  private current: Promise<IExecutionResult | undefined> | undefined;
  private streamingText = '';
  private turnTools: IToolState[] = [];
  private turnUsage: { input: number; output: number; cacheRead: number; cacheWrite: number; rounds: number; unreported: number } | undefined;
  /** The turn's result, made when the session reported its end (before it saved). */
  private turnResult: IExecutionResult | undefined;
  private closed: Promise<void> | undefined;
  private executor: SystemCommandExecutor | undefined;
  private unsubscribers: Array<() => void> = [];

  constructor(private readonly options: InteractiveSessionOptions) {
    if (!options.kernel && !options.session) {
      throw new TesseraError('InteractiveSession needs a kernel (options.kernel) or a session (options.session).', {
        code: 'invalid_interactive_options',
        category: 'configuration',
        recoverable: false,
      });
    }
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
    if (this.executing || this.pending) {
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
    return this.executing;
  }

  /** The text of the prompt waiting behind the running one, or `null`. */
  getPendingPrompt(): string | null {
    return this.pending?.input ?? null;
  }

  /** The assistant text streamed so far in the current model call. */
  getStreamingText(): string {
    return this.streamingText;
  }

  /** Copies of the tool calls of this turn that are still running. */
  getActiveTools(): IToolState[] {
    return this.turnTools.filter((state) => state.isRunning).map((state) => ({ ...state }));
  }

  private async execute(input: string, displayInput: string | undefined, rawInput: string | undefined, options?: ISubmitOptions): Promise<IExecutionResult | undefined> {
    this.executing = true;
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
      this.executing = false;
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
    this.streamingText = '';
    this.turnTools = [];
    this.turnResult = undefined;
    this.turnUsage = undefined;
    this.events.emit('thinking', true);
    // Recorded when the turn ends, naming the user entry it shows (none when the prompt was blocked).
    this.turnDisplay = displayInput !== undefined && displayInput !== input ? { displayInput, rawInput, promptHead: input.slice(0, PROMPT_HEAD_CHARS), from: session.getFullHistory().length } : undefined;
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
        onTextDelta: this.onTextDelta,
        ...(turnAbort.aborted ? { signal: AbortSignal.abort() } : {}),
        ...(rawInput === undefined ? {} : { rawPrompt: rawInput }),
        ...(content === undefined ? {} : { content }),
      });
      // The summary entries were added on `turn_end`, before the session saved.
      const result = this.turnResult ?? this.finishTurn(session, response);
      this.events.emit('complete', result);
      return result;
    } catch (error) {
      blocked = error instanceof PromptBlockedError;
      const finished = this.turnResult;
      const result = finished ?? this.finishTurn(session, this.streamingText);
      if (isAbortError(error)) {
        if (!finished) await session.save();
        this.events.emit('interrupted', result);
        return result;
      }
      if (!finished) {
        this.addEvent(session, 'system', { level: 'error', message: describeError(error), ...codeOf(error) });
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

  /** The running prompt's display text, and where its entries start in the timeline. */
  private turnDisplay: { displayInput: string; rawInput: string | undefined; promptHead: string; from: number } | undefined;

  /** Appends the turn's tool summary and usage entries and builds the result. */
  private finishTurn(session: Session, response: string): IExecutionResult {
    const display = this.turnDisplay;
    if (display) {
      this.turnDisplay = undefined;
      // The prompt's user entry, named by how many chat entries back it stands (entry ids change
      // when a store reloads the session; the chat entries' order does not).
      const entries = session.getFullHistory();
      let target = -1;
      for (let index = display.from; index < entries.length; index += 1) {
        const entry = entries[index]!;
        if (isChatEntry(entry) && entry.data.role === 'user') {
          target = index;
          break;
        }
      }
      let chatBack = 0;
      if (target !== -1) for (let index = target; index < entries.length; index += 1) if (entries[index]!.category === 'chat') chatBack += 1;
      this.addEvent(session, 'prompt-display', { displayInput: display.displayInput, ...(display.rawInput === undefined ? {} : { rawInput: display.rawInput }), ...(chatBack > 0 ? { chatBack, promptHead: display.promptHead } : {}) });
    }
    // Finished states are never changed again; only a call still running (an abort) is copied.
    const tools = this.turnTools.map((state) => (state.isRunning ? { ...state } : state));
    if (tools.length > 0) {
      // The summary text is made when first read (a UI, a save): a long turn has many tools.
      const data = { tools } as { tools: IToolState[]; summary: string; [SUMMARY_TEXT]?: string };
      Object.defineProperty(data, SUMMARY_TEXT, { value: undefined, writable: true });
      Object.defineProperty(data, 'summary', { get: toolSummaryText, enumerable: true, configurable: true });
      this.addEvent(session, 'tool-summary', data);
    }
    const contextState = this.getContextState();
    let usage: IUsageSnapshot | undefined;
    const sum = this.turnUsage;
    // Only when a model call reported usage: a provider that reports none gets no usage entry.
    if (sum && sum.unreported < sum.rounds) {
      const prompt = sum.input + sum.cacheRead + sum.cacheWrite;
      usage = {
        kind: sum.unreported === 0 ? 'exact' : 'estimated',
        scope: 'turn',
        promptTokens: prompt,
        completionTokens: sum.output,
        ...(sum.cacheRead > 0 ? { cacheReadTokens: sum.cacheRead } : {}),
        ...(sum.cacheWrite > 0 ? { cacheWriteTokens: sum.cacheWrite } : {}),
        totalTokens: prompt + sum.output,
        contextUsedTokens: contextState.usedTokens,
        contextMaxTokens: contextState.maxTokens,
        contextUsedPercentage: contextState.usedPercentage,
        costStatus: 'unknown',
      };
      this.addEvent(session, 'usage-summary', usage);
    }
    // The timeline is copied only when someone reads `history` (a long session has many
    // entries): the entries up to this turn's end, as long as history was not replaced since.
    const result = { response, toolSummaries: tools, contextState, ...(usage ? { usage } : {}) } as unknown as IExecutionResult;
    const entries = session.getFullHistory();
    const source: HistorySource = { entries, length: entries.length };
    Object.defineProperty(result, HISTORY_SOURCE, { value: source });
    Object.defineProperty(result, 'history', { get: resultHistory, enumerable: true, configurable: true });
    return result;
  }

  /** Event entry ids: one random prefix per interactive session, then a counter (cheap on the tool path). */
  private readonly idPrefix = `ev-${randomUUID().slice(0, 8)}-`;
  private nextEntry = 0;
  private stampMs = Number.NaN;
  private stamp = '';

  private addEvent(session: Session, type: string, data: unknown): void {
    const now = session.clock.now();
    if (now !== this.stampMs) {
      this.stampMs = now;
      this.stamp = new Date(now).toISOString();
    }
    session.addHistoryEntry({ id: this.idPrefix + ++this.nextEntry, timestamp: this.stamp, category: 'event', type, data });
  }

  // ------------------------------------------------------------------ the session's stream

  /** Streamed text comes straight from the turn runner (see `Session.observe`): no event object per chunk. */
  private onTextDelta = (delta: string): void => {
    this.streamingText += delta;
    this.events.emit('text_delta', delta);
  };

  private onSessionEvent = (event: SessionEvent): void => {
    const session = this.session!;
    switch (event.type) {
      case 'thinking_delta':
        this.events.emit('thinking_delta', event.delta);
        break;
      case 'assistant_message': {
        const usage = event.message.usage;
        const sum = (this.turnUsage ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, rounds: 0, unreported: 0 });
        sum.rounds += 1;
        if (usage) {
          sum.input += usage.inputTokens;
          sum.output += usage.outputTokens;
          sum.cacheRead += usage.cacheReadTokens ?? 0;
          sum.cacheWrite += usage.cacheWriteTokens ?? 0;
        } else sum.unreported += 1;
        // The next round streams new text; what was streamed is in the message now.
        this.streamingText = '';
        break;
      }
      case 'tool_start': {
        const state: IToolState = { toolCallId: event.toolCallId, toolName: event.toolName, firstArg: firstArgOf(event.input), isRunning: true };
        this.turnTools.push(state);
        // `state` is never changed (the call's end replaces it), so the timeline entry shares it.
        this.addEvent(session, 'tool-start', state);
        if (this.events.has('tool_start')) this.events.emit('tool_start', { ...state });
        break;
      }
      case 'tool_end': {
        // The call that ends is almost always the latest one; parallel batches are short.
        let index = this.turnTools.length - 1;
        while (index >= 0 && this.turnTools[index]!.toolCallId !== event.toolCallId) index -= 1;
        const running = index >= 0 ? this.turnTools[index]! : { toolCallId: event.toolCallId, toolName: event.toolName, firstArg: firstArgOf(event.input), isRunning: true };
        const finished = finishedToolState(running, event);
        if (index >= 0) this.turnTools[index] = finished;
        else this.turnTools.push(finished);
        this.addEvent(session, 'tool-end', finished);
        if (this.events.has('tool_end')) this.events.emit('tool_end', { ...finished });
        break;
      }
      case 'context_update':
        if (this.events.has('context_update')) this.events.emit('context_update', this.withThreshold(event.state));
        break;
      // The turn's end, reported before the session saves: summary entries added now are saved with it.
      case 'turn_end':
        if (this.executing) this.turnResult = this.finishTurn(session, event.text);
        break;
      case 'interrupted':
        if (this.executing) this.turnResult = this.finishTurn(session, this.streamingText);
        break;
      case 'error':
        if (this.executing) {
          this.turnResult = this.finishTurn(session, this.streamingText);
          this.addEvent(session, 'system', { level: 'error', message: event.message, ...(event.code === undefined ? {} : { code: event.code }) });
        }
        break;
      case 'prompt_file_reference':
        this.addEvent(session, 'prompt-file-reference', { prompt: event.prompt, references: event.references });
        this.events.emit('prompt_file_reference', { prompt: event.prompt, references: event.references });
        break;
      case 'skill_activation':
        this.addEvent(session, 'skill-activation', { ...event.event, message: skillMessage(event.event) });
        this.events.emit('skill_activation', event.event);
        break;
      default:
        break;
    }
  };

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
    return this.withThreshold(this.session?.getContextState() ?? EMPTY_CONTEXT);
  }

  private withThreshold(state: IContextWindowState): IContextWindowState & { autoCompactThreshold: number | false } {
    return copyWith(state, { autoCompactThreshold: this.session?.getAutoCompactThreshold() ?? false });
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
    return this.runCommand(session, name, args, options.invocation ?? 'user-slash');
  }

  private async runCommand(session: Session, name: string, args: string, invocation: 'user-slash' | 'model-tool'): Promise<ICommandResult | null> {
    const executor = this.commandExecutor(session);
    const canonical = canonicalName(name);
    if (!executor.has(canonical) && executor.has('skills')) {
      const skill = (await this.skillEntries(session)).find((entry) => entry.id === canonical || entry.qualifiedName === canonical);
      if (skill) return executor.execute('skills', args === '' ? canonical : `${canonical} ${args}`, this.hostContext(session, invocation));
    }
    const result = await executor.execute(canonical, args, this.hostContext(session, invocation));
    return result && this.applySessionEffects(session, result);
  }

  /**
   * Applies the effects that change only this session (`SESSION_APPLIED_EFFECTS`), so every
   * host (terminal, server, ACP, MCP, `createQuery`) gets them alike: `session-renamed` (name,
   * saved), `language-change-requested` (the system prompt's language line, saved) and
   * `model-change-requested` (the model for the calls that follow). The effects stay in the
   * result for the host to show; the rest (exit, picker, reset, plugin manager, status line…)
   * are the host's to apply. One that cannot be applied now (a turn is running) turns the
   * result into a failure that says so.
   */
  private async applySessionEffects(session: Session, result: ICommandResult): Promise<ICommandResult> {
    for (const effect of result.effects ?? []) {
      try {
        if (effect.type === 'session-renamed') await this.setName(effect.name);
        else if (effect.type === 'language-change-requested') await this.setLanguage(effect.language);
        else if (effect.type === 'model-change-requested') session.setModel(effect.modelId);
      } catch (error) {
        const reason = error instanceof SessionBusyError ? 'a turn is running; try again when it ends' : describeError(error);
        return { ...result, success: false, message: `${result.message} Not applied: ${reason}.`, effects: (result.effects ?? []).filter((item) => item !== effect) };
      }
    }
    return result;
  }

  /** Every executable command, sorted by name; `[]` before the session is ready. */
  listCommands(): ICommandListing[] {
    return this.session ? this.commandExecutor(this.session).listCommands() : [];
  }

  /**
   * The palette (spec: CommandRegistry): the executable commands, the modules' own sources
   * (plugin commands) and the skills as virtual commands, for autocomplete.
   */
  async getCommandRegistry(): Promise<CommandRegistry> {
    const session = await this.ready;
    if (!this.registry) {
      const executor = this.commandExecutor(session);
      this.registry = new CommandRegistry();
      this.registry.addSource(new BuiltinCommandSource(executor));
      for (const module of session.services.getAll(CommandContribution)) for (const source of module.commandSources ?? []) this.registry.addSource(source);
      this.registry.addSource(this.skillCommands);
    }
    this.skillCommands.update(await this.skillEntries(session));
    this.registry.invalidate();
    return this.registry;
  }

  private registry: CommandRegistry | undefined;
  private readonly skillCommands = new SkillCommandSource();

  private async skillEntries(session: Session): Promise<SkillEntry[]> {
    const entries: SkillEntry[] = [];
    for (const source of session.services.getAll(SkillSourceContribution)) {
      try {
        entries.push(...(await source.skills({ sessionId: session.sessionId, cwd: session.cwd })));
      } catch (error) {
        session.log('error', { phase: 'skills', source: source.name, error: describeError(error) });
      }
    }
    return entries;
  }

  private commandExecutor(session: Session): SystemCommandExecutor {
    this.executor ??= new SystemCommandExecutor(session.services.getAll(CommandContribution));
    return this.executor;
  }

  /** The model's route to commands: a tool per model-invocable command (none when there is none). */
  private readonly commandToolSource: ToolSource = {
    name: 'commands',
    tools: () => {
      const session = this.session;
      if (!session) return [];
      const descriptors = session.services.getAll(CommandContribution).flatMap((module) => module.commandDescriptors ?? []);
      return commandTools(this.commandExecutor(session), descriptors, (name, args) => this.runCommand(session, name, args, 'model-tool'));
    },
  };

  private hostContext(session: Session, invocation: 'user-slash' | 'model-tool' = 'user-slash'): ICommandHostContext {
    return {
      sessionId: session.sessionId,
      cwd: session.cwd,
      services: session.services,
      invocation,
      getHistory: () => this.getFullHistory(),
      getMessageCount: () => session.getHistory().length,
      getSessionName: () => session.getName(),
      getContextState: () => session.getContextState(),
      getAutoCompactThreshold: () => session.getAutoCompactThreshold(),
      setAutoCompactThreshold: (threshold) => session.setAutoCompactThreshold(threshold),
      compact: (instructions) => session.compact(instructions),
      clearHistory: () => session.clearHistory(),
      getPermissionMode: () => session.getPermissionMode(),
      setPermissionMode: (mode) => session.setPermissionMode(mode),
      allowsPermissionMode: (mode) => session.allowsPermissionMode(mode),
      getModel: () => session.getModel(),
      listCommands: () => this.listCommands(),
      executeSkillCommandByName: (name, args, request) => this.executeSkillCommandByName(name, args, request),
      listEditCheckpoints: () => this.listEditCheckpoints(),
      inspectEditCheckpoint: (id) => this.inspectEditCheckpoint(id),
      restoreEditCheckpoint: (id) => this.restoreEditCheckpoint(id),
      getCommandHostAdapters: () => ({
        // Fields a command keeps with the session (memory events…); saved with the next save.
        sessionRecord: { get: (field: string) => session.getRecordField(field), set: (field: string, value: unknown) => session.setRecordField(field, value) },
        ...this.options.commandHostAdapters,
      }),
    };
  }

  /**
   * Activates a skill (spec: executeSkillCommandByName) through the bound `SkillActivator`:
   * a forked skill answers with the subagent's result; an injected one is returned to the
   * model as instructions (`model-tool`) or submitted into this session (`user-slash`).
   * Every activation is recorded (`skill_activation` event, `skill-activation` timeline entry,
   * `skillActivationEvents` in the record).
   */
  async executeSkillCommandByName(name: string, args: string, request: { invocation: 'user-slash' | 'model-tool' }): Promise<ICommandResult> {
    const session = await this.ready;
    const activator = session.services.getOptional(SkillActivator);
    if (!activator) return { success: false, message: 'Skills are not enabled in this session: add the skills plugin (skills()).' };
    let activation;
    try {
      activation = await activator.activate(name, args, {
        invocation: request.invocation,
        sessionId: session.sessionId,
        cwd: session.cwd,
        services: session.services,
        permissionMode: session.getPermissionMode(),
        onEvent: (event) => this.recordSkillActivation(session, event),
      });
    } catch (error) {
      return { success: false, message: describeError(error), ...codeData(error) };
    }
    const diagnostics = activation.diagnostics.map((diagnostic) => diagnostic.message);
    const extra = diagnostics.length > 0 ? { diagnostics } : {};
    if (activation.mode === 'fork') return { success: true, message: activation.result.text, data: { mode: 'fork', skill: name, agentId: activation.result.agentId }, ...extra };
    if (request.invocation === 'model-tool') return { success: true, message: activation.prompt, data: { mode: 'inject', skill: name }, ...extra };
    // The timeline shows what was typed, and prompt hooks match it; the model gets the skill's prompt.
    const typed = `/${name}${args.trim() === '' ? '' : ` ${args.trim()}`}`;
    const result = await this.submit(activation.prompt, typed, typed);
    return { success: true, message: result?.response ?? '', data: { mode: 'inject', skill: name }, ...extra };
  }

  private recordSkillActivation(session: Session, event: ISkillActivationEvent): void {
    const stored = session.getRecordField('skillActivationEvents');
    session.setRecordField('skillActivationEvents', [...(Array.isArray(stored) ? stored : []), event]);
    // Through the stream, like every event: the timeline entry and the listeners follow from it.
    session.emit({ type: 'skill_activation', event });
  }

  // ------------------------------------------------------------------ checkpoints

  /** This session's edit checkpoints; `[]` without the checkpoints plugin. */
  async listEditCheckpoints(): Promise<IEditCheckpointSummary[]> {
    const session = await this.ready;
    return (await this.checkpoints(session)?.list(session.sessionId)) ?? [];
  }

  /** Describes a checkpoint; rejects when checkpoints are not enabled or the id is unknown. */
  async inspectEditCheckpoint(checkpointId: string): Promise<IEditCheckpointInspection> {
    const session = await this.ready;
    return this.requireCheckpoints(session).inspect(session.sessionId, checkpointId);
  }

  /** Restores files to `checkpointId` (rolling back later ones); refused while a prompt runs. */
  async restoreEditCheckpoint(checkpointId: string): Promise<IEditCheckpointRestoreResult> {
    const session = await this.ready;
    if (this.executing) throw new CheckpointRestoreBusyError(session.sessionId);
    const result = await this.requireCheckpoints(session).restore(session.sessionId, checkpointId);
    this.addEvent(session, 'checkpoint-restored', result);
    await session.save();
    return result;
  }

  private checkpoints(session: Session): EditCheckpoints | undefined {
    return session.services.getOptional(EditCheckpoints);
  }

  private requireCheckpoints(session: Session): EditCheckpoints {
    const checkpoints = this.checkpoints(session);
    if (!checkpoints) {
      throw new TesseraError('Edit checkpoints are not enabled: add the checkpoints plugin (editCheckpoints()) to the kernel.', {
        code: 'checkpoints_unavailable',
        category: 'configuration',
        recoverable: false,
      });
    }
    return checkpoints;
  }

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
      const session = await this.ready.catch(() => undefined);
      if (!session) return;
      if (options.cancelBackgroundTasks !== false) await this.stopBackgroundTasks(session);
      const snapshot = this.options.sandboxClient?.snapshot;
      if (snapshot) {
        try {
          session.setRecordField('sandboxSnapshotId', await snapshot.call(this.options.sandboxClient));
        } catch (error) {
          session.log('error', { phase: 'sandbox_snapshot', error: describeError(error) });
        }
      }
      if (options.message) this.addEvent(session, 'system', { level: 'info', message: options.message });
      for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
      await session.shutdown({ reason: options.reason ?? 'other' });
    })();
    return this.closed;
  }

  /** Stops this session's background shell commands that have not ended. */
  private async stopBackgroundTasks(session: Session): Promise<void> {
    const tasks = session.services.getOptional(BackgroundTasks);
    if (!tasks?.list || !tasks.stop) return;
    let open;
    try {
      // Shell commands: what `stop` reaches (subagents end with the turn that awaits them).
      open = tasks.list(session.sessionId).filter((task) => task.kind === 'process' && !ENDED_TASK_STATUSES.has(task.status));
    } catch (error) {
      session.log('error', { phase: 'background_shutdown', error: describeError(error) });
      return;
    }
    await Promise.all(
      open.map((task) =>
        tasks.stop!(task.id, session.sessionId).catch((error: unknown) => session.log('error', { phase: 'background_shutdown', taskId: task.id, error: describeError(error) })),
      ),
    );
  }

  // ------------------------------------------------------------------ set-up

  private async initialize(): Promise<Session> {
    const session = this.options.session ?? (await this.createSession(this.options.kernel!));
    this.session = session;
    // Context estimates are passed on only to `context_update` listeners: none, no event objects.
    this.unsubscribers.push(session.observe(this.onSessionEvent, { contextUpdates: () => this.events.has('context_update') }));
    // A session made elsewhere has no command tools yet: the model reaches commands through this facade.
    if (this.options.session) this.unsubscribers.push(session.addToolSource(this.commandToolSource));
    // The sandbox client hydrates, snapshots and restores the workspace; the tools reach it when
    // they were composed sandboxed (`builtinTools({ sandbox })`) or built for this session by the
    // `SandboxToolFactory` (both give the session `SandboxPaths`). Said once, loudly, otherwise:
    // Bash, Write and Edit would run on the host while the sandbox looks in use.
    if (this.options.sandboxClient && !session.services.getOptional(SandboxPaths)) {
      (session.services.getOptional(Diagnostics) ?? processWarningDiagnostics).report({
        severity: 'warning',
        code: 'TESSERA_SANDBOX_TOOLS_UNSANDBOXED',
        source: 'interactive-session',
        message:
          'InteractiveSession got a sandboxClient, but its tools are not sandboxed and no SandboxToolFactory is bound: Bash, Read, Write and Edit run on this host. ' +
          'Compose the built-in tools with builtinTools() (it binds the factory, so each session with a sandboxClient gets sandboxed tools), ' +
          'or with builtinTools({ sandbox: { client } }) to sandbox every session of the kernel.',
      });
    }
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

  private async createSession(kernel: Kernel): Promise<Session> {
    const options = this.options;
    const cwd = options.cwd ?? process.cwd();
    const store = kernel.getOptional(SessionStore);
    let record: ISessionRecord | undefined;
    if (options.resumeSessionId !== undefined) {
      record = await store?.load(options.resumeSessionId);
      if (!record) throw new ResumeSessionNotFoundError(options.resumeSessionId);
      // A folder given with the id must be the session's own (an id alone resumes it where it was).
      if (options.cwd !== undefined && typeof record.cwd === 'string' && resolvePath(record.cwd) !== resolvePath(options.cwd)) {
        throw new ResumeSessionCwdMismatchError(options.resumeSessionId, record.cwd, options.cwd);
      }
    } else if (options.continueMostRecent) {
      const newest = (await listStored(store)).find((stored) => stored.cwd === cwd);
      record = newest === undefined ? undefined : await store!.load(newest.id);
    }
    const fork = record !== undefined && options.forkSession === true;

    // Built first: a client the tools cannot use is refused before the sandbox is restored or hydrated.
    const sandboxed = this.sandboxTools(kernel);
    // A snapshot restores the sandbox as it was; a fresh manifest would overwrite it.
    let restored = false;
    const snapshotId = record?.sandboxSnapshotId;
    if (record && !fork && typeof snapshotId === 'string' && options.sandboxClient?.restore) {
      await options.sandboxClient.restore(snapshotId);
      restored = true;
    }
    if (!restored && options.workspaceManifest !== undefined && options.sandboxClient) {
      if (!options.applyWorkspaceManifest) {
        throw new TesseraError('workspaceManifest needs applyWorkspaceManifest (e.g. from @tessera/plugin-tools) to apply it.', {
          code: 'invalid_interactive_options',
          category: 'configuration',
          recoverable: false,
        });
      }
      await options.applyWorkspaceManifest(options.sandboxClient, options.workspaceManifest, cwd);
    }

    // copyWith, not spreads followed by fields: Node 20 adds those slowly (docs/adr/0003).
    const own = options.sessionOptions;
    const base: KernelSessionOptions = copyWith(own ?? {}, {
      toolSources: [...(own?.toolSources ?? []), this.commandToolSource],
      ...(sandboxed
        ? {
            replaceTools: [...(own?.replaceTools ?? []), ...sandboxed.tools],
            serviceOverrides: [...(own?.serviceOverrides ?? []), ...sandboxed.services],
            removeTools: [...(own?.removeTools ?? []), ...(sandboxed.removeTools ?? [])],
          }
        : {}),
      ...(options.provider ? { provider: options.provider } : {}),
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.permissionMode === undefined ? {} : { permissionMode: options.permissionMode }),
    });
    // The context files' "Compact Instructions" are kept in the record, so a resumed or forked
    // session compacts by them without building its prompt again.
    const storedCompact = typeof record?.[COMPACT_FIELD] === 'string' ? (record[COMPACT_FIELD] as string) : undefined;
    if (record && !fork) {
      const given = options.systemPrompt ?? record.systemPrompt;
      const systemMessage = given === undefined ? options.appendSystemPrompt : this.withAppended(given);
      const resumed = copyWith(base, { ...(systemMessage === undefined ? {} : { systemMessage }), ...(storedCompact === undefined ? {} : { compactInstructions: storedCompact }) });
      return kernel.resumeSession(record, resumed);
    }
    const system = await this.systemPrompt(kernel, record?.cwd ?? cwd, record);
    const compactInstructions = system.compactInstructions ?? storedCompact;
    const recordFields = { ...(options.name === undefined ? {} : { name: options.name }), ...(compactInstructions === undefined ? {} : { [COMPACT_FIELD]: compactInstructions }) };
    return kernel.createSession(copyWith(base, {
      cwd: record?.cwd ?? cwd,
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
      ...(system.prompt === undefined ? {} : { systemMessage: system.prompt }),
      ...(compactInstructions === undefined ? {} : { compactInstructions }),
      ...(fork ? { history: record!.history, startSource: 'resume' as const } : {}),
      recordFields,
    }));
  }

  /**
   * This session's sandboxed Bash, Read, Write and Edit, the services they need and the host
   * tools it no longer offers (BashOutput, KillShell), when a
   * `sandboxClient` is given, the kernel's tools are not sandboxed kernel-wide (no `SandboxPaths`
   * bound) and a `SandboxToolFactory` is bound. Resume and fork get them too (same options).
   */
  private sandboxTools(kernel: Kernel): SandboxToolSet | undefined {
    const client = this.options.sandboxClient;
    if (!client || kernel.getOptional(SandboxPaths)) return undefined;
    const factory = kernel.getOptional(SandboxToolFactory);
    return factory?.create({ client, ...(this.options.sandboxRoot === undefined ? {} : { root: this.options.sandboxRoot }) });
  }

  /**
   * `prompt` with `appendSystemPrompt` after it (as the builder joins sections). A stored prompt
   * that already ends with it (a session resumed with the same flag again) gets it once.
   */
  private withAppended(prompt: string): string {
    const append = this.options.appendSystemPrompt?.trim();
    return append === undefined || append === '' || prompt.trimEnd().endsWith(append) ? prompt : `${prompt}\n\n${append}`;
  }

  private async systemPrompt(kernel: Kernel, cwd: string, record: ISessionRecord | undefined): Promise<{ prompt?: string; compactInstructions?: string }> {
    if (this.options.systemPrompt !== undefined) return { prompt: this.withAppended(this.options.systemPrompt) };
    if (record?.systemPrompt !== undefined) return { prompt: this.withAppended(record.systemPrompt) };
    const builder = kernel.getOptional(SystemPromptBuilder);
    if (!builder) return this.options.appendSystemPrompt === undefined ? {} : { prompt: this.options.appendSystemPrompt };
    const services: SessionServices = new ContainerSessionServices(kernel.container);
    const built = await builder.build({
      cwd,
      services,
      ...(this.options.sessionId === undefined ? {} : { sessionId: this.options.sessionId }),
      ...(this.options.model === undefined ? {} : { model: this.options.model }),
      ...(this.options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: this.options.appendSystemPrompt }),
    });
    return { prompt: built.prompt, ...(built.compactInstructions === undefined ? {} : { compactInstructions: built.compactInstructions }) };
  }

  /**
   * Stored sessions of `cwd` (all when omitted), newest first, for a picker: id, name, first
   * prompt, updated time and message count.
   */
  static async listResumableSessions(kernel: Kernel, cwd?: string): Promise<IResumableSession[]> {
    const records = await listStored(kernel.getOptional(SessionStore));
    return records
      .filter((record) => cwd === undefined || record.cwd === cwd)
      .map((record) => ({
        id: record.id,
        ...(typeof record.name === 'string' ? { name: record.name } : {}),
        cwd: record.cwd,
        firstPrompt: firstPromptOf(record),
        updatedAt: record.updatedAt,
        messageCount: record.messages.length,
      }));
  }
}

async function listStored(store: SessionStore | undefined): Promise<ISessionRecord[]> {
  if (!store) return [];
  const records = await store.list();
  return [...records].sort((a, b) => compareText(b.updatedAt, a.updatedAt));
}

/** The first prompt as the user typed it (`/audit src`, not the skill body the model got), for pickers. */
function firstPromptOf(record: ISessionRecord): string {
  const messages = record.history.length > 0 ? displayedTimeline(record.history).filter(isChatEntry).map((entry) => entry.data) : record.messages;
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const text = userText(message);
    if (text !== '') return text.split('\n', 1)[0]!.slice(0, 200);
  }
  return '';
}

/**
 * The timeline as shown: user prompts without model-only context, and a prompt's display text
 * (`/audit src`) in place of the prompt the model got. A `prompt-display` event (made when its
 * turn ended) names its prompt's user entry by how many chat entries back it stands.
 */
function displayedTimeline(entries: readonly IHistoryEntry[]): IHistoryEntry[] {
  const shown = entries.map(displayEntry);
  let chat: number[] | undefined;
  for (let index = 0; index < entries.length; index += 1) {
    const entry = entries[index]!;
    if (entry.category === 'chat') {
      (chat ??= []).push(index);
      continue;
    }
    if (entry.type !== 'prompt-display') continue;
    const data = entry.data as { displayInput?: unknown; chatBack?: unknown; promptHead?: unknown } | undefined;
    if (typeof data?.displayInput !== 'string' || typeof data.chatBack !== 'number' || chat === undefined) continue;
    const target = chat[chat.length - data.chatBack];
    const user = target === undefined ? undefined : shown[target];
    // Only the entry holding that prompt (a resumed file may have dropped its turn behind a compaction summary).
    if (user === undefined || !isChatEntry(user) || user.data.role !== 'user') continue;
    if (typeof data.promptHead === 'string' && !userText(user.data).includes(data.promptHead)) continue;
    shown[target!] = { ...user, data: { ...user.data, content: data.displayInput } as Message };
  }
  return shown;
}

const REMINDER = /^<system-reminder>[\s\S]*<\/system-reminder>$/;

/** The user's own words: text blocks that are not model-only context. */
function userText(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((block): block is { type: 'text'; text: string } => block.type === 'text' && !REMINDER.test((block as { text: string }).text.trim()))
    .map((block) => block.text)
    .join('\n');
}

/** How much of a prompt a `prompt-display` event keeps, to recognise its user entry. */
const PROMPT_HEAD_CHARS = 80;

/** A timeline entry as shown: user prompts without `<system-reminder>` context blocks. */
function displayEntry(entry: IHistoryEntry): IHistoryEntry {
  if (!isChatEntry(entry) || entry.data.role !== 'user' || typeof entry.data.content === 'string') return entry;
  const content = entry.data.content;
  const kept = content.filter((block) => !(block.type === 'text' && REMINDER.test(block.text.trim())));
  if (kept.length === content.length) return entry;
  return { ...entry, data: { ...entry.data, content: kept } as Message };
}

function codeData(error: unknown): { data?: { code: string } } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? { data: { code } } : {};
}

function codeOf(error: unknown): { code?: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? { code } : {};
}

function skillMessage(event: ISkillActivationEvent): string {
  return `Skill ${event.qualifiedName ?? event.skillName} ${event.status}${event.error ? `: ${event.error}` : ''}`;
}
