import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, ApprovalRequest, PermissionMode } from '@tessera/contracts';
import { copyWith } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import { DATA_BACKGROUND, type PermissionAskData, type UIChunk, type UiStreamMapper } from './ui-stream.js';

/** What a client sees of a session. */
export interface SessionSummary {
  id: string;
  name?: string;
  cwd: string;
  createdAt: string;
  running: boolean;
  messageCount: number;
  permissionMode: PermissionMode;
  pendingPermissions: PermissionAskData[];
}

export interface PendingAsk {
  data: PermissionAskData;
  resolve: (answer: ApprovalAnswer) => void;
  timer: NodeJS.Timeout;
}

/** A turn's parts: the log a re-attaching client replays, and who listens live. */
export class Turn {
  readonly chunks: UIChunk[] = [];
  private readonly listeners = new Set<(chunk: UIChunk | undefined) => void>();
  done = false;
  /** How many clients stream this turn; a disconnect of the last may abort it. */
  viewers = 0;
  /** A remote turn: stops following it (its Redis reader); called when the turn ends here. */
  stopFollowing: (() => void) | undefined;
  /** A remote turn: a newer turn announced before this one's end was read here, followed once it ends. */
  next: string | undefined;

  /** `remote`: the turn runs on another server replica and this one follows it. */
  constructor(
    readonly id: string,
    readonly remote = false,
  ) {}

  push(chunk: UIChunk): void {
    const last = this.chunks[this.chunks.length - 1];
    // The replay log keeps text and reasoning deltas merged: its size follows the answer, not the token count.
    if (last && (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') && last.type === chunk.type && last.id === chunk.id) {
      // copyWith: once per token, and a spread copy gets new properties slowly on Node 20 (docs/adr/0003).
      this.chunks[this.chunks.length - 1] = copyWith(last, { delta: last.delta + chunk.delta });
    } else this.chunks.push(chunk);
    for (const listener of this.listeners) listener(chunk);
  }

  /** The turn ended, or this replica stops following it (the session left the hub, or nobody here reads it any more). */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.stopFollowing?.();
    for (const listener of this.listeners) listener(undefined);
    this.listeners.clear();
  }

  /** Replays what happened so far, then follows live; `undefined` marks the end. */
  follow(listener: (chunk: UIChunk | undefined) => void): () => void {
    for (const chunk of this.chunks) listener(chunk);
    if (this.done) {
      listener(undefined);
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** One session the hub holds for its owner. */
export class HubSession {
  #turn: Turn | undefined;
  #starting = false;
  /**
   * Called when the session may start running (a turn is being started, or one set): the hub
   * counts running turns per owner over the sessions it was told of, not over all of them.
   */
  onActive: ((session: HubSession) => void) | undefined;
  /** The running turn's mapper (permission parts are added through it). */
  mapper: UiStreamMapper | undefined;
  /**
   * Requests using this copy now (`SessionHub.use`: opening or reopening it, reading it, starting
   * a turn, a change under the cluster lock): it is not let go to make room meanwhile.
   */
  busy = 0;
  readonly pending = new Map<string, PendingAsk>();
  private readonly watchers = new Set<(chunk: UIChunk) => void>();
  private current: InteractiveSession;

  constructor(
    readonly id: string,
    readonly owner: string,
    readonly cwd: string,
    readonly createdAt: string,
    interactive: InteractiveSession,
    /** Offered by the host (`ITransportAdapter.attach`): clients use it, the hub never ends it. */
    readonly hostOwned = false,
  ) {
    this.current = interactive;
    this.offBackground = this.listen(interactive);
  }

  private offBackground: () => void;

  /**
   * Background tasks report between turns too (a command started with `run_in_background` ends
   * later): then their parts go to the session's watchers. During a turn the turn's mapper sends them.
   */
  private listen(interactive: InteractiveSession): () => void {
    return interactive.on('background_task_event', (event) => {
      if (!this.runsHere) this.notify({ type: DATA_BACKGROUND, id: event.taskId, data: event });
    });
  }

  /** Stops listening to the session (it left the hub). */
  dispose(): void {
    this.offBackground();
  }

  /** The session's name as the session holds it (`PATCH`, `/rename`, a resumed record). */
  get name(): string | undefined {
    return this.current.getName();
  }

  /** The session's facade; replaced when a replica reopens a copy another replica saved over. */
  get interactive(): InteractiveSession {
    return this.current;
  }

  /** Swaps in a newer copy of the same session (same id, owner and clients). */
  reopened(interactive: InteractiveSession): void {
    this.offBackground();
    this.current = interactive;
    this.offBackground = this.listen(interactive);
  }

  /** The session's turn: running here or followed from another replica, or the last one. */
  get turn(): Turn | undefined {
    return this.#turn;
  }

  set turn(turn: Turn | undefined) {
    this.#turn = turn;
    if (turn !== undefined) this.onActive?.(this);
  }

  /** A turn is being started (lock, refresh) and has no `Turn` yet. */
  get starting(): boolean {
    return this.#starting;
  }

  set starting(starting: boolean) {
    this.#starting = starting;
    if (starting) this.onActive?.(this);
  }

  /** True while a turn of this session runs here or is followed from another replica. */
  get running(): boolean {
    return this.#starting || (this.#turn !== undefined && !this.#turn.done);
  }

  /** True while a turn of this session runs in this process (not one followed from another replica). */
  get runsHere(): boolean {
    return this.turn !== undefined && !this.turn.done && !this.turn.remote;
  }

  /** Aborts the turn running here and refuses its pending asks; true when a turn was running here. */
  stop(): boolean {
    const running = this.runsHere;
    this.interactive.abort();
    this.cancelAsks();
    return running;
  }

  /** Answers a pending permission ask; `undefined` when it is not pending here. */
  settle(requestId: string, decision: 'allow' | 'allow_always' | 'deny', message?: string): PermissionAskData | undefined {
    const ask = this.pending.get(requestId);
    if (!ask) return undefined;
    this.pending.delete(requestId);
    clearTimeout(ask.timer);
    const answer: ApprovalAnswer = decision === 'allow' ? true : decision === 'allow_always' ? 'allow-session' : { behavior: 'deny', ...(message ? { message: `The user declined this call: ${message}` } : {}) };
    ask.data.status = decision === 'deny' ? 'denied' : 'allowed';
    this.mapper?.permission({ ...ask.data });
    ask.resolve(answer);
    return ask.data;
  }

  pendingAsks(): PermissionAskData[] {
    return [...this.pending.values()].map((ask) => ask.data);
  }

  /** How many WebSocket clients watch this session. */
  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Every part of every turn of this session (a WebSocket client). */
  watch(listener: (chunk: UIChunk) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  broadcast(chunk: UIChunk): void {
    this.turn?.push(chunk);
    for (const watcher of this.watchers) watcher(chunk);
  }

  /** A part for the session's watchers only, outside any turn (a background task that ends between turns). */
  notify(chunk: UIChunk): void {
    for (const watcher of this.watchers) watcher(chunk);
  }

  /** A permission ask: shown to the session's clients, denied when nobody answers within `timeoutMs`. */
  ask(request: ApprovalRequest, timeoutMs: number): Promise<ApprovalAnswer> {
    return new Promise((resolvePromise) => {
      const requestId = randomUUID();
      const data: PermissionAskData = {
        requestId,
        status: 'pending',
        toolName: request.toolName,
        toolCallId: request.toolCallId,
        input: request.input,
        ...(request.suggestedRule === undefined ? {} : { suggestedRule: request.suggestedRule }),
      };
      const settle = (answer: ApprovalAnswer, status: PermissionAskData['status']): void => {
        const ask = this.pending.get(requestId);
        if (!ask) return;
        this.pending.delete(requestId);
        clearTimeout(ask.timer);
        data.status = status;
        this.mapper?.permission({ ...data });
        resolvePromise(answer);
      };
      const timer = setTimeout(() => settle({ behavior: 'deny', message: `Nobody answered the permission request within ${Math.round(timeoutMs / 1000)} s, so it was denied.` }, 'timed_out'), timeoutMs);
      timer.unref();
      this.pending.set(requestId, { data, resolve: resolvePromise, timer });
      request.signal.addEventListener('abort', () => settle(false, 'cancelled'), { once: true });
      this.mapper?.permission({ ...data });
    });
  }

  /** Refuses every pending ask (the turn was aborted or the session ends). */
  cancelAsks(): void {
    for (const [requestId, ask] of this.pending) {
      this.pending.delete(requestId);
      clearTimeout(ask.timer);
      ask.data.status = 'cancelled';
      ask.resolve(false);
    }
  }

  summary(): SessionSummary {
    return {
      id: this.id,
      ...(this.name === undefined ? {} : { name: this.name }),
      cwd: this.cwd,
      createdAt: this.createdAt,
      running: this.turn !== undefined && !this.turn.done,
      messageCount: this.interactive.getMessages().length,
      permissionMode: this.interactive.getSession().getPermissionMode(),
      pendingPermissions: this.pendingAsks(),
    };
  }
}
