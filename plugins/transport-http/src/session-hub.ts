import { randomUUID } from 'node:crypto';
import { describeError, isValidSessionId, parsePermissionMode, PERMISSION_MODES, type ICommandInfo, type ICommandResult, type PermissionMode } from '@tessera/contracts';
import { canonicalName, type InteractiveSession } from '@tessera/kernel';
import type { ApprovalRouter, SessionCluster, SessionFactory, SessionLease } from '@tessera/session-hub';
import { AllowedRoots } from './allowed-roots.js';
import { controlHandler, forwardControl } from './hub-control.js';
import { HubError } from './hub-error.js';
import { KeyedQueue, storedSummary, unavailable } from './hub-replica.js';
import { HubSession, Turn, type SessionSummary } from './hub-session.js';
import { UiStreamMapper, type PermissionAskData, type UIChunk } from './ui-stream.js';

/** The modes a client may switch a session to when the server does not allow `bypassPermissions`. */
const CLIENT_MODES: readonly PermissionMode[] = PERMISSION_MODES.filter((mode) => mode !== 'bypassPermissions');

export { HubError } from './hub-error.js';
export { HubSession, Turn, type SessionSummary } from './hub-session.js';

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
  /** Turns `owner` runs through another transport of this host (MCP at `/mcp`): they count against the same limit. */
  externalTurns?: (owner: string) => number;
  /** Record field holding the owning token's id in stored sessions. */
  ownerField?: string;
  /**
   * Replica mode: several server processes serve the same stored sessions (the store and this
   * cluster are shared, e.g. `redisSessionStore()`). A session not live here is loaded from the
   * store on first use (by its owner only); a turn takes the session's cluster lock, reopens a
   * copy another replica saved over, and publishes its parts so other replicas can stream it;
   * abort and permission answers sent to another replica are forwarded to the one running it.
   */
  cluster?: SessionCluster;
  /**
   * Lets clients run host commands (`scope: 'host'`: `/plugin`, `/reload-plugins`, `/reset`).
   * Default false: they are refused (`command_not_allowed`, 403), because one token must not
   * change what every other token's sessions run. Only for a host whose clients are all trusted.
   */
  allowHostCommands?: boolean;
}

const DEFAULT_PERMISSION_TIMEOUT_MS = 60_000;

/**
 * Many `InteractiveSession`s in one process, each owned by one client identity (a bearer token's
 * id): a client sees, streams, aborts and answers only its own. Sessions work inside the
 * configured roots; stored sessions are resumed only by their owner.
 */
export class SessionHub {
  private readonly live = new Map<string, HubSession>();
  /** Sessions whose turns the cluster announces to this replica (replica mode): how many watchers need it, and how to stop. */
  private readonly turnWatches = new Map<string, { count: number; stop: Promise<() => void> }>();
  /** The live sessions of each owner, so per-token limits and lists never scan every session. */
  private readonly liveByOwner = new Map<string, Set<HubSession>>();
  /** Each live session's approval route, removed when the session leaves the hub. */
  private readonly unroute = new Map<string, () => void>();
  /** Replica mode: the work on each session id that must not overlap (loading, reopening). */
  private readonly gates = new KeyedQueue();
  private readonly roots: AllowedRoots;
  private readonly ownerField: string;
  private closing = false;

  constructor(private readonly options: SessionHubOptions) {
    this.roots = new AllowedRoots(options.allowedRoots);
    this.ownerField = options.ownerField ?? 'serverOwner';
  }

  /** Creates a session (or resumes a stored one of the same owner). */
  async create(owner: string, request: { cwd?: string; name?: string; model?: string; permissionMode?: string; resume?: string }): Promise<HubSession> {
    if (this.closing) throw new HubError('shutting_down', 503, 'The server is shutting down.');
    await this.makeRoom(owner);
    const mode = request.permissionMode === undefined ? undefined : parsePermissionMode(request.permissionMode);
    if (request.permissionMode !== undefined && mode === undefined) throw new HubError('invalid_request', 400, `Unknown permission mode "${request.permissionMode}".`, 'permissionMode');
    if (mode === 'bypassPermissions' && this.options.allowBypassPermissions !== true) {
      throw new HubError('bypass_not_allowed', 403, 'bypassPermissions is refused: the server configuration does not allow it.', 'permissionMode');
    }
    if (request.resume !== undefined) {
      // A resumed session keeps the folder and model it was stored with: a request naming others is refused, not half applied.
      for (const field of ['cwd', 'model'] as const) {
        if (request[field] !== undefined) throw new HubError('invalid_request', 400, `${field} cannot be given with resume: the stored session keeps its own ${field === 'cwd' ? 'folder' : 'model'} (change the model with /model after resuming).`, field);
      }
      const resumed = await this.resume(owner, request.resume, mode);
      if (request.name === undefined) return resumed;
      // Naming saves: in replica mode under the session's lock on the newest copy, as `rename` does (`session_busy` while a turn runs elsewhere).
      if (this.options.cluster) return this.rename(owner, resumed.id, request.name);
      await resumed.interactive.setName(request.name);
      return resumed;
    }
    const cwd = this.roots.checkCwd(request.cwd, this.options.defaultCwd);
    const interactive = await this.options.sessions.open({ cwd, ...(request.model === undefined ? {} : { model: request.model }) });
    const session = interactive.getSession();
    session.setRecordField(this.ownerField, owner);
    if (mode !== undefined) session.setPermissionMode(mode);
    if (request.name !== undefined) await interactive.setName(request.name);
    const cluster = this.options.cluster;
    if (cluster) {
      // Stored at once, so any replica can serve the session's next request.
      if (request.name === undefined) await session.save();
      let stored = false;
      try {
        stored = await this.clustered(() => cluster.isCurrent(interactive.getSessionId()));
      } finally {
        // Not stored, or the check itself failed (Redis away): the session never reaches the hub, so it ends here.
        if (!stored) await interactive.shutdown({ reason: 'other', cancelBackgroundTasks: false }).catch(() => undefined);
      }
      if (!stored) throw new HubError('store_unavailable', 503, 'The session could not be stored (the shared session store did not take it); retry in a moment.');
    }
    return this.adopt(owner, cwd, interactive);
  }

  /**
   * Aborts the turn running here in `owner`'s session `id` when nobody follows it any more: no
   * stream is reading it and no WebSocket watches the session (a client that started it went
   * away). True when a turn was aborted.
   */
  abortIfUnwatched(owner: string, id: string): boolean {
    const session = this.live.get(id);
    if (!session || session.owner !== owner || !session.runsHere) return false;
    if ((session.turn?.viewers ?? 0) > 0 || session.watcherCount > 0) return false;
    return session.stop();
  }

  /** The owner's sessions live in this process. */
  list(owner: string): SessionSummary[] {
    return [...(this.liveByOwner.get(owner) ?? [])].map((session) => session.summary());
  }

  /** The owner's sessions: live here and, in replica mode, the owner's stored ones (newest first) not live here. */
  async sessionsOf(owner: string): Promise<SessionSummary[]> {
    const cluster = this.options.cluster;
    if (!cluster) return this.list(owner);
    const live = [...(this.liveByOwner.get(owner) ?? [])];
    const stored = await this.clustered(() => cluster.heads());
    const others = stored.filter((head) => head.fields[this.ownerField] === owner && !this.live.has(head.id) && this.roots.contains(head.cwd));
    // A turn running on another replica shows as running, with its asks, as in `summary`.
    return Promise.all([
      ...live.map((session) => (session.runsHere ? session.summary() : this.withRemoteTurn(cluster, owner, session.summary()))),
      ...others.map((head) => this.withRemoteTurn(cluster, owner, storedSummary(head))),
    ]);
  }

  /** `summary` with `running` and the pending asks of a turn of the session that runs on another replica (unchanged when none does). */
  private async withRemoteTurn(cluster: SessionCluster, owner: string, summary: SessionSummary): Promise<SessionSummary> {
    try {
      const forwarded = await forwardControl(cluster, summary.id, { type: 'pending', owner });
      return forwarded ? { ...summary, running: true, pendingPermissions: forwarded.pendingPermissions } : summary;
    } catch (error) {
      if (error instanceof HubError && error.code === 'replica_unreachable') return summary;
      throw error;
    }
  }

  /** The owner's live session; another owner's (or an unknown id) is `session_not_found`, never a hint it exists. */
  get(owner: string, id: string): HubSession {
    if (!isValidSessionId(id)) throw new HubError('invalid_session_id', 400, `"${String(id).slice(0, 80)}" is not a session id.`, 'id');
    const session = this.live.get(id);
    if (!session || session.owner !== owner) throw new HubError('session_not_found', 404, `No session ${id}.`);
    return session;
  }

  /**
   * The owner's session, as `get`; in replica mode also one not live here (loaded from the
   * store, owner checked), and a live copy another replica saved over is reopened first.
   */
  open(owner: string, id: string): Promise<HubSession> {
    return this.use(owner, id, (session) => session);
  }

  /**
   * Runs `work` on the owner's session, opened as `open` does, and holds the copy until `work`
   * ends: in replica mode it is not let go to make room meanwhile (a request that found the
   * session never sees it vanish). A request that reads the session after opening it goes
   * through here, not through `open` and then `get`.
   */
  async use<T>(owner: string, id: string, work: (session: HubSession) => T | Promise<T>): Promise<T> {
    const cluster = this.options.cluster;
    if (!cluster) return work(this.get(owner, id));
    if (!isValidSessionId(id)) throw new HubError('invalid_session_id', 400, `"${String(id).slice(0, 80)}" is not a session id.`, 'id');
    if (this.closing) throw new HubError('shutting_down', 503, 'The server is shutting down.');
    // Held from the moment it is found (a live copy) or adopted (inside its gate), before any wait:
    // `makeRoom` checks in the same gate, so it never lets go of a copy a request is opening.
    const live = this.live.get(id);
    let held: HubSession;
    if (live) {
      if (live.owner !== owner) throw new HubError('session_not_found', 404, `No session ${id}.`);
      live.busy += 1;
      this.touch(live);
      held = live;
    } else {
      held = await this.gates.run(id, async () => {
        const loaded = this.live.get(id) ? this.get(owner, id) : await this.load(owner, id, cluster);
        loaded.busy += 1;
        return loaded;
      });
    }
    try {
      // A copy loaded just now is the newest; one live already is reopened first when another replica saved over it.
      return await work(live ? await this.refresh(live, cluster) : held);
    } finally {
      held.busy -= 1;
    }
  }

  /**
   * Sends `listener` the parts of every turn of the owner's session until the returned function
   * is called (a WebSocket subscription). In replica mode that includes turns started on other
   * replicas: the cluster announces each start and this replica follows the turn, and one already
   * running there when the watcher comes is followed at once, replayed from its start. The last
   * watcher to leave stops the following (`unfollowIfUnwatched`) unless a stream still reads it.
   */
  watch(owner: string, id: string, listener: (chunk: UIChunk) => void): Promise<() => void> {
    return this.use(owner, id, async (session) => {
      // A watcher that joins mid-turn gets the turn so far first (its `start`, the text until now).
      if (session.turn && !session.turn.done) for (const chunk of session.turn.chunks) listener(chunk);
      const stopWatching = session.watch(listener);
      const cluster = this.options.cluster;
      if (!cluster?.watchTurns) return stopWatching;
      const sessionId = session.id;
      let entry = this.turnWatches.get(sessionId);
      if (!entry) {
        const watch = this.clustered(() => cluster.watchTurns!(sessionId, (turnId) => this.followAnnounced(sessionId, turnId)));
        const created = { count: 0, stop: watch };
        entry = created;
        this.turnWatches.set(sessionId, created);
        watch.catch(() => {
          if (this.turnWatches.get(sessionId) === created) this.turnWatches.delete(sessionId);
        });
      }
      const watching = entry;
      watching.count += 1;
      let stopped = false;
      const unwatch = (): void => {
        if (stopped) return;
        stopped = true;
        stopWatching();
        if (session.turn?.remote) this.unfollowIfUnwatched(owner, sessionId, session.turn);
        watching.count -= 1;
        if (watching.count > 0 || this.turnWatches.get(sessionId) !== watching) return;
        this.turnWatches.delete(sessionId);
        void watching.stop.then((stop) => stop(), () => undefined);
      };
      try {
        await watching.stop;
        // Announced before this watcher subscribed, or no longer followed here since the last watcher left.
        if (!session.running) {
          const turnId = await this.clustered(() => cluster.runningTurn(sessionId));
          if (turnId !== undefined && this.live.get(sessionId) === session) await this.followRemote(session, cluster, turnId);
        }
      } catch (error) {
        unwatch();
        throw error;
      }
      return unwatch;
    });
  }

  /**
   * A turn of a watched session started somewhere: one started on another replica is followed
   * here, so its watchers get its parts. The announced turn itself, not whichever runs now: it
   * may have ended before this replica got to it (a short turn, a busy replica), and its stream
   * still replays it in full.
   */
  private followAnnounced(sessionId: string, turnId: string): void {
    const session = this.live.get(sessionId);
    const cluster = this.options.cluster;
    // No watcher left (it went while the announcement was on its way): nobody here would read the turn.
    if (!session || !cluster || session.turn?.id === turnId || session.watcherCount === 0) return;
    void this.followRemote(session, cluster, turnId).catch(() => undefined);
  }

  /**
   * Stops following `turn` of the owner's session, which another replica runs, once nobody here
   * reads it (no stream, no WebSocket watcher): its Redis reader stops now, not at the turn's
   * end. A client that comes back follows it again, replayed from its start (`attach`, `watch`).
   */
  unfollowIfUnwatched(owner: string, id: string, turn: Turn): void {
    const session = this.live.get(id);
    if (!session || session.owner !== owner || session.turn !== turn || !turn.remote) return;
    if (turn.viewers > 0 || session.watcherCount > 0) return;
    turn.end();
  }

  async rename(owner: string, id: string, name: string): Promise<HubSession> {
    return this.exclusive(owner, id, async (session) => {
      await session.interactive.setName(name);
      return session;
    });
  }

  /**
   * Ends the session and removes its stored transcript, so it cannot be resumed and no replica
   * serves it again. With `keep`, it is only ended here (saved: it can be resumed, and in replica
   * mode another replica reopens it on its next request).
   */
  async delete(owner: string, id: string, options: { keep?: boolean } = {}): Promise<void> {
    const session = this.get(owner, id);
    const cluster = this.options.cluster;
    // A turn another replica runs is stopped first, as a local one is: its tools must not go on
    // acting for a session that is gone (`abort` is the owner's, checked again where it runs).
    if (cluster && !options.keep && !session.hostOwned && !session.runsHere) await forwardControl(cluster, id, { type: 'abort', owner }).catch(() => undefined);
    // Not while the same id is being loaded or reopened: its store state belongs to the new copy.
    await this.gates.run(id, async () => {
      await this.unload(session);
      // A session the host offered is only taken away from the clients: the host keeps it and its transcript.
      if (!options.keep && !session.hostOwned) await this.options.sessions.delete?.(id);
    });
  }

  /**
   * Starts a turn; its parts go to the session's watchers and into `session.turn` (which a
   * stream follows). Refused while another turn of the session runs — in replica mode, on any
   * replica (`session_busy`).
   */
  startTurn(owner: string, id: string, prompt: string): Promise<Turn> {
    const cluster = this.options.cluster;
    return this.use(owner, id, async (session) => {
      if (session.running) throw new HubError('turn_in_progress', 409, 'A turn is already running in this session; wait for it or abort it.');
      if (this.atTurnLimit(owner)) {
        throw new HubError('too_many_turns', 429, `At most ${this.options.maxConcurrentTurnsPerOwner ?? 4} turns may run at once per token.`);
      }
      if (!cluster) return this.runTurn(session, prompt);
      session.starting = true;
      let lease: SessionLease | undefined;
      let stopServing: (() => void) | undefined;
      try {
        lease = await this.lock(id, cluster);
        await this.refresh(session, cluster);
        if (this.live.get(id) !== session) throw new HubError('session_not_found', 404, `No session ${id}.`);
        // Other replicas' clients reach the turn (abort, permission answers) through the cluster while it runs here.
        stopServing = await this.clustered(() => cluster.serveControl(id, controlHandler(session)));
        return this.runTurn(session, prompt, { cluster, lease, stopServing });
      } catch (error) {
        await lease?.release();
        stopServing?.();
        throw error;
      } finally {
        session.starting = false;
      }
    });
  }

  /**
   * The session's running turn to stream: the one running here, or in replica mode one running
   * on another replica (followed from its start); `undefined` when none runs.
   */
  attach(owner: string, id: string): Promise<Turn | undefined> {
    return this.use(owner, id, async (session) => {
      if (session.turn && !session.turn.done) return session.turn;
      const cluster = this.options.cluster;
      if (!cluster) return undefined;
      const turnId = await this.clustered(() => cluster.runningTurn(id));
      if (turnId === undefined) return undefined;
      return this.followRemote(session, cluster, turnId);
    });
  }

  /** Follows turn `turnId` of another replica into `session.turn`, replayed from its start (an ended one too); a turn already followed or running here is kept. */
  private async followRemote(session: HubSession, cluster: SessionCluster, turnId: string): Promise<Turn> {
    if (session.turn && !session.turn.done) {
      // A newer turn announced while the previous one's end is still on its way here: followed
      // right after that end, or its parts would be lost (the stream keeps the newest turn only).
      if (session.turn.remote && session.turn.id !== turnId) session.turn.next = turnId;
      return session.turn;
    }
    const turn = new Turn(turnId, true);
    session.turn = turn;
    try {
      const stop = await this.clustered(() =>
        cluster.follow(session.id, turnId, (event) => {
          if (event.type === 'turn-part') session.broadcast(event.part as UIChunk);
          else if (event.type === 'turn-end') {
            // A turn gone before any of its parts reached this replica (a newer one replaced it) shows nothing.
            if (event.lost && turn.chunks.length > 0) session.broadcast({ type: 'error', errorText: 'The server replica running this turn stopped before the turn ended.' });
            turn.end();
            const next = turn.next;
            if (next !== undefined && session.turn === turn && this.live.get(session.id) === session) void this.followRemote(session, cluster, next).catch(() => undefined);
          }
        }),
      );
      turn.stopFollowing = stop;
      // Ended here while the follower started (the session left the hub).
      if (turn.done) stop();
    } catch (error) {
      turn.end();
      throw error;
    }
    return turn;
  }

  /**
   * Aborts the session's running turn; true when one was running. In replica mode a turn running
   * on another replica is aborted there (`replica_unreachable` when that replica does not answer).
   */
  async abort(owner: string, id: string): Promise<boolean> {
    const session = this.get(owner, id);
    const cluster = this.options.cluster;
    if (cluster && !session.runsHere) {
      const forwarded = await forwardControl(cluster, id, { type: 'abort', owner });
      if (forwarded) return forwarded.aborted;
    }
    return session.stop();
  }

  /** Answers a permission ask of the owner's session; in replica mode also one pending on the replica running its turn. */
  async answer(owner: string, id: string, requestId: string, decision: 'allow' | 'allow_always' | 'deny', message?: string): Promise<PermissionAskData> {
    const session = this.get(owner, id);
    const answered = session.settle(requestId, decision, message);
    if (answered) return answered;
    const cluster = this.options.cluster;
    if (cluster && !session.runsHere) {
      const forwarded = await forwardControl(cluster, id, { type: 'permission', owner, requestId, decision, ...(message === undefined ? {} : { message }) });
      if (forwarded?.permission) return forwarded.permission;
    }
    throw new HubError('permission_request_not_found', 404, `No pending permission request ${requestId.slice(0, 80)} in this session (already answered or timed out).`);
  }

  /**
   * What a client sees of the owner's session (`open`, then its summary). In replica mode, while
   * its turn runs on another replica, `running` and `pendingPermissions` come from that replica
   * (when it does not answer, this replica's view is returned).
   */
  summary(owner: string, id: string): Promise<SessionSummary> {
    return this.use(owner, id, (session) => {
      const summary = session.summary();
      const cluster = this.options.cluster;
      if (!cluster || session.runsHere) return summary;
      return this.withRemoteTurn(cluster, owner, summary);
    });
  }

  async command(owner: string, id: string, name: string, args: string): Promise<ICommandResult> {
    const command = canonicalName(name);
    // `exclusive` opens the owner's session first: a token learns nothing about sessions that are not its own.
    const result = await this.exclusive(owner, id, (live) => {
      if (this.options.allowHostCommands !== true && isHostCommand(live.interactive.listCommands(), command)) {
        throw new HubError('command_not_allowed', 403, `/${command} changes the server for every client's sessions, so clients may not run it; run it in a terminal on the server host.`, 'name');
      }
      return live.interactive.executeCommand(name, args);
    });
    if (!result) throw new HubError('unknown_command', 404, `No command /${name.slice(0, 80)}.`, 'name');
    return result;
  }

  /** Ends every session (saving them) and refuses new work. */
  async shutdown(): Promise<void> {
    this.closing = true;
    const sessions = [...this.live.values()];
    this.live.clear();
    this.liveByOwner.clear();
    for (const watch of this.turnWatches.values()) void watch.stop.then((stop) => stop(), () => undefined);
    this.turnWatches.clear();
    for (const stop of this.unroute.values()) stop();
    this.unroute.clear();
    for (const session of sessions) if (session.turn?.remote) session.turn.end();
    await Promise.all(
      sessions.map((session) => this.endClientUse(session, false)),
    );
  }

  get size(): number {
    return this.live.size;
  }

  /**
   * Why `owner` may not start one more turn through another transport (`/mcp`) that already runs
   * `otherTurns` of its turns, or `undefined` when it may: the per-token limit covers them all.
   */
  turnRefusal(owner: string, otherTurns: number): string | undefined {
    const limit = this.options.maxConcurrentTurnsPerOwner ?? 4;
    let running = otherTurns;
    for (const session of this.liveByOwner.get(owner) ?? []) if (session.running) running += 1;
    return running >= limit ? `At most ${limit} turns may run at once per token (over HTTP, WebSocket and MCP together); wait for one to end.` : undefined;
  }

  /** True when `owner` already runs as many turns here (and through other transports) as it may. */
  private atTurnLimit(owner: string): boolean {
    const mine = this.liveByOwner.get(owner);
    const limit = this.options.maxConcurrentTurnsPerOwner ?? 4;
    let running = this.options.externalTurns?.(owner) ?? 0;
    if (running >= limit) return true;
    if (!mine || mine.size + running < limit) return false;
    for (const session of mine) if (session.running && ++running >= limit) return true;
    return false;
  }

  /**
   * Makes room for one more live session of `owner`, or refuses (`too_many_sessions`). In replica
   * mode a live session is only a copy of a stored one, which any replica reopens on its next
   * request: the least recently used idle copy (no turn, change under way, watcher or pending
   * ask; not the host's) is let go, so reading its sessions never locks a token out and memory
   * stays bounded.
   */
  private async makeRoom(owner: string): Promise<void> {
    const limit = this.options.maxSessionsPerOwner ?? 100;
    const idle = (session: HubSession): boolean => !session.hostOwned && !session.running && session.busy === 0 && session.watcherCount === 0 && session.pending.size === 0;
    for (;;) {
      const mine = this.liveByOwner.get(owner);
      if ((mine?.size ?? 0) < limit) return;
      const victim = this.options.cluster ? [...(mine ?? [])].find(idle) : undefined;
      if (!victim) throw new HubError('too_many_sessions', 429, `At most ${limit} live sessions per token; delete one first.`);
      await this.gates.run(victim.id, async () => {
        // Chosen before its gate was ours: what ran in the gate meanwhile (a reopen for a request,
        // another `makeRoom`) may have taken it into use or away. Then the loop chooses again.
        if (this.live.get(victim.id) !== victim || !idle(victim)) return;
        this.forget(victim);
        // Ended as a stale copy is: its background tasks go on (they belong to the stored session).
        await this.endCopy(victim.interactive, false, false);
      });
    }
  }

  /** Marks `session` as just used: the owner's set keeps its sessions least recently used first. */
  private touch(session: HubSession): void {
    const mine = this.liveByOwner.get(session.owner);
    if (!mine?.delete(session)) return;
    mine.add(session);
  }

  /** Runs a turn of `session`; in replica mode its events are published and the lease released at its end. */
  private runTurn(session: HubSession, prompt: string, replica?: { cluster: SessionCluster; lease: SessionLease; stopServing: () => void }): Turn {
    const turn = new Turn(randomUUID());
    session.turn = turn;
    const publish = replica ? (event: Parameters<SessionCluster['publish']>[1]) => replica.cluster.publish(session.id, event) : undefined;
    publish?.({ type: 'turn-start', turnId: turn.id });
    const mapper = new UiStreamMapper((chunk) => {
      session.broadcast(chunk);
      publish?.({ type: 'turn-part', turnId: turn.id, part: chunk });
    });
    session.mapper = mapper;
    const interactive = session.interactive;
    const offSession = interactive.getSession().subscribe((event) => mapper.sessionEvent(event));
    const offTool = interactive.on('tool_end', (state) => mapper.toolEnd(state));
    const offBackground = interactive.on('background_task_event', (event) => mapper.background(event));
    let interrupted = false;
    const offInterrupted = interactive.on('interrupted', () => (interrupted = true));
    // A lease lost mid-turn (another replica may now change the session): stop; the save that follows is refused if it would overwrite.
    const onLost = (): void => interactive.abort();
    replica?.lease.signal.addEventListener('abort', onLost, { once: true });
    mapper.start();
    const finish = (): void => {
      offSession();
      offTool();
      offBackground();
      offInterrupted();
      replica?.lease.signal.removeEventListener('abort', onLost);
      turn.end();
      // The end is published before the lock is released: a follower that finds the lock free has seen it.
      publish?.({ type: 'turn-end', turnId: turn.id });
      // Serving stops after the release: a replica that finds nobody serving finds the turn ended too.
      void replica?.lease.release().finally(replica.stopServing);
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

  /** Runs `work` on the owner's session; in replica mode under its cluster lock, on the newest copy. */
  private exclusive<T>(owner: string, id: string, work: (session: HubSession) => Promise<T>): Promise<T> {
    const cluster = this.options.cluster;
    return this.use(owner, id, async (session) => {
      if (!cluster) return work(session);
      // A turn running here holds the lock already, and its copy is the newest.
      if (session.turn && !session.turn.done && !session.turn.remote) return work(session);
      const lease = await this.lock(id, cluster);
      try {
        return await work(await this.refresh(session, cluster));
      } finally {
        await lease.release();
      }
    });
  }

  private async lock(id: string, cluster: SessionCluster): Promise<SessionLease> {
    try {
      return await cluster.lock(id, { waitMs: 0 });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'session_busy') {
        throw new HubError('session_busy', 409, 'Another server replica is running a turn in this session (or changing it); wait for it to end, then retry.');
      }
      throw unavailable(error);
    }
  }

  /** `session`, reopened from the store first when another replica saved it since this copy was loaded. */
  private async refresh(session: HubSession, cluster: SessionCluster): Promise<HubSession> {
    // A turn running here holds the lock: this copy is the one being written.
    if (session.turn && !session.turn.done && !session.turn.remote) return session;
    if (await this.clustered(() => cluster.isCurrent(session.id))) return session;
    return this.gates.run(session.id, async () => {
      if (this.live.get(session.id) !== session) throw new HubError('session_not_found', 404, `No session ${session.id}.`);
      if (await this.clustered(() => cluster.isCurrent(session.id))) return session;
      const head = await this.clustered(() => cluster.head(session.id));
      const old = session.interactive;
      const mode = old.getSession().getPermissionMode();
      session.cancelAsks();
      // The stale copy ends first, unsaved: its save could only be refused (it would overwrite newer entries).
      cluster.discard?.(session.id);
      await old.shutdown({ reason: 'other', cancelBackgroundTasks: false }).catch(() => undefined);
      if (!head) {
        this.forget(session);
        throw new HubError('session_not_found', 404, `No session ${session.id}.`);
      }
      let next: InteractiveSession;
      try {
        next = await this.options.sessions.open({ cwd: head.cwd, resumeSessionId: session.id });
      } catch (error) {
        this.forget(session);
        throw unavailable(error);
      }
      next.getSession().setPermissionMode(mode);
      session.reopened(next);
      return session;
    });
  }

  /** A stored session not live here, loaded for its owner (anyone else gets 404). */
  private async load(owner: string, id: string, cluster: SessionCluster): Promise<HubSession> {
    const head = await this.clustered(() => cluster.head(id));
    if (!head || head.fields[this.ownerField] !== owner || !this.roots.contains(head.cwd)) throw new HubError('session_not_found', 404, `No session ${id}.`);
    await this.makeRoom(owner);
    let interactive: InteractiveSession;
    try {
      interactive = await this.options.sessions.open({ cwd: head.cwd, resumeSessionId: id });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'session_not_found') throw new HubError('session_not_found', 404, `No session ${id}.`);
      throw unavailable(error);
    }
    if (interactive.getSession().getRecordField(this.ownerField) !== owner) {
      await interactive.shutdown({ reason: 'other', cancelBackgroundTasks: false }).catch(() => undefined);
      throw new HubError('session_not_found', 404, `No session ${id}.`);
    }
    return this.adopt(owner, head.cwd, interactive, head.createdAt);
  }

  /** A cluster call; its failure (Redis away) is a 503 the client may retry. */
  private async clustered<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw unavailable(error);
    }
  }

  private async unload(session: HubSession): Promise<void> {
    this.forget(session);
    await this.endClientUse(session, true);
  }

  /**
   * Ends what the clients had of `session`: its turn stopped and this copy ended (saved under
   * the lock, see `endCopy`). A session the host offered stays the host's: only a turn a client
   * started here is stopped, the host's own work in it is left alone, and it is not ended.
   */
  private async endClientUse(session: HubSession, cancelBackgroundTasks: boolean): Promise<void> {
    if (session.hostOwned) {
      if (session.runsHere) session.stop();
      else session.cancelAsks();
      return;
    }
    const holdsLock = session.runsHere;
    session.stop();
    await this.endCopy(session.interactive, holdsLock, cancelBackgroundTasks);
  }

  /**
   * Ends this process's copy of a session, saving it. In replica mode the save must not overwrite
   * a turn another replica runs at the copy's revision: it is made under the session's lock
   * (taken here unless a turn running here holds it), and the copy ends unsaved when the lock is
   * busy or Redis cannot be reached.
   */
  private async endCopy(interactive: InteractiveSession, holdsLock: boolean, cancelBackgroundTasks: boolean): Promise<void> {
    const cluster = this.options.cluster;
    let lease: SessionLease | undefined;
    if (cluster && !holdsLock) {
      lease = await cluster.lock(interactive.getSessionId(), { waitMs: 0 }).catch(() => undefined);
      if (!lease) cluster.discard?.(interactive.getSessionId());
    }
    try {
      await interactive.shutdown({ reason: 'other', cancelBackgroundTasks }).catch(() => undefined);
    } finally {
      await lease?.release();
    }
  }

  /** Takes the session out of the hub (its approval route too, and the follower of a turn another replica runs). */
  private forget(session: HubSession): void {
    if (this.live.get(session.id) !== session) return;
    if (session.turn?.remote) session.turn.end();
    this.live.delete(session.id);
    const mine = this.liveByOwner.get(session.owner);
    mine?.delete(session);
    if (mine?.size === 0) this.liveByOwner.delete(session.owner);
    this.unroute.get(session.id)?.();
    this.unroute.delete(session.id);
  }

  private async resume(owner: string, storedId: string, mode: PermissionMode | undefined): Promise<HubSession> {
    if (!isValidSessionId(storedId)) throw new HubError('invalid_session_id', 400, `"${String(storedId).slice(0, 80)}" is not a session id.`, 'resume');
    if (this.options.cluster) {
      let session: HubSession;
      try {
        session = await this.open(owner, storedId);
      } catch (error) {
        if (error instanceof HubError && error.code === 'session_not_found') throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
        throw error;
      }
      if (mode !== undefined) session.interactive.getSession().setPermissionMode(mode);
      return session;
    }
    const existing = this.live.get(storedId);
    if (existing) {
      if (existing.owner !== owner) throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
      // Live already: the request's mode applies as it would to a session opened from the store.
      if (mode !== undefined) existing.interactive.getSession().setPermissionMode(mode);
      return existing;
    }
    const stored = (await this.options.sessions.list()).find((entry) => entry.id === storedId);
    if (!stored || !this.roots.contains(stored.cwd)) throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
    const interactive = await this.options.sessions.open({ cwd: stored.cwd, resumeSessionId: storedId });
    const recorded = interactive.getSession().getRecordField(this.ownerField);
    if (recorded !== owner) {
      await interactive.shutdown({ reason: 'other', cancelBackgroundTasks: false }).catch(() => undefined);
      throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
    }
    if (mode !== undefined) interactive.getSession().setPermissionMode(mode);
    return this.adopt(owner, stored.cwd, interactive);
  }

  /**
   * Offers a session the host opened itself to `owner`'s clients (`ITransportAdapter.attach`):
   * it must work inside the allowed roots. A session already here is returned as it is.
   */
  offer(owner: string, interactive: InteractiveSession): HubSession {
    const existing = this.live.get(interactive.getSessionId());
    if (existing) return existing;
    const cwd = interactive.getSession().cwd;
    if (!this.roots.contains(cwd)) throw new HubError('cwd_not_allowed', 403, `The session works in ${cwd}, outside the allowed roots.`, 'cwd');
    return this.adopt(owner, cwd, interactive, new Date().toISOString(), true);
  }

  private adopt(owner: string, cwd: string, interactive: InteractiveSession, createdAt = new Date().toISOString(), hostOwned = false): HubSession {
    // The refusal holds for every later switch too (`/permissions`, a WebSocket command), not only at creation.
    if (this.options.allowBypassPermissions !== true) interactive.getSession().limitPermissionModes(CLIENT_MODES);
    const session = new HubSession(interactive.getSessionId(), owner, cwd, createdAt, interactive, hostOwned);
    this.live.set(session.id, session);
    const mine = this.liveByOwner.get(owner);
    if (mine) mine.add(session);
    else this.liveByOwner.set(owner, new Set([session]));
    const unrouteAsks = this.options.approvals.route(session.id, { requestApproval: (request) => session.ask(request, this.options.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS) });
    this.unroute.set(session.id, () => {
      unrouteAsks();
      session.dispose();
    });
    return session;
  }
}

/** The command `name` (any case) is listed with `scope: 'host'`. */
function isHostCommand(commands: readonly ICommandInfo[], name: string): boolean {
  const wanted = name.toLowerCase();
  return commands.some((command) => command.scope === 'host' && command.name.toLowerCase() === wanted);
}
