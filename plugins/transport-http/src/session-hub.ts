import { isValidSessionId, parsePermissionMode, type ICommandInfo, type ICommandResult, type PermissionMode } from '@tessera/contracts';
import { canonicalName, type InteractiveSession } from '@tessera/kernel';
import type { SessionCluster, SessionLease } from '@tessera/session-hub';
import { AllowedRoots } from './allowed-roots.js';
import { controlHandler, forwardControl, withRemoteTurn } from './hub-control.js';
import { HubError } from './hub-error.js';
import { clustered, endCopy, lockSession, storedSummary, unavailable } from './hub-replica.js';
import { LiveSessions, shuttingDown } from './live-sessions.js';
import { HubSession, Turn, type SessionSummary } from './hub-session.js';
import { RemoteTurns } from './remote-turns.js';
import { runTurn } from './run-turn.js';
import type { SessionHubOptions } from './session-hub-options.js';
import type { PermissionAskData, UIChunk } from './ui-stream.js';

export { HubError } from './hub-error.js';
export { HubSession, Turn, type SessionSummary } from './hub-session.js';
export type { SessionHubOptions } from './session-hub-options.js';

/**
 * Many `InteractiveSession`s in one process, each owned by one client identity (a bearer token's
 * id): a client sees, streams, aborts and answers only its own. Sessions work inside the
 * configured roots; stored sessions are resumed only by their owner.
 */
export class SessionHub {
  /** The live sessions, their owners' room and the opens in flight. */
  private readonly registry: LiveSessions;
  /** Replica mode: the turns of live sessions that run on another replica, followed here. */
  private readonly remoteTurns: RemoteTurns | undefined;
  private readonly roots: AllowedRoots;
  private readonly ownerField: string;

  constructor(private readonly options: SessionHubOptions) {
    this.registry = new LiveSessions(options);
    this.roots = new AllowedRoots(options.allowedRoots);
    this.ownerField = options.ownerField ?? 'serverOwner';
    if (options.cluster) this.remoteTurns = new RemoteTurns({ cluster: options.cluster, live: (id) => this.registry.live.get(id) });
  }

  /** Creates a session (or resumes a stored one of the same owner). */
  async create(owner: string, request: { cwd?: string; name?: string; model?: string; permissionMode?: string; resume?: string }): Promise<HubSession> {
    if (this.registry.closing) throw shuttingDown();
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
    return this.registry.withRoom(owner, async (slot) => {
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
          stored = await clustered(() => cluster.isCurrent(interactive.getSessionId()));
        } finally {
          // Not stored, or the check itself failed (Redis away): the session never reaches the hub, so it ends here.
          if (!stored) await interactive.shutdown({ reason: 'other', cancelBackgroundTasks: false }).catch(() => undefined);
        }
        if (!stored) throw new HubError('store_unavailable', 503, 'The session could not be stored (the shared session store did not take it); retry in a moment.');
      }
      return this.registry.adoptOpened(owner, cwd, interactive, { slot });
    });
  }

  /**
   * Aborts the turn running here in `owner`'s session `id` when nobody follows it any more: no
   * stream is reading it and no WebSocket watches the session (a client that started it went
   * away). True when a turn was aborted.
   */
  abortIfUnwatched(owner: string, id: string): boolean {
    const session = this.registry.live.get(id);
    if (!session || session.owner !== owner || !session.runsHere) return false;
    if ((session.turn?.viewers ?? 0) > 0 || session.watcherCount > 0) return false;
    return session.stop();
  }

  /** The owner's sessions live in this process. */
  list(owner: string): SessionSummary[] {
    return this.registry.owners.of(owner).map((session) => session.summary());
  }

  /** The owner's sessions: live here and, in replica mode, the owner's stored ones (newest first) not live here. */
  async sessionsOf(owner: string): Promise<SessionSummary[]> {
    const cluster = this.options.cluster;
    if (!cluster) return this.list(owner);
    const live = this.registry.owners.of(owner);
    const stored = await clustered(() => cluster.heads());
    const others = stored.filter((head) => head.fields[this.ownerField] === owner && !this.registry.live.has(head.id) && this.roots.contains(head.cwd));
    // A turn running on another replica shows as running, with its asks, as in `summary`.
    return Promise.all([
      ...live.map((session) => (session.runsHere ? session.summary() : withRemoteTurn(cluster, owner, session.summary()))),
      ...others.map((head) => withRemoteTurn(cluster, owner, storedSummary(head))),
    ]);
  }

  /** The owner's live session; another owner's (or an unknown id) is `session_not_found`, never a hint it exists. */
  get(owner: string, id: string): HubSession {
    if (!isValidSessionId(id)) throw new HubError('invalid_session_id', 400, `"${String(id).slice(0, 80)}" is not a session id.`, 'id');
    const session = this.registry.live.get(id);
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
    if (this.registry.closing) throw shuttingDown();
    // Held from the moment it is found (a live copy) or adopted (inside its gate), before any wait:
    // `makeRoom` checks in the same gate, so it never lets go of a copy a request is opening.
    const live = this.registry.live.get(id);
    let held: HubSession;
    if (live) {
      if (live.owner !== owner) throw new HubError('session_not_found', 404, `No session ${id}.`);
      live.busy += 1;
      this.registry.owners.touch(live);
      held = live;
    } else {
      held = await this.registry.gates.run(id, async () => {
        const loaded = this.registry.live.get(id) ? this.get(owner, id) : await this.load(owner, id, cluster);
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
      return this.remoteTurns ? this.remoteTurns.watch(session, stopWatching) : stopWatching;
    });
  }

  /**
   * Stops following `turn` of the owner's session, which another replica runs, once nobody here
   * reads it (no stream, no WebSocket watcher): its Redis reader stops now, not at the turn's
   * end. A client that comes back follows it again, replayed from its start (`attach`, `watch`).
   */
  unfollowIfUnwatched(owner: string, id: string, turn: Turn): void {
    this.remoteTurns?.unfollowIfUnwatched(owner, id, turn);
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
    await this.registry.gates.run(id, async () => {
      await this.registry.unload(session);
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
      // A turn followed from another replica may have ended there before this replica read its
      // end: the cluster lock decides (`session_busy` while that turn runs), not this view of it.
      const followed = cluster !== undefined && !session.starting && session.turn?.remote === true && !session.turn.done;
      if (session.running && !followed) throw new HubError('turn_in_progress', 409, 'A turn is already running in this session; wait for it or abort it.');
      if (this.atTurnLimit(owner)) {
        throw new HubError('too_many_turns', 429, `At most ${this.options.maxConcurrentTurnsPerOwner ?? 4} turns may run at once per token.`);
      }
      if (!cluster) return runTurn(session, prompt);
      session.starting = true;
      let lease: SessionLease | undefined;
      let stopServing: (() => void) | undefined;
      try {
        lease = await lockSession(cluster, id);
        // The followed turn ended (its end is published before its lock is released): its watchers get it whole first.
        await this.remoteTurns?.settle(session);
        await this.refresh(session, cluster);
        if (this.registry.live.get(id) !== session) throw new HubError('session_not_found', 404, `No session ${id}.`);
        // Other replicas' clients reach the turn (abort, permission answers) through the cluster while it runs here.
        stopServing = await clustered(() => cluster.serveControl(id, controlHandler(session)));
        return runTurn(session, prompt, { cluster, lease, stopServing });
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
      return this.remoteTurns?.attach(session);
    });
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
      return withRemoteTurn(cluster, owner, summary);
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

  /** Ends every session (saving them), waits for opens in flight and refuses new work. */
  async shutdown(): Promise<void> {
    this.remoteTurns?.stop();
    await this.registry.close();
  }

  get size(): number {
    return this.registry.size;
  }

  /**
   * Why `owner` may not start one more turn through another transport (`/mcp`) that already runs
   * `otherTurns` of its turns, or `undefined` when it may: the per-token limit covers them all.
   */
  turnRefusal(owner: string, otherTurns: number): string | undefined {
    const limit = this.options.maxConcurrentTurnsPerOwner ?? 4;
    return otherTurns + this.registry.owners.running(owner) >= limit ? `At most ${limit} turns may run at once per token (over HTTP, WebSocket and MCP together); wait for one to end.` : undefined;
  }

  /** True when `owner` already runs as many turns here (and through other transports) as it may. */
  private atTurnLimit(owner: string): boolean {
    const limit = this.options.maxConcurrentTurnsPerOwner ?? 4;
    return (this.options.externalTurns?.(owner) ?? 0) + this.registry.owners.running(owner) >= limit;
  }

  /** Runs `work` on the owner's session; in replica mode under its cluster lock, on the newest copy. */
  private exclusive<T>(owner: string, id: string, work: (session: HubSession) => Promise<T>): Promise<T> {
    const cluster = this.options.cluster;
    return this.use(owner, id, async (session) => {
      if (!cluster) return work(session);
      // A turn running here holds the lock already, and its copy is the newest.
      if (session.turn && !session.turn.done && !session.turn.remote) return work(session);
      const lease = await lockSession(cluster, id);
      try {
        return await work(await this.refresh(session, cluster));
      } finally {
        await lease.release();
      }
    });
  }

  /** `session`, reopened from the store first when another replica saved it since this copy was loaded. */
  private async refresh(session: HubSession, cluster: SessionCluster): Promise<HubSession> {
    // A turn running here holds the lock: this copy is the one being written.
    if (session.turn && !session.turn.done && !session.turn.remote) return session;
    if (await clustered(() => cluster.isCurrent(session.id))) return session;
    return this.registry.gates.run(session.id, async () => {
      if (this.registry.live.get(session.id) !== session) throw new HubError('session_not_found', 404, `No session ${session.id}.`);
      if (await clustered(() => cluster.isCurrent(session.id))) return session;
      const head = await clustered(() => cluster.head(session.id));
      const old = session.interactive;
      const mode = old.getSession().getPermissionMode();
      session.cancelAsks();
      // The stale copy ends first, unsaved: its save could only be refused (it would overwrite newer entries).
      cluster.discard?.(session.id);
      await old.shutdown({ reason: 'other', cancelBackgroundTasks: false }).catch(() => undefined);
      if (!head) {
        this.registry.forget(session);
        throw new HubError('session_not_found', 404, `No session ${session.id}.`);
      }
      return this.registry.inFlight(() => this.reopen(session, head.cwd, mode, cluster));
    });
  }

  /** `refresh`'s new copy of `session`, opened from the store. */
  private async reopen(session: HubSession, cwd: string, mode: PermissionMode, cluster: SessionCluster): Promise<HubSession> {
    let next: InteractiveSession;
    try {
      next = await this.options.sessions.open({ cwd, resumeSessionId: session.id });
    } catch (error) {
      this.registry.forget(session);
      throw unavailable(error);
    }
    // `shutdown` ended the old copy while this one opened: nothing would end this one.
    if (this.registry.closing) {
      await endCopy(cluster, next, { holdsLock: false, cancelBackgroundTasks: false });
      throw shuttingDown();
    }
    next.getSession().setPermissionMode(mode);
    session.reopened(next);
    return session;
  }

  /** A stored session not live here, loaded for its owner (anyone else gets 404). */
  private async load(owner: string, id: string, cluster: SessionCluster): Promise<HubSession> {
    const head = await clustered(() => cluster.head(id));
    if (!head || head.fields[this.ownerField] !== owner || !this.roots.contains(head.cwd)) throw new HubError('session_not_found', 404, `No session ${id}.`);
    return this.registry.withRoom(owner, async (slot) => {
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
      return this.registry.adoptOpened(owner, head.cwd, interactive, { createdAt: head.createdAt, slot });
    });
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
    // In the id's gate (as `delete` is): two resumes of one stored session at the same moment
    // open it once, and the second gets the live session the first opened. Two copies would
    // each save over the other's entries.
    return this.registry.gates.run(storedId, async () => {
      const existing = this.registry.live.get(storedId);
      if (existing) {
        if (existing.owner !== owner) throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
        // Live already: the request's mode applies as it would to a session opened from the store.
        if (mode !== undefined) existing.interactive.getSession().setPermissionMode(mode);
        return existing;
      }
      if (this.registry.closing) throw shuttingDown();
      const stored = (await this.options.sessions.list()).find((entry) => entry.id === storedId);
      if (!stored || !this.roots.contains(stored.cwd)) throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
      return this.registry.withRoom(owner, async (slot) => {
        const interactive = await this.options.sessions.open({ cwd: stored.cwd, resumeSessionId: storedId });
        const recorded = interactive.getSession().getRecordField(this.ownerField);
        if (recorded !== owner) {
          await interactive.shutdown({ reason: 'other', cancelBackgroundTasks: false }).catch(() => undefined);
          throw new HubError('session_not_found', 404, `No stored session ${storedId}.`);
        }
        if (mode !== undefined) interactive.getSession().setPermissionMode(mode);
        return this.registry.adoptOpened(owner, stored.cwd, interactive, { slot });
      });
    });
  }

  /**
   * Offers a session the host opened itself to `owner`'s clients (`ITransportAdapter.attach`):
   * it must work inside the allowed roots. A session already here is returned as it is.
   */
  offer(owner: string, interactive: InteractiveSession): HubSession {
    const existing = this.registry.live.get(interactive.getSessionId());
    if (existing) return existing;
    const cwd = interactive.getSession().cwd;
    if (!this.roots.contains(cwd)) throw new HubError('cwd_not_allowed', 403, `The session works in ${cwd}, outside the allowed roots.`, 'cwd');
    return this.registry.adopt(owner, cwd, interactive, { hostOwned: true });
  }

}

/** The command `name` (any case) is listed with `scope: 'host'`. */
function isHostCommand(commands: readonly ICommandInfo[], name: string): boolean {
  const wanted = name.toLowerCase();
  return commands.some((command) => command.scope === 'host' && command.name.toLowerCase() === wanted);
}
