import { randomUUID } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import {
  describeError,
  isValidSessionId,
  parsePermissionMode,
  type ApprovalAnswer,
  type ApprovalRequest,
  type ICommandResult,
  type IHistoryEntry,
  type PermissionMode,
} from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import type { ApprovalRouter, SessionFactory } from '@tessera/session-hub';
import { UiStreamMapper, type PermissionAskData, type UIChunk } from './ui-stream.js';

/** A stable error code, its HTTP status, the message and (for a bad body) the field. */
export class HubError extends Error {
  constructor(
    readonly code: string,
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 503,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'HubError';
  }
}

export interface SessionHubOptions {
  sessions: SessionFactory;
  /** The router the kernel's `ApprovalHandler` is; the hub routes each session's asks to its clients. */
  approvals: ApprovalRouter;
  /** Sessions may only work inside these folders (absolute). */
  allowedRoots: readonly string[];
  /** A session created without `cwd` works here (default: the first root). */
  defaultCwd?: string;
  /** A permission ask nobody answers is denied after this long. Default 60 s. */
  permissionTimeoutMs?: number;
  /** Whether a client may ask for `bypassPermissions`. Default false. */
  allowBypassPermissions?: boolean;
  /** Live sessions per owner. Default 100. */
  maxSessionsPerOwner?: number;
  /** Turns running at once per owner. Default 4. */
  maxConcurrentTurnsPerOwner?: number;
  /** Record field holding the owning token's id in stored sessions. */
  ownerField?: string;
}

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

interface PendingAsk {
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

  constructor(readonly id: string) {}

  push(chunk: UIChunk): void {
    const last = this.chunks[this.chunks.length - 1];
    // The replay log keeps text and reasoning deltas merged: its size follows the answer, not the token count.
    if (last && (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') && last.type === chunk.type && last.id === chunk.id) {
      this.chunks[this.chunks.length - 1] = { ...last, delta: last.delta + chunk.delta };
    } else this.chunks.push(chunk);
    for (const listener of this.listeners) listener(chunk);
  }

  end(): void {
    this.done = true;
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
  name: string | undefined;
  turn: Turn | undefined;
  readonly pending = new Map<string, PendingAsk>();
  private readonly watchers = new Set<(chunk: UIChunk) => void>();

  constructor(
    readonly id: string,
    readonly owner: string,
    readonly cwd: string,
    readonly createdAt: string,
    readonly interactive: InteractiveSession,
  ) {
    this.name = interactive.getName();
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

  summary(): SessionSummary {
    return {
      id: this.id,
      ...(this.name === undefined ? {} : { name: this.name }),
      cwd: this.cwd,
      createdAt: this.createdAt,
      running: this.turn !== undefined && !this.turn.done,
      messageCount: this.interactive.getMessages().length,
      permissionMode: this.interactive.getSession().getPermissionMode(),
      pendingPermissions: [...this.pending.values()].map((ask) => ask.data),
    };
  }
}

const DEFAULT_PERMISSION_TIMEOUT_MS = 60_000;

/**
 * Many `InteractiveSession`s in one process, each owned by one client identity (a bearer token's
 * id): a client sees, streams, aborts and answers only its own. Sessions work inside the
 * configured roots; stored sessions are resumed only by their owner.
 */
export class SessionHub {
  private readonly live = new Map<string, HubSession>();
  /** Each live session's approval route, removed when the session leaves the hub. */
  private readonly unroute = new Map<string, () => void>();
  private readonly roots: string[];
  private readonly ownerField: string;
  private closing = false;

  constructor(private readonly options: SessionHubOptions) {
    if (options.allowedRoots.length === 0) throw new Error('SessionHub needs at least one allowed root folder.');
    this.roots = options.allowedRoots.map((root) => {
      if (!isAbsolute(root)) throw new Error(`Allowed root ${root} must be an absolute path.`);
      return realpathSync(root);
    });
    this.ownerField = options.ownerField ?? 'serverOwner';
  }

  /** Creates a session (or resumes a stored one of the same owner). */
  async create(owner: string, request: { cwd?: string; name?: string; model?: string; permissionMode?: string; resume?: string }): Promise<HubSession> {
    if (this.closing) throw new HubError('shutting_down', 503, 'The server is shutting down.');
    const mine = [...this.live.values()].filter((session) => session.owner === owner);
    if (mine.length >= (this.options.maxSessionsPerOwner ?? 100)) {
      throw new HubError('too_many_sessions', 429, `At most ${this.options.maxSessionsPerOwner ?? 100} live sessions per token; delete one first.`);
    }
    const mode = request.permissionMode === undefined ? undefined : parsePermissionMode(request.permissionMode);
    if (request.permissionMode !== undefined && mode === undefined) throw new HubError('invalid_request', 400, `Unknown permission mode "${request.permissionMode}".`, 'permissionMode');
    if (mode === 'bypassPermissions' && this.options.allowBypassPermissions !== true) {
      throw new HubError('bypass_not_allowed', 403, 'bypassPermissions is refused: the server configuration does not allow it.', 'permissionMode');
    }
    if (request.resume !== undefined) return this.resume(owner, request.resume, mode);
    const cwd = this.checkCwd(request.cwd);
    const interactive = await this.options.sessions.open({ cwd, ...(request.model === undefined ? {} : { model: request.model }) });
    const session = interactive.getSession();
    session.setRecordField(this.ownerField, owner);
    if (mode !== undefined) session.setPermissionMode(mode);
    if (request.name !== undefined) await interactive.setName(request.name);
    return this.adopt(owner, cwd, interactive);
  }

  list(owner: string): SessionSummary[] {
    return [...this.live.values()].filter((session) => session.owner === owner).map((session) => session.summary());
  }

  /** The owner's session; another owner's (or an unknown id) is `session_not_found`, never a hint it exists. */
  get(owner: string, id: string): HubSession {
    if (!isValidSessionId(id)) throw new HubError('invalid_session_id', 400, `"${String(id).slice(0, 80)}" is not a session id.`, 'id');
    const session = this.live.get(id);
    if (!session || session.owner !== owner) throw new HubError('session_not_found', 404, `No session ${id}.`);
    return session;
  }

  async rename(owner: string, id: string, name: string): Promise<HubSession> {
    const session = this.get(owner, id);
    await session.interactive.setName(name);
    session.name = name;
    return session;
  }

  async delete(owner: string, id: string): Promise<void> {
    const session = this.get(owner, id);
    this.live.delete(id);
    this.unroute.get(id)?.();
    this.unroute.delete(id);
    session.interactive.abort();
    this.cancelAsks(session, 'cancelled');
    await session.interactive.shutdown({ reason: 'other' }).catch(() => undefined);
  }

  /**
   * Starts a turn; its parts go to the session's watchers and into `session.turn` (which a
   * stream follows). Refused while another turn of the session runs.
   */
  startTurn(owner: string, id: string, prompt: string): Turn {
    const session = this.get(owner, id);
    if (session.turn && !session.turn.done) throw new HubError('turn_in_progress', 409, 'A turn is already running in this session; wait for it or abort it.');
    const running = [...this.live.values()].filter((candidate) => candidate.owner === owner && candidate.turn && !candidate.turn.done).length;
    if (running >= (this.options.maxConcurrentTurnsPerOwner ?? 4)) {
      throw new HubError('too_many_turns', 429, `At most ${this.options.maxConcurrentTurnsPerOwner ?? 4} turns may run at once per token.`);
    }
    const turn = new Turn(randomUUID());
    session.turn = turn;
    const mapper = new UiStreamMapper((chunk) => session.broadcast(chunk));
    (session as { mapper?: UiStreamMapper }).mapper = mapper;
    const interactive = session.interactive;
    const offSession = interactive.getSession().subscribe((event) => mapper.sessionEvent(event));
    const offTool = interactive.on('tool_end', (state) => mapper.toolEnd(state));
    const offBackground = interactive.on('background_task_event', (event) => mapper.background(event));
    let interrupted = false;
    const offInterrupted = interactive.on('interrupted', () => (interrupted = true));
    mapper.start();
    const finish = (): void => {
      offSession();
      offTool();
      offBackground();
      offInterrupted();
      turn.end();
    };
    interactive.submit(prompt).then(
      () => {
        if (interrupted) mapper.abort('interrupted');
        else mapper.finish();
        finish();
      },
      (error: unknown) => {
        if (interrupted) mapper.abort('interrupted');
        else mapper.fail(describeError(error));
        finish();
      },
    );
    return turn;
  }

  abort(owner: string, id: string): boolean {
    const session = this.get(owner, id);
    const running = session.turn !== undefined && !session.turn.done;
    session.interactive.abort();
    this.cancelAsks(session, 'cancelled');
    return running;
  }

  /** Answers a permission ask of the owner's session. */
  answer(owner: string, id: string, requestId: string, decision: 'allow' | 'allow_always' | 'deny', message?: string): PermissionAskData {
    const session = this.get(owner, id);
    const ask = session.pending.get(requestId);
    if (!ask) throw new HubError('permission_request_not_found', 404, `No pending permission request ${requestId.slice(0, 80)} in this session (already answered or timed out).`);
    session.pending.delete(requestId);
    clearTimeout(ask.timer);
    const answer: ApprovalAnswer = decision === 'allow' ? true : decision === 'allow_always' ? 'allow-session' : { behavior: 'deny', ...(message ? { message: `The user declined this call: ${message}` } : {}) };
    ask.data.status = decision === 'deny' ? 'denied' : 'allowed';
    (session as { mapper?: UiStreamMapper }).mapper?.permission({ ...ask.data });
    ask.resolve(answer);
    return ask.data;
  }

  async command(owner: string, id: string, name: string, args: string): Promise<ICommandResult> {
    const session = this.get(owner, id);
    const result = await session.interactive.executeCommand(name, args);
    if (!result) throw new HubError('unknown_command', 404, `No command /${name.slice(0, 80)}.`, 'name');
    return result;
  }

  history(owner: string, id: string): IHistoryEntry[] {
    return this.get(owner, id).interactive.getHistory();
  }

  /** Ends every session (saving them) and refuses new work. */
  async shutdown(): Promise<void> {
    this.closing = true;
    const sessions = [...this.live.values()];
    this.live.clear();
    for (const stop of this.unroute.values()) stop();
    this.unroute.clear();
    await Promise.all(
      sessions.map(async (session) => {
        session.interactive.abort();
        this.cancelAsks(session, 'cancelled');
        await session.interactive.shutdown({ reason: 'other' }).catch(() => undefined);
      }),
    );
  }

  get size(): number {
    return this.live.size;
  }

  private async resume(owner: string, storedId: string, mode: PermissionMode | undefined): Promise<HubSession> {
    if (!isValidSessionId(storedId)) throw new HubError('invalid_session_id', 400, `"${String(storedId).slice(0, 80)}" is not a session id.`, 'resume');
    const existing = this.live.get(storedId);
    if (existing) {
      if (existing.owner !== owner) throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
      return existing;
    }
    const stored = (await this.options.sessions.list()).find((entry) => entry.id === storedId);
    if (!stored || !this.insideRoots(stored.cwd)) throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
    const interactive = await this.options.sessions.open({ cwd: stored.cwd, resumeSessionId: storedId });
    const recorded = interactive.getSession().getRecordField(this.ownerField);
    if (recorded !== owner) {
      await interactive.shutdown({ reason: 'other' }).catch(() => undefined);
      throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
    }
    if (mode !== undefined) interactive.getSession().setPermissionMode(mode);
    return this.adopt(owner, stored.cwd, interactive);
  }

  private adopt(owner: string, cwd: string, interactive: InteractiveSession): HubSession {
    const session = new HubSession(interactive.getSessionId(), owner, cwd, new Date().toISOString(), interactive);
    this.live.set(session.id, session);
    this.unroute.set(session.id, this.options.approvals.route(session.id, { requestApproval: (request) => this.ask(session, request) }));
    return session;
  }

  /** A permission ask: shown to the session's clients, denied when nobody answers in time. */
  private ask(session: HubSession, request: ApprovalRequest): Promise<ApprovalAnswer> {
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
        const ask = session.pending.get(requestId);
        if (!ask) return;
        session.pending.delete(requestId);
        clearTimeout(ask.timer);
        data.status = status;
        (session as { mapper?: UiStreamMapper }).mapper?.permission({ ...data });
        resolvePromise(answer);
      };
      const timeoutMs = this.options.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS;
      const timer = setTimeout(() => settle({ behavior: 'deny', message: `Nobody answered the permission request within ${Math.round(timeoutMs / 1000)} s, so it was denied.` }, 'timed_out'), timeoutMs);
      timer.unref();
      session.pending.set(requestId, { data, resolve: resolvePromise, timer });
      request.signal.addEventListener('abort', () => settle(false, 'cancelled'), { once: true });
      (session as { mapper?: UiStreamMapper }).mapper?.permission({ ...data });
    });
  }

  private cancelAsks(session: HubSession, status: 'cancelled'): void {
    for (const [requestId, ask] of session.pending) {
      session.pending.delete(requestId);
      clearTimeout(ask.timer);
      ask.data.status = status;
      ask.resolve(false);
    }
  }

  /** A requested working directory: inside an allowed root (symlinks resolved), an existing folder. */
  private checkCwd(requested: string | undefined): string {
    const wanted = requested === undefined ? (this.options.defaultCwd ?? this.roots[0]!) : isAbsolute(requested) ? requested : resolve(this.roots[0]!, requested);
    let real: string;
    try {
      real = realpathSync(wanted);
      if (!statSync(real).isDirectory()) throw new Error('not a directory');
    } catch {
      throw new HubError('invalid_cwd', 400, `cwd ${wanted} is not an existing folder.`, 'cwd');
    }
    if (!this.insideRoots(real)) throw new HubError('cwd_not_allowed', 403, `cwd ${wanted} is outside the server's allowed roots.`, 'cwd');
    return real;
  }

  private insideRoots(path: string): boolean {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return false;
    }
    return this.roots.some((root) => {
      const rel = relative(root, real);
      return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
    });
  }
}
