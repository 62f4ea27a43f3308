import {
  createAbortError,
  describeError,
  type ISession,
  type Provider,
  type IContextWindowState,
  type Tool,
  type ToolSchema,
  type ToolSource,
} from '@tessera/contracts';
import { CompactionUnavailableError, SessionBusyError, SessionClosedError, SessionConfigurationError } from './errors.js';
import { callbackAdapter } from './session-callbacks.js';
import type {
  ISessionShutdownOptions,
  RunOptions,
  SessionOptions,
  TAutoCompactThreshold,
} from './session-options.js';
import { SessionState } from './session-state.js';
import { runTurn } from './turn.js';

const DEFAULT_AUTO_COMPACT_THRESHOLD = 0.835;

/**
 * The run loop: provider round → tool calls → tool results → next round, with abort,
 * error recovery, round cap, provider idle timeout and history. Hooks fire in the order of
 * the turn data flow, so policy (permissions, Claude hooks, logging, compaction) is tapped
 * in by plugins rather than built in here.
 */
export class Session extends SessionState implements ISession {
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
  private autoCompactThreshold: TAutoCompactThreshold;
  private completedRuns = 0;
  private activeRun: Promise<unknown> | undefined;
  private closing: Promise<void> | undefined;
  private readonly started: Promise<void>;

  constructor(options: SessionOptions) {
    super(options);
    this.autoCompactThreshold = options.autoCompactThreshold ?? DEFAULT_AUTO_COMPACT_THRESHOLD;
    this.provider = options.provider;
    this.model = options.model;

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
}

function schemasOf(tools: ReadonlyMap<string, Tool>): ToolSchema[] {
  return [...tools.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
}
