import { randomUUID } from 'node:crypto';
import {
  createAbortError,
  describeError,
  messageToHistoryEntry,
  noSessionServices,
  systemClock,
  type Clock,
  type ContextWindow,
  type Provider,
  type IContextWindowState,
  type IHistoryEntry,
  type ISession,
  type ISessionRecord,
  type SessionRecordChange,
  type Message,
  type PermissionMode,
  type SessionEvent,
  type SessionEventListener,
  type SessionLogData,
  type SessionServices,
  type Tool,
  type ToolSchema,
  type ToolSource,
  copyWith,
} from '@tessera/contracts';
import { CompactionUnavailableError, PermissionModeNotAllowedError, SessionBusyError, SessionClosedError, SessionConfigurationError } from './errors.js';
import { createHooks, forkHooks, isTapped, type TesseraHooks } from './hooks.js';
import type {
  ISessionShutdownOptions,
  RunOptions,
  SessionOptions,
  TAutoCompactThreshold,
} from './session-options.js';
import { runTurn } from './turn.js';

const DEFAULT_AUTO_COMPACT_THRESHOLD = 0.835;

/**
 * The run loop: provider round → tool calls → tool results → next round, with abort,
 * error recovery, round cap, provider idle timeout and history. Hooks fire in the order of
 * the turn data flow, so policy (permissions, Claude hooks, logging, compaction) is tapped
 * in by plugins rather than built in here.
 */
export class Session implements ISession {
  readonly sessionId: string;
  readonly cwd: string;
  private currentHooks: TesseraHooks;
  readonly clock: Clock;
  readonly services: SessionServices;
  /** @internal — read by the turn runner. */
  readonly options: SessionOptions;
  /** @internal — the tools of the current round (static tools, then tool sources'). */
  toolsByName: ReadonlyMap<string, Tool>;
  /** @internal */
  toolSchemas: readonly ToolSchema[];
  private readonly staticTools: ReadonlyMap<string, Tool>;
  /** True until the sources have answered, and again after one signals a change. @internal */
  toolSourcesStale: boolean;
  private readonly toolSourceTools = new Map<ToolSource, readonly Tool[]>();
  /** `options.toolSources`, then the sources added with `addToolSource`. */
  private readonly toolSources: ToolSource[];
  private readonly toolSourceUnsubscribes: Array<() => void> = [];

  private provider: Provider;
  private model: string | undefined;
  private readonly entries: IHistoryEntry[] = [];
  private readonly messages: Message[] = [];
  private readonly createdAt: string;
  /** Extra record fields (`name`, `sandboxSnapshotId`…), saved with the record. */
  private readonly recordFields: Record<string, unknown>;
  private systemMessage: string | undefined;
  private permissionMode: PermissionMode;
  private autoCompactThreshold: TAutoCompactThreshold;
  private completedRuns = 0;
  private controller: AbortController | undefined;
  private activeRun: Promise<unknown> | undefined;
  private closing: Promise<void> | undefined;
  private readonly started: Promise<void>;
  /** Subscribers; replaced (never mutated) on change so `emit` can iterate without copying. */
  private listeners: readonly SessionEventListener[] = [];

  constructor(options: SessionOptions) {
    validateOptions(options);
    this.options = options;
    this.sessionId = options.sessionId ?? randomUUID();
    this.cwd = options.cwd ?? process.cwd();
    this.currentHooks = options.hooks ?? createHooks();
    this.clock = options.clock ?? systemClock;
    this.services = options.services ?? noSessionServices;
    const adapter = callbackAdapter(options);
    if (adapter) this.listeners = [adapter];
    if (options.onTextDelta) this.deltaCallbacks = [options.onTextDelta];
    this.permissionMode = options.permissionMode ?? 'default';
    this.autoCompactThreshold = options.autoCompactThreshold ?? DEFAULT_AUTO_COMPACT_THRESHOLD;
    this.createdAt = options.createdAt ?? new Date(this.clock.now()).toISOString();
    this.recordFields = { ...options.recordFields };
    this.systemMessage = options.systemMessage;
    this.provider = options.provider;
    this.model = options.model;
    this.contextWindow = options.contextWindow;
    // A resumed session starts from its stored history; no hook fires for entries already kept.
    const history = options.history;
    if (history !== undefined && history.length > 0) {
      // One copy and an indexed loop: a resumed history can hold tens of thousands of entries.
      this.entries = history.slice();
      for (let index = 0; index < history.length; index += 1) {
        const entry = history[index]!;
        if (entry.category === 'chat') this.messages.push(entry.data as Message);
      }
      this.contextWindow?.updateFromHistory(this.messages);
    }
    // A resumed history is already stored.
    this.savedEntries = this.entries.length;
    this.unsaved = options.history === undefined;

    const tools = new Map<string, Tool>();
    for (const tool of options.tools ?? []) {
      if (tools.has(tool.name)) {
        throw new SessionConfigurationError('tools', `two tools are named "${tool.name}"; tool names must be unique.`);
      }
      tools.set(tool.name, tool);
    }
    this.staticTools = tools;
    this.toolsByName = tools;
    this.toolSchemas = schemasOf(tools);
    this.toolSources = [...(options.toolSources ?? [])];
    this.toolSourcesStale = this.toolSources.length > 0;
    for (const source of this.toolSources) {
      const unsubscribe = source.onChange?.(() => {
        this.toolSourcesStale = true;
      });
      if (unsubscribe) this.toolSourceUnsubscribes.push(unsubscribe);
    }

    if (options.sessionLogger) this.log('session_init', {
      systemPrompt: options.systemMessage ?? '',
      systemPromptLength: options.systemMessage?.length ?? 0,
      provider: options.provider.name,
      model: options.model ?? options.provider.model ?? null,
      resumedEntries: options.history?.length ?? 0,
      cwd: this.cwd,
      toolSchemas: this.toolSchemas,
    });
    // sessionStart runs once; run() waits for it, so its output can never race the first turn.
    this.started = this.hooks.sessionStart
      .promise({ session: this, source: options.startSource ?? 'startup' })
      .catch((error: unknown) => this.log('error', { phase: 'sessionStart', error: describeError(error) }));
  }

  /** Sends a message and resolves with the final assistant text of the turn. */
  async run(message: string, runOptions: RunOptions = {}): Promise<string> {
    if (this.closing) throw new SessionClosedError(this.sessionId);
    if (this.controller) throw new SessionBusyError(this.sessionId);
    const controller = new AbortController();
    this.controller = controller;
    const external = runOptions.signal;
    const forwardAbort = (): void => controller.abort(external?.reason);
    if (external?.aborted) controller.abort(external.reason);
    else external?.addEventListener('abort', forwardAbort, { once: true });

    const runAdapter = callbackAdapter(runOptions);
    const unsubscribeRun = runAdapter ? this.addListener(runAdapter) : undefined;
    const runDelta = runOptions.onTextDelta;
    if (runDelta) this.deltaCallbacks = [...this.deltaCallbacks, runDelta];
    const turn = (async () => {
      await this.started;
      try {
        if (this.listeners.length > 0) this.emit({ type: 'turn_start', prompt: message });
        const text = await runTurn(this, message, controller.signal, runOptions.rawPrompt, runOptions.content);
        // The turn runner returns normally on abort; this check is the one source of AbortError.
        if (controller.signal.aborted) throw createAbortError();
        this.completedRuns += 1;
        if (this.listeners.length > 0) this.emit({ type: 'turn_end', text, rounds: this.lastRounds });
        return text;
      } catch (error) {
        if (controller.signal.aborted) {
          if (this.listeners.length > 0) this.emit({ type: 'interrupted' });
          throw createAbortError();
        }
        const code = (error as { code?: string }).code;
        if (this.listeners.length > 0) this.emit({ type: 'error', message: describeError(error), ...(typeof code === 'string' ? { code } : {}) });
        this.log('error', { phase: 'run', error: describeError(error), code: code ?? null });
        await this.hooks.stopFailure
          .promise({ session: this, error, reason: describeError(error) })
          .catch((hookError: unknown) => this.log('error', { phase: 'stopFailure', error: describeError(hookError) }));
        throw error;
      } finally {
        external?.removeEventListener('abort', forwardAbort);
        await this.persist();
        unsubscribeRun?.();
        if (runDelta) this.deltaCallbacks = this.deltaCallbacks.filter((callback) => callback !== runDelta);
      }
    })();
    this.activeRun = turn;
    try {
      return await turn;
    } finally {
      this.controller = undefined;
      this.activeRun = undefined;
    }
  }

  /**
   * Listens to this session's events (see `SessionEvent`) until the returned function is
   * called. A listener that throws is reported in the session log and never breaks the run.
   * With no listeners, emitting costs a length check.
   */
  subscribe(listener: SessionEventListener): () => void {
    this.subscribers += 1;
    const remove = this.addListener(listener);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.subscribers -= 1;
      remove();
    };
  }

  /**
   * Adds a listener that, unlike `subscribe`, does not make `text_delta` events exist: text
   * chunks, the hottest events, are built only while a `subscribe` listener is there, and then
   * reach every listener. An observer takes its text from `run({ onTextDelta })` (the direct
   * path, as the interactive facade does) and ignores `text_delta`. Returns the unsubscribe
   * function. With `contextUpdates`, the observer gets `context_update` events only while that
   * gate is open: a facade that passes them on only when someone listens spares the session two
   * event objects per round. @internal
   */
  observe(listener: SessionEventListener, options: { contextUpdates?: () => boolean } = {}): () => void {
    const gate = options.contextUpdates;
    if (gate === undefined) return this.addListener(listener);
    this.contextGates = [...this.contextGates, gate];
    const remove = this.addListener(listener);
    let observing = true;
    return () => {
      if (!observing) return;
      observing = false;
      this.contextGates = this.contextGates.filter((candidate) => candidate !== gate);
      remove();
    };
  }

  /** Gates of observers that take `context_update` only when asked (see `observe`). */
  private contextGates: ReadonlyArray<() => boolean> = [];

  /** Whether a listener takes `context_update` now: any ungated one, or a gated one whose gate is open. */
  private wantsContextUpdates(): boolean {
    if (this.listeners.length > this.contextGates.length) return true;
    for (const gate of this.contextGates) if (gate()) return true;
    return false;
  }

  private addListener(listener: SessionEventListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((candidate) => candidate !== listener);
    };
  }

  /** Whether anything listens (checked before building an event on hot paths). @internal */
  hasListeners(): boolean {
    return this.listeners.length > 0;
  }

  /**
   * `onTextDelta` callbacks (the session's and the running `run()`'s), called directly: the
   * hottest path skips building an event for them. `text_delta` events go out only when a
   * `subscribe` listener exists. @internal
   */
  deltaCallbacks: ReadonlyArray<(delta: string) => void> = [];
  /** Listeners added with `subscribe` (not the callback adapters). @internal */
  subscribers = 0;

  /** @internal — the turn runner's single way out for events. */
  emit(event: SessionEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.log('error', { phase: 'subscriber', event: event.type, error: describeError(error) });
      }
    }
  }

  /**
   * Adds a tool source to this session after its creation (a facade that adopts a session made
   * elsewhere adds its own, as `InteractiveSession` does for command tools). Its tools join from
   * the next model call on. Returns a function that removes the source and its tools again.
   */
  addToolSource(source: ToolSource): () => void {
    if (this.toolSources.includes(source)) throw new TypeError(`tool source "${source.name}" is already added to this session.`);
    this.toolSources.push(source);
    this.toolSourcesStale = true;
    const unsubscribe = source.onChange?.(() => {
      this.toolSourcesStale = true;
    });
    if (unsubscribe) this.toolSourceUnsubscribes.push(unsubscribe);
    return () => {
      const index = this.toolSources.indexOf(source);
      if (index === -1) return;
      this.toolSources.splice(index, 1);
      if (unsubscribe) {
        unsubscribe();
        const at = this.toolSourceUnsubscribes.indexOf(unsubscribe);
        if (at !== -1) this.toolSourceUnsubscribes.splice(at, 1);
      }
      this.toolSourceTools.delete(source);
      // Rebuilt before the next model call, without the removed source's tools.
      this.toolSourcesStale = true;
    };
  }

  /**
   * Asks the tool sources again when one signalled a change (or never answered yet). The turn
   * runner calls this before every model call, so tools change between rounds only. A source
   * that throws keeps its previous tools, and a source tool whose name is taken is skipped;
   * both are logged. @internal
   */
  async refreshTools(): Promise<void> {
    if (!this.toolSourcesStale) return;
    this.toolSourcesStale = false;
    for (const source of this.toolSources) {
      try {
        this.toolSourceTools.set(source, await source.tools(this));
      } catch (error) {
        this.log('error', { phase: 'toolSource', source: source.name, error: describeError(error) });
      }
    }
    const tools = new Map(this.staticTools);
    for (const [source, list] of this.toolSourceTools) {
      for (const tool of list) {
        if (tools.has(tool.name)) {
          this.log('error', { phase: 'toolSource', source: source.name, error: `tool "${tool.name}" is already defined; this one is skipped` });
          continue;
        }
        tools.set(tool.name, tool);
      }
    }
    this.toolsByName = tools;
    this.toolSchemas = schemasOf(tools);
  }

  /** Rounds of the last `run()`, for `turn_end`. @internal */
  lastRounds = 0;

  /** Cancels the running `run()`; it then rejects with an `AbortError`. No-op when idle. */
  abort(): void {
    this.controller?.abort();
  }

  /** True while a `run()` is in progress. */
  isRunning(): boolean {
    return this.controller !== undefined;
  }

  /** The session id (same as `sessionId`). */
  getSessionId(): string {
    return this.sessionId;
  }

  /** Number of completed `run()` calls. */
  getMessageCount(): number {
    return this.completedRuns;
  }

  /** The hooks this session runs: the kernel's, or its own copy once `localHooks()` was called. */
  get hooks(): TesseraHooks {
    return this.currentHooks;
  }

  /**
   * Hooks for this session alone. The first call gives the session its own copy of the
   * kernel's hooks, holding every kernel tap; taps added to it run for this session only (a
   * server's per-connection approval, a test's interceptor), so no kernel-wide tap has to
   * filter by session id. Sessions that never call this share the kernel's compiled hooks.
   */
  localHooks(): TesseraHooks {
    if (!this.ownHooks) {
      this.ownHooks = true;
      this.currentHooks = forkHooks(this.currentHooks);
    }
    return this.currentHooks;
  }

  private ownHooks = false;

  /** The provider the next model call goes to. */
  getProvider(): Provider {
    return this.provider;
  }

  /** The model the next call uses: the session's choice, else the provider's default. */
  getModel(): string | undefined {
    return this.model ?? this.provider.model;
  }

  /** The model the session asks for by name (undefined: let the provider choose). @internal */
  requestedModel(): string | undefined {
    return this.model;
  }

  /**
   * Switches the model — and, optionally, the provider — for the calls that follow. History
   * is kept. Not while a run is active (`SessionBusyError`). The context-window tracker is
   * rebuilt for the new model when the session knows how (`createContextWindow`).
   */
  setModel(model: string | undefined, options: { provider?: Provider } = {}): void {
    if (this.controller) throw new SessionBusyError(this.sessionId);
    if (options.provider !== undefined) {
      if (typeof options.provider.stream !== 'function') {
        throw new SessionConfigurationError('provider', 'a Provider with a stream() method is required.');
      }
      this.provider = options.provider;
    }
    this.model = model;
    const rebuilt = this.options.createContextWindow?.(this.getModel());
    if (rebuilt) {
      this.contextWindow = rebuilt;
      this.emitContextUpdate(rebuilt.updateFromHistory(this.messages));
    }
    this.log('model_change', { provider: this.provider.name, model: this.getModel() ?? null });
  }

  /** @internal — read by the turn runner. */
  contextWindow: ContextWindow | undefined;

  /** The permission mode tool calls are judged in now (default `default`). */
  getPermissionMode(): PermissionMode {
    return this.permissionMode;
  }

  /**
   * Changes the permission mode; it applies from the next tool call, even within a running turn.
   * Throws `PermissionModeNotAllowedError` for a mode outside `limitPermissionModes`.
   */
  setPermissionMode(mode: PermissionMode): void {
    if (this.allowedModes !== undefined && !this.allowedModes.includes(mode)) throw new PermissionModeNotAllowedError(mode, this.allowedModes);
    this.permissionMode = mode;
  }

  /** Modes `setPermissionMode` accepts; `undefined` while unlimited. */
  private allowedModes: readonly PermissionMode[] | undefined;

  /**
   * Limits the modes `setPermissionMode` accepts from now on, whoever asks (a command, a
   * protocol's mode switch, an embedder): a host that refuses `bypassPermissions` to its clients
   * sets this once per session. A current mode outside the list falls back to `default`.
   */
  limitPermissionModes(modes: readonly PermissionMode[]): void {
    if (!modes.includes('default')) throw new SessionConfigurationError('permissionModes', 'the modes given to limitPermissionModes must include "default" (the mode a session falls back to).');
    this.allowedModes = [...modes];
    if (!this.allowedModes.includes(this.permissionMode)) this.permissionMode = 'default';
  }

  /** Whether `setPermissionMode(mode)` would be accepted. */
  allowsPermissionMode(mode: PermissionMode): boolean {
    return this.allowedModes === undefined || this.allowedModes.includes(mode);
  }

  /** Chat messages only, in order. The array is the live history: do not mutate it. */
  getHistory(): readonly Message[] {
    return this.messages;
  }

  /** Chat and event entries. */
  getFullHistory(): readonly IHistoryEntry[] {
    return this.entries;
  }

  /**
   * Appends an entry (a chat entry also joins the conversation) and fires `historyAppend`; a
   * tap that throws is logged, not rethrown. Saved with the next save.
   */
  addHistoryEntry(entry: IHistoryEntry): void {
    this.entries.push(entry);
    if (entry.category === 'chat') this.messages.push(entry.data as Message);
    if (isTapped(this.hooks.historyAppend)) {
      // A notification: the entry is already in history, so a failing tap is reported, not thrown.
      try {
        this.hooks.historyAppend.call({ session: this, entry });
      } catch (error) {
        this.log('error', { phase: 'historyAppend', error: describeError(error) });
      }
    }
  }

  /** Adds a message without asking the model (context restore on resume). */
  injectMessage(role: 'user' | 'assistant' | 'system', content: string): void {
    const message: Message =
      role === 'assistant'
        ? { role, content: [{ type: 'text', text: content }], state: 'complete' }
        : { role, content };
    this.appendMessage(message);
  }

  /** Empties the history and the context estimate, and fires `historyReset` with reason `clear`. */
  clearHistory(): void {
    this.resetHistory('clear');
  }

  /**
   * Keeps the first `keep` history entries and drops the rest (a conversation rewind to before
   * a prompt). The next save rewrites the stored history; the context estimate starts over.
   */
  truncateHistory(keep: number): void {
    if (!Number.isInteger(keep) || keep < 0) throw new RangeError(`truncateHistory: keep must be a non-negative integer, got ${keep}`);
    if (keep >= this.entries.length) return;
    this.historyRewritten = true;
    this.entries.length = keep;
    this.messages.length = 0;
    for (const entry of this.entries) if (entry.category === 'chat') this.messages.push(entry.data as Message);
    this.contextWindow?.reset();
  }

  private resetHistory(reason: 'clear' | 'compact'): void {
    this.historyRewritten = true;
    this.entries.length = 0;
    this.messages.length = 0;
    this.contextWindow?.reset();
    if (isTapped(this.hooks.historyReset)) {
      try {
        this.hooks.historyReset.call({ session: this, reason });
      } catch (error) {
        this.log('error', { phase: 'historyReset', error: describeError(error) });
      }
    }
  }

  /** Context-window usage as of the last update; `undefined` when the session has no tracker. */
  getContextState(): IContextWindowState | undefined {
    return this.contextWindow?.getState();
  }

  /** The fraction of the window that triggers auto-compaction (default 0.835), or `false` when it is off. */
  getAutoCompactThreshold(): TAutoCompactThreshold {
    return this.autoCompactThreshold;
  }

  /** Sets the auto-compaction threshold, a fraction in (0, 1], or `false` to turn it off; throws `SessionConfigurationError` otherwise. */
  setAutoCompactThreshold(threshold: TAutoCompactThreshold): void {
    if (threshold !== false && !(threshold > 0 && threshold <= 1)) {
      throw new SessionConfigurationError('autoCompactThreshold', `expected a fraction in (0, 1] or false, got ${String(threshold)}.`);
    }
    this.autoCompactThreshold = threshold;
  }

  /**
   * Replaces the conversation with a summary. The system prompt is kept (it is sent
   * separately); a failed summary leaves history untouched and rethrows.
   */
  async compact(instructions?: string, trigger: 'manual' | 'auto' = 'manual', signal?: AbortSignal): Promise<void> {
    const compaction = this.options.compaction;
    if (!compaction) throw new CompactionUnavailableError();
    const conversation = this.messages.filter((message) => message.role !== 'system');
    if (conversation.length === 0) return;
    if (!signal && this.controller) throw new SessionBusyError(this.sessionId);
    const ownController = signal ? undefined : new AbortController();
    if (ownController) this.controller = ownController;
    try {
      const resolvedInstructions = instructions ?? this.options.compactInstructions;
      const before = this.getContextState();
      await this.hooks.preCompact.promise({ session: this, trigger, instructions: resolvedInstructions });
      const { summary } = await compaction.compact({
        messages: conversation,
        systemMessage: this.systemMessage,
        instructions: resolvedInstructions,
        trigger,
        signal: signal ?? ownController!.signal,
        provider: this.provider,
        ...(this.getModel() === undefined ? {} : { model: this.getModel() }),
      });
      if ((signal ?? ownController!.signal).aborted) throw createAbortError();
      const kept = this.messages.filter((message) => message.role === 'system');
      this.resetHistory('compact');
      for (const message of kept) this.appendMessage(message);
      this.injectMessage('assistant', `[Context Summary] ${summary}`);
      const after = this.contextWindow?.updateFromHistory(this.messages);
      if (after) this.emitContextUpdate(after);
      // History is already replaced: a failing postCompact tap is reported, not thrown.
      await this.hooks.postCompact
        .promise({ session: this, trigger, instructions: resolvedInstructions, summary })
        .catch((error: unknown) => this.log('error', { phase: 'postCompact', error: describeError(error) }));
      if (this.listeners.length > 0) this.emit({ type: 'compact', trigger, summary, before, after });
      this.log('context_compact', { trigger, before: before ?? null, after: after ?? null });
    } finally {
      if (ownController && this.controller === ownController) this.controller = undefined;
    }
  }

  /**
   * Aborts active work, persists, logs and fires `sessionEnd` exactly once. Idempotent:
   * every call returns the same promise.
   */
  shutdown(options: ISessionShutdownOptions = {}): Promise<void> {
    this.closing ??= (async () => {
      const reason = options.reason ?? 'other';
      for (const unsubscribe of this.toolSourceUnsubscribes.splice(0)) unsubscribe();
      this.log('session_shutdown', { reason });
      this.abort();
      await this.activeRun?.catch(() => undefined);
      await this.started;
      await this.persist();
      await this.hooks.sessionEnd.promise({ session: this, reason }).catch((error: unknown) =>
        this.log('error', { phase: 'sessionEnd', error: describeError(error) }),
      );
      // A long-lived host (a server) opens thousands of sessions: the store lets go of this one.
      await Promise.resolve(this.options.sessionStore?.release?.(this.sessionId)).catch((error: unknown) => this.log('error', { phase: 'releaseStore', error: describeError(error) }));
      await this.options.sessionLogger?.flush?.();
      await this.services.dispose?.().catch((error: unknown) => this.log('error', { phase: 'releaseServices', error: describeError(error) }));
    })();
    return this.closing;
  }

  /** @internal */
  appendMessage(message: Message): void {
    this.addHistoryEntry(messageToHistoryEntry(message, { id: randomUUID(), timestamp: this.timestamp() }));
  }

  private lastStampMs = Number.NaN;
  private lastStamp = '';

  /** ISO time of now; formatting costs ~0.5 µs, so entries made in the same millisecond share it. */
  private timestamp(): string {
    const now = this.clock.now();
    if (now !== this.lastStampMs) {
      this.lastStampMs = now;
      this.lastStamp = new Date(now).toISOString();
    }
    return this.lastStamp;
  }

  /** @internal */
  emitContextUpdate(state: IContextWindowState): void {
    if (this.listeners.length > 0 && this.wantsContextUpdates()) this.emit({ type: 'context_update', state });
    try {
      if (isTapped(this.hooks.contextUpdate)) this.hooks.contextUpdate.call({ session: this, state });
    } catch (error) {
      this.log('error', { phase: 'contextUpdate', error: describeError(error) });
    }
  }

  /** Writes an event to the session logger, if any. Plugins that log per session use this. */
  log(event: string, data: SessionLogData): void {
    const logger = this.options.sessionLogger;
    if (!logger) return;
    try {
      logger.log(this.sessionId, event, data);
    } catch (error) {
      process.emitWarning(`Session logger failed on "${event}": ${describeError(error)}`, {
        code: 'TESSERA_LOGGER_ERROR',
      });
    }
  }

  /** The system prompt the model is sent (`systemMessage`, or what `setSystemMessage` set since). */
  getSystemMessage(): string | undefined {
    return this.systemMessage;
  }

  /**
   * Replaces the system prompt for the calls that follow (`/language` patches it). History is
   * kept; the new prompt is saved with the record. Not while a run is active (`SessionBusyError`).
   */
  setSystemMessage(message: string | undefined): void {
    if (this.controller) throw new SessionBusyError(this.sessionId);
    this.systemMessage = message;
    this.log('system_prompt_change', { length: message?.length ?? 0 });
  }

  /** The user-facing name, if one was given (`setName`, or the resumed record's). */
  getName(): string | undefined {
    const name = this.recordFields.name;
    return typeof name === 'string' ? name : undefined;
  }

  /** Names the session; saved with the next save (`save()` saves now). */
  setName(name: string): void {
    this.setRecordField('name', name);
  }

  /** Sets (or, with `undefined`, removes) a field kept in the session record. */
  setRecordField(field: string, value: unknown): void {
    if (RESERVED_RECORD_FIELDS.has(field)) throw new TypeError(`"${field}" is a standard session record field and cannot be set this way.`);
    if (value === undefined) delete this.recordFields[field];
    else this.recordFields[field] = value;
  }

  /** A field kept in the session record beside the standard ones; `undefined` when unset. */
  getRecordField(field: string): unknown {
    return this.recordFields[field];
  }

  /** Saves the session to its store now (a no-op without one). A failure is reported as after a run. */
  save(): Promise<void> {
    return this.persist();
  }

  /** A snapshot of this session for a store. */
  toRecord(): ISessionRecord {
    // copyWith, not a spread followed by fields: those are added slowly on Node 20 (docs/adr/0003).
    return copyWith(this.recordFields, {
      id: this.sessionId,
      cwd: this.cwd,
      createdAt: this.createdAt,
      updatedAt: new Date(this.clock.now()).toISOString(),
      messages: [...this.messages],
      history: [...this.entries],
      systemPrompt: this.systemMessage,
      toolSchemas: [...this.toolSchemas],
    });
  }

  /** History entries the store has (after the last successful save), and whether history was replaced since. */
  private savedEntries = 0;
  /** A new session never saved yet (its first save tells the store so). */
  private unsaved = false;
  private historyRewritten = false;

  private async persist(): Promise<void> {
    const store = this.options.sessionStore;
    if (!store) return;
    try {
      const record = this.toRecord();
      const change: SessionRecordChange = { appendedFrom: this.historyRewritten ? 0 : Math.min(this.savedEntries, record.history.length), rewritten: this.historyRewritten };
      if (this.unsaved) change.created = true;
      await store.save(record, change);
      this.savedEntries = record.history.length;
      this.historyRewritten = false;
      this.unsaved = false;
    } catch (error) {
      // The turn's result stands and history stays in memory; the failure is reported, not hidden.
      this.log('error', { phase: 'persist', error: describeError(error) });
      await this.hooks.notification
        .promise({
          session: this,
          notificationType: 'persist_failed',
          message: `Session ${this.sessionId} could not be saved: ${describeError(error)}. History is kept in memory; the next turn retries.`,
        })
        .catch(() => undefined);
    }
  }
}

const RESERVED_RECORD_FIELDS = new Set(['id', 'cwd', 'createdAt', 'updatedAt', 'messages', 'history', 'systemPrompt', 'toolSchemas']);

function schemasOf(tools: ReadonlyMap<string, Tool>): ToolSchema[] {
  return [...tools.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
}

function validateOptions(options: SessionOptions): void {
  if (typeof options?.provider?.stream !== 'function') {
    throw new SessionConfigurationError('provider', 'a Provider with a stream() method is required; add a provider plugin or pass one.');
  }
  const positive = (field: 'maxTurns' | 'providerTimeout' | 'maxStopContinuations', value: number | undefined): void => {
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
      throw new SessionConfigurationError(field, `expected a non-negative number, got ${String(value)}.`);
    }
  };
  positive('maxTurns', options.maxTurns);
  positive('providerTimeout', options.providerTimeout);
  positive('maxStopContinuations', options.maxStopContinuations);
  const threshold = options.autoCompactThreshold;
  if (threshold !== undefined && threshold !== false && !(threshold > 0 && threshold <= 1)) {
    throw new SessionConfigurationError('autoCompactThreshold', `expected a fraction in (0, 1] or false, got ${String(threshold)}.`);
  }
}

/**
 * The pre-stream callbacks (`onTextDelta`, `onToolExecution`, `onContextUpdate`, `onCompact`,
 * `onCompactEvent`) as one listener on the event stream, or undefined when none is set.
 */
function callbackAdapter(callbacks: SessionOptions | RunOptions): SessionEventListener | undefined {
  // `onTextDelta` is not here: the turn runner calls it directly (see `deltaCallbacks`).
  const { onToolExecution } = callbacks;
  const { onContextUpdate, onCompact, onCompactEvent } = callbacks as SessionOptions;
  if (!onToolExecution && !onContextUpdate && !onCompact && !onCompactEvent) return undefined;
  return (event) => {
    switch (event.type) {
      case 'tool_start':
        onToolExecution?.({ type: 'start', toolName: event.toolName, toolArgs: event.input, toolCallId: event.toolCallId });
        return;
      case 'tool_end':
        onToolExecution?.({
          type: 'end',
          toolName: event.toolName,
          toolArgs: event.input,
          toolCallId: event.toolCallId,
          success: event.success,
          ...(event.denied ? { denied: true } : {}),
          ...(event.errorCode === undefined ? {} : { errorCode: event.errorCode }),
          ...(event.data === undefined ? {} : { toolResultData: event.data }),
        });
        return;
      case 'context_update':
        onContextUpdate?.(event.state);
        return;
      case 'compact':
        onCompact?.(event.summary);
        onCompactEvent?.({ trigger: event.trigger, before: event.before, after: event.after });
        return;
      default:
        return;
    }
  };
}
