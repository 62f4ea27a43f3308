import { randomUUID } from 'node:crypto';
import {
  describeError,
  messageToHistoryEntry,
  noSessionServices,
  systemClock,
  type Clock,
  type ContextWindow,
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
  type ToolSchema,
  copyWith,
} from '@tessera/contracts';
import { PermissionModeNotAllowedError, SessionBusyError, SessionConfigurationError } from './errors.js';
import { createHooks, forkHooks, isTapped, type TesseraHooks } from './hooks.js';
import { callbackAdapter } from './session-callbacks.js';
import type { SessionOptions } from './session-options.js';
import { validateOptions } from './session-validation.js';

/**
 * What a `Session` holds apart from its run loop: identity, event listeners, history, permission
 * mode, and the record it saves. `Session` extends it and adds runs, tools, model and lifecycle;
 * use `Session`.
 */
export abstract class SessionState implements ISession {
  readonly sessionId: string;
  readonly cwd: string;
  private currentHooks: TesseraHooks;
  readonly clock: Clock;
  readonly services: SessionServices;
  /** @internal — read by the turn runner. */
  readonly options: SessionOptions;

  private readonly entries: IHistoryEntry[] = [];
  /** @internal — the chat messages of `entries`, in order. */
  protected readonly messages: Message[] = [];
  private readonly createdAt: string;
  /** Extra record fields (`name`, `sandboxSnapshotId`…), saved with the record. */
  private readonly recordFields: Record<string, unknown>;
  /** @internal */
  protected systemMessage: string | undefined;
  private permissionMode: PermissionMode;
  /** The running `run()`'s (or `compact()`'s) controller; set while one is active. @internal */
  protected controller: AbortController | undefined;
  /** Subscribers; replaced (never mutated) on change so `emit` can iterate without copying. @internal */
  protected listeners: readonly SessionEventListener[] = [];

  /** @internal — the tools of the current round, as sent to the model (kept by `Session`). */
  abstract toolSchemas: readonly ToolSchema[];

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
    this.createdAt = options.createdAt ?? new Date(this.clock.now()).toISOString();
    this.recordFields = { ...options.recordFields };
    this.systemMessage = options.systemMessage;
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

  /** @internal */
  protected addListener(listener: SessionEventListener): () => void {
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

  /** @internal */
  protected resetHistory(reason: 'clear' | 'compact'): void {
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

  /** @internal */
  protected async persist(): Promise<void> {
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
