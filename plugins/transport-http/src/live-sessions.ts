import { PERMISSION_MODES, type PermissionMode } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import { HubError } from './hub-error.js';
import { endCopy, KeyedQueue } from './hub-replica.js';
import { HubSession } from './hub-session.js';
import { OwnerSessions } from './owner-sessions.js';
import type { SessionHubOptions } from './session-hub-options.js';

/** The modes a client may switch a session to when the server does not allow `bypassPermissions`. */
const CLIENT_MODES: readonly PermissionMode[] = PERMISSION_MODES.filter((mode) => mode !== 'bypassPermissions');

const DEFAULT_PERMISSION_TIMEOUT_MS = 60_000;

/** The refusal of work that comes, or ends, after `shutdown` began. */
export function shuttingDown(): HubError {
  return new HubError('shutting_down', 503, 'The server is shutting down.');
}

/**
 * The sessions live in a `SessionHub` and how they come and go: the room each owner has, opens
 * in flight, adopting an opened session (its approval route) and taking one out again. The hub
 * decides what to open and for whom; this keeps the books.
 */
export class LiveSessions {
  readonly live = new Map<string, HubSession>();
  /** The live sessions of each owner and the ones being opened for it: per-token limits and lists never scan every session. */
  readonly owners = new OwnerSessions();
  /** Replica mode: the work on each session id that must not overlap (loading, reopening); without a cluster, resuming and deleting one id. */
  readonly gates = new KeyedQueue();
  /** Each live session's approval route, removed when the session leaves the hub. */
  private readonly unroute = new Map<string, () => void>();
  /** Opens under way (`inFlight`): `close` waits for them. */
  private readonly opening = new Set<Promise<unknown>>();
  /** Set by `close`: no session is adopted any more. */
  closing = false;

  constructor(private readonly options: SessionHubOptions) {}

  get size(): number {
    return this.live.size;
  }

  /**
   * Takes every session out and ends what the clients had of it (saving it), then waits for the
   * opens in flight: one that ends from now on finds the hub closed and ends its session itself.
   */
  async close(): Promise<void> {
    this.closing = true;
    const sessions = [...this.live.values()];
    this.live.clear();
    this.owners.clear();
    for (const stop of this.unroute.values()) stop();
    this.unroute.clear();
    for (const session of sessions) if (session.turn?.remote) session.turn.end();
    await Promise.all(sessions.map((session) => this.endClientUse(session, false)));
    // An open that began before `closing` was set may start another (a reopen): wait until none is left.
    while (this.opening.size > 0) await Promise.allSettled([...this.opening]);
  }

  /**
   * Makes room for one more live session of `owner`, or refuses (`too_many_sessions`). In replica
   * mode a live session is only a copy of a stored one, which any replica reopens on its next
   * request: the least recently used idle copy (no turn, change under way, watcher or pending
   * ask; not the host's) is let go, so reading its sessions never locks a token out and memory
   * stays bounded. The room is taken at once (`OwnerSessions.reserve`), so concurrent opens of
   * one owner never share it, and held until the returned function is called: by `adopt` once
   * the new session fills it, or when the open fails.
   */
  private async makeRoom(owner: string): Promise<() => void> {
    const limit = this.options.maxSessionsPerOwner ?? 100;
    const idle = (session: HubSession): boolean => !session.hostOwned && !session.running && session.busy === 0 && session.watcherCount === 0 && session.pending.size === 0;
    for (;;) {
      // Sessions being opened for the owner count: they hold their room already.
      if (this.owners.count(owner) < limit) return this.owners.reserve(owner);
      const victim = this.options.cluster ? this.owners.of(owner).find(idle) : undefined;
      if (!victim) throw new HubError('too_many_sessions', 429, `At most ${limit} live sessions per token; delete one first.`);
      await this.gates.run(victim.id, async () => {
        // Chosen before its gate was ours: what ran in the gate meanwhile (a reopen for a request,
        // another `makeRoom`) may have taken it into use or away. Then the loop chooses again.
        if (this.live.get(victim.id) !== victim || !idle(victim)) return;
        this.forget(victim);
        // Ended as a stale copy is: its background tasks go on (they belong to the stored session).
        await endCopy(this.options.cluster, victim.interactive, { holdsLock: false, cancelBackgroundTasks: false });
      });
    }
  }

  /**
   * Runs `open` in room made for one more session of `owner` (`makeRoom`); `open` passes `slot`
   * to `adopt` with the session it opened. The room is given back when `open` fails.
   */
  withRoom<T>(owner: string, open: (slot: () => void) => Promise<T>): Promise<T> {
    // Tracked from here, making room included (in replica mode it may wait for a copy to end).
    return this.inFlight(async () => {
      const slot = await this.makeRoom(owner);
      try {
        return await open(slot);
      } finally {
        slot();
      }
    });
  }

  /**
   * Runs an open and tracks it until it has settled: `close` waits for it, so a session an open
   * brings after `close` began has been ended (`adoptOpened`) by the time `close` resolves. Once
   * `close` began, no open starts (`shutting_down`).
   */
  async inFlight<T>(open: () => Promise<T>): Promise<T> {
    if (this.closing) throw shuttingDown();
    const work = open();
    this.opening.add(work);
    try {
      return await work;
    } finally {
      this.opening.delete(work);
    }
  }

  async unload(session: HubSession): Promise<void> {
    this.forget(session);
    await this.endClientUse(session, true);
  }

  /**
   * Ends what the clients had of `session`: its turn stopped and this copy ended (saved under
   * the lock, see `endCopy`). A session the host offered stays the host's: only a turn a client
   * started here is stopped, the host's own work in it is left alone, and it is not ended.
   */
  async endClientUse(session: HubSession, cancelBackgroundTasks: boolean): Promise<void> {
    if (session.hostOwned) {
      if (session.runsHere) session.stop();
      else session.cancelAsks();
      return;
    }
    const holdsLock = session.runsHere;
    session.stop();
    await endCopy(this.options.cluster, session.interactive, { holdsLock, cancelBackgroundTasks });
  }

  /** Takes the session out of the hub (its approval route too, and the follower of a turn another replica runs). */
  forget(session: HubSession): void {
    if (this.live.get(session.id) !== session) return;
    if (session.turn?.remote) session.turn.end();
    this.live.delete(session.id);
    this.owners.delete(session);
    this.unroute.get(session.id)?.();
    this.unroute.delete(session.id);
  }

  /**
   * `adopt` for a session the hub opened itself. An open that ends after `close` began finds the
   * hub closed, so its session is ended here (nothing else would end it; `close` waits for this)
   * and the request is refused.
   */
  async adoptOpened(owner: string, cwd: string, interactive: InteractiveSession, options: { createdAt?: string; slot: () => void }): Promise<HubSession> {
    if (this.closing) {
      await endCopy(this.options.cluster, interactive, { holdsLock: false, cancelBackgroundTasks: false });
      throw shuttingDown();
    }
    return this.adopt(owner, cwd, interactive, options);
  }

  /**
   * Makes `interactive` a live session of `owner`. `slot`: the room `makeRoom` took for it, which
   * the session now fills (given back in the same step, so the owner's count never drops between).
   */
  adopt(owner: string, cwd: string, interactive: InteractiveSession, options: { createdAt?: string; hostOwned?: boolean; slot?: () => void } = {}): HubSession {
    // The refusal holds for every later switch too (`/permissions`, a WebSocket command), not only at creation.
    if (this.options.allowBypassPermissions !== true) interactive.getSession().limitPermissionModes(CLIENT_MODES);
    const session = new HubSession(interactive.getSessionId(), owner, cwd, options.createdAt ?? new Date().toISOString(), interactive, options.hostOwned === true);
    this.live.set(session.id, session);
    this.owners.add(session);
    options.slot?.();
    const unrouteAsks = this.options.approvals.route(session.id, { requestApproval: (request) => session.ask(request, this.options.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS) });
    this.unroute.set(session.id, () => {
      unrouteAsks();
      session.dispose();
    });
    return session;
  }
}
