import type { SessionCluster } from '@tessera/session-hub';
import { clustered } from './hub-replica.js';
import { Turn, type HubSession } from './hub-session.js';
import type { UIChunk } from './ui-stream.js';

export interface RemoteTurnsOptions {
  cluster: SessionCluster;
  /** The session live in the hub under `id` now: a copy the hub let go of, or replaced, is no longer followed. */
  live: (id: string) => HubSession | undefined;
}

/** One session's subscription to the cluster's turn announcements: how many watchers need it, and how to stop it. */
interface TurnWatch {
  count: number;
  stop: Promise<() => void>;
}

/**
 * Replica mode: the turns of the hub's sessions that run on another replica, followed here so
 * this replica's clients stream them (`SessionHub.attach`, `SessionHub.watch`). A followed turn
 * is a remote `Turn` in `session.turn`, fed from the cluster and replayed from its start; its
 * follower stops when the turn ends, when nobody here reads it (`unfollowIfUnwatched`), or when
 * the session leaves the hub (which ends the `Turn`).
 */
export class RemoteTurns {
  /** Sessions whose turns the cluster announces to this replica. */
  private readonly watches = new Map<string, TurnWatch>();

  constructor(private readonly options: RemoteTurnsOptions) {}

  /** The turn of `session` running on another replica, followed from its start; `undefined` when none runs. */
  async attach(session: HubSession): Promise<Turn | undefined> {
    const { cluster } = this.options;
    const turnId = await clustered(() => cluster.runningTurn(session.id));
    if (turnId === undefined) return undefined;
    return this.follow(session, turnId);
  }

  /**
   * One more watcher of `session` (its listener added already; `stopWatching` removes it) also
   * gets the turns started on other replicas: the cluster announces each start and this replica
   * follows the turn, and one already running there is followed at once, replayed from its
   * start. Returns the watcher's unwatch; the last watcher to leave stops the following
   * (`unfollowIfUnwatched`) unless a stream still reads it.
   */
  async watch(session: HubSession, stopWatching: () => void): Promise<() => void> {
    const { cluster } = this.options;
    if (!cluster.watchTurns) return stopWatching;
    const sessionId = session.id;
    let entry = this.watches.get(sessionId);
    if (!entry) {
      const watch = clustered(() => cluster.watchTurns!(sessionId, (turnId) => this.followAnnounced(sessionId, turnId)));
      const created = { count: 0, stop: watch };
      entry = created;
      this.watches.set(sessionId, created);
      watch.catch(() => {
        if (this.watches.get(sessionId) === created) this.watches.delete(sessionId);
      });
    }
    const watching = entry;
    watching.count += 1;
    let stopped = false;
    const unwatch = (): void => {
      if (stopped) return;
      stopped = true;
      stopWatching();
      if (session.turn?.remote) this.unfollowIfUnwatched(session.owner, sessionId, session.turn);
      watching.count -= 1;
      if (watching.count > 0 || this.watches.get(sessionId) !== watching) return;
      this.watches.delete(sessionId);
      void watching.stop.then((stop) => stop(), () => undefined);
    };
    try {
      await watching.stop;
      // Announced before this watcher subscribed, or no longer followed here since the last watcher left.
      if (!session.running) {
        const turnId = await clustered(() => cluster.runningTurn(sessionId));
        if (turnId !== undefined && this.options.live(sessionId) === session) await this.follow(session, turnId);
      }
    } catch (error) {
      unwatch();
      throw error;
    }
    return unwatch;
  }

  /**
   * Lets the turns followed in `session` end before a turn starts here, this replica holding the
   * session's lock: they ended on their replica (an end is published before the lock is
   * released) and the follower reads the rest of each within moments, so the session's watchers
   * get them whole. One not ended within `waitMs` (its follower's reads failing) is ended here.
   */
  async settle(session: HubSession, waitMs = 2_000): Promise<void> {
    const deadline = Date.now() + waitMs;
    // A newer turn announced meanwhile is followed once the previous one ends (`Turn.next`): it ended too.
    for (let turn = session.turn; turn?.remote && !turn.done; turn = session.turn) {
      if (!(await ended(turn, deadline - Date.now()))) turn.end();
    }
  }

  /** See `SessionHub.unfollowIfUnwatched`. */
  unfollowIfUnwatched(owner: string, id: string, turn: Turn): void {
    const session = this.options.live(id);
    if (!session || session.owner !== owner || session.turn !== turn || !turn.remote) return;
    if (turn.viewers > 0 || session.watcherCount > 0) return;
    turn.end();
  }

  /** Stops every subscription to turn announcements (the hub shuts down). */
  stop(): void {
    for (const watch of this.watches.values()) void watch.stop.then((stop) => stop(), () => undefined);
    this.watches.clear();
  }

  /**
   * A turn of a watched session started somewhere: one started on another replica is followed
   * here, so its watchers get its parts. The announced turn itself, not whichever runs now: it
   * may have ended before this replica got to it (a short turn, a busy replica), and its stream
   * still replays it in full.
   */
  private followAnnounced(sessionId: string, turnId: string): void {
    const session = this.options.live(sessionId);
    // No watcher left (it went while the announcement was on its way): nobody here would read the turn.
    if (!session || session.turn?.id === turnId || session.watcherCount === 0) return;
    void this.follow(session, turnId).catch(() => undefined);
  }

  /** Follows turn `turnId` of another replica into `session.turn`, replayed from its start (an ended one too); a turn already followed or running here is kept. */
  private async follow(session: HubSession, turnId: string): Promise<Turn> {
    if (session.turn && !session.turn.done) {
      // A newer turn announced while the previous one's end is still on its way here: followed
      // right after that end (the session shows one turn at a time).
      if (session.turn.remote && session.turn.id !== turnId) session.turn.next = turnId;
      return session.turn;
    }
    const { cluster } = this.options;
    const turn = new Turn(turnId, true);
    session.turn = turn;
    try {
      const stop = await clustered(() =>
        cluster.follow(session.id, turnId, (event) => {
          if (event.type === 'turn-part') session.broadcast(event.part as UIChunk);
          else if (event.type === 'turn-end') {
            // A turn gone before any of its parts reached this replica (a newer one replaced it) shows nothing.
            if (event.lost && turn.chunks.length > 0) session.broadcast({ type: 'error', errorText: 'The server replica running this turn stopped before the turn ended.' });
            turn.end();
            const next = turn.next;
            if (next !== undefined && session.turn === turn && this.options.live(session.id) === session) void this.follow(session, next).catch(() => undefined);
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
}

/** Resolves true once `turn` ends, false when it has not after `waitMs`. */
function ended(turn: Turn, waitMs: number): Promise<boolean> {
  if (waitMs <= 0) return Promise.resolve(turn.done);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      off();
      resolve(false);
    }, waitMs);
    const off = turn.follow((chunk) => {
      if (chunk !== undefined) return;
      clearTimeout(timer);
      resolve(true);
    });
  });
}
