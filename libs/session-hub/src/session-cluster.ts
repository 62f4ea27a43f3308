import { createToken, TesseraError } from '@tessera/contracts';

/** What the hub needs of a stored session without loading its history: where it works and its record fields. */
export interface StoredSessionHead {
  id: string;
  cwd: string;
  createdAt: string;
  updatedAt: string;
  /** The record's fields beside history and messages (`name`, the owner field, …). */
  fields: Record<string, unknown>;
  /** How many saves the stored record has had; grows by one with each. */
  revision: number;
  messageCount: number;
}

/** An exclusive right to change one session, held by one replica until `release()`. */
export interface SessionLease {
  readonly sessionId: string;
  /**
   * Aborted when the lease was lost while held: another replica took the session over, or the
   * lease could not be renewed before it expired. Work under it should stop.
   */
  readonly signal: AbortSignal;
  /** Gives the session back; idempotent. Never throws (a failure only lets the lease expire). */
  release(): Promise<void>;
}

export interface SessionLockOptions {
  /** How long to wait for a busy session before `SessionBusyError`. Default 0: refuse at once. */
  waitMs?: number;
}

/** One event of a turn as the replicas share it; a turn is `turn-start`, parts in order, `turn-end`. */
export type ClusterTurnEvent =
  | { type: 'turn-start'; turnId: string }
  | { type: 'turn-part'; turnId: string; part: unknown }
  /** `lost`: the replica running the turn went away without ending it. */
  | { type: 'turn-end'; turnId: string; lost?: boolean };

/**
 * Answers one control request sent to a session this replica serves. `message` is what the
 * sender passed (JSON, unchecked: validate it); the result must be JSON. A throw reaches the
 * sender as `SessionControlError` (`control_failed`).
 */
export type ClusterControlHandler = (message: unknown) => unknown;

export interface ClusterControlOptions {
  /** How long to wait for the serving replica's answer before `control_timeout`. Default: the cluster's (5 s on Redis). */
  timeoutMs?: number;
}

/** What `control` got back: `served: false` when no replica serves the session. */
export type ClusterControlReply = { served: false } | { served: true; answer: unknown };

/**
 * How server replicas share sessions (`SessionHub` with `cluster`): a lock so one turn runs at
 * a time across replicas, a check that this process's copy of a session is the newest stored
 * one, a feed of turn parts so a client of one replica streams a turn run on another, and a
 * control channel so a client of one replica reaches the turn run on another (abort, answers).
 * Implemented over Redis by `@tessera/plugin-session-store-redis` together with its store.
 */
export interface SessionCluster {
  /** Takes the session's lock; `SessionBusyError` (`session_busy`) when it stays held past `waitMs`. */
  lock(sessionId: string, options?: SessionLockOptions): Promise<SessionLease>;
  /**
   * True when the copy this process last loaded or saved is the stored record's newest
   * revision; false when another replica saved since, or this process never loaded it.
   */
  isCurrent(sessionId: string): Promise<boolean>;
  /**
   * Lets go of this process's copy of the session without saving it: its saves are skipped until
   * the session is loaded again. For a copy that ends while another replica may be changing the
   * session (its lock is busy), whose save would overwrite that replica's turn. Optional: without
   * it such a copy's final save is made, and refused only when it is stale.
   */
  discard?(sessionId: string): void;
  /** The stored session's head, or `undefined` when none is stored. */
  head(sessionId: string): Promise<StoredSessionHead | undefined>;
  /** Heads of every stored session, newest `updatedAt` first. */
  heads(): Promise<StoredSessionHead[]>;
  /**
   * Shares one event of a turn this replica runs. Events of one session reach followers in the
   * order they were published. Must not throw: a failure is reported by the cluster. Events
   * published under a lease that was lost are dropped once another replica holds the session
   * (on Redis the lease token fences them), so they never reach that replica's turn.
   */
  publish(sessionId: string, event: ClusterTurnEvent): void;
  /** The id of a turn of this session running on some replica, or `undefined`. */
  runningTurn(sessionId: string): Promise<string | undefined>;
  /**
   * Replays turn `turnId` (from `runningTurn`) from its start, then follows it live until its
   * `turn-end`, which `listener` always gets last: with `lost` when the turn is gone or its
   * replica stopped without ending it. Resolves once following; the returned function stops.
   */
  follow(sessionId: string, turnId: string, listener: (event: ClusterTurnEvent) => void): Promise<() => void>;
  /**
   * Sends `message` (JSON) to the replica serving `sessionId` (`serveControl`) and resolves with
   * its handler's answer; `{ served: false }` at once when no replica serves the session.
   * `SessionControlError`: `control_timeout` when the serving replica does not answer in time
   * (it stopped or hangs), `control_failed` when its handler threw.
   */
  control(sessionId: string, message: unknown, options?: ClusterControlOptions): Promise<ClusterControlReply>;
  /**
   * Serves control requests for `sessionId` until the returned function is called: a hub does
   * while it runs the session's turn (holding its lock). Resolves once requests reach `handler`.
   */
  serveControl(sessionId: string, handler: ClusterControlHandler): Promise<() => void>;
  /**
   * Calls `listener` with the id of each turn of the session as it starts, on any replica (this
   * one too), until the returned function is called. Optional: without it, a client of one
   * replica sees a turn run on another only when it asks for it (`attach`).
   */
  watchTurns?(sessionId: string, listener: (turnId: string) => void): Promise<() => void>;
}

/** The session's lock is held elsewhere (another replica runs a turn in it). */
export class SessionBusyError extends TesseraError {
  constructor(sessionId: string, waitedMs: number) {
    super(`Session ${sessionId} is busy: another server replica holds it${waitedMs > 0 ? ` (waited ${waitedMs} ms)` : ''}. Wait for its turn to end, then retry.`, {
      code: 'session_busy',
      category: 'state',
      recoverable: true,
      details: { sessionId },
    });
  }
}

/** A control request reached the replica serving a session but got no usable answer. */
export class SessionControlError extends TesseraError {
  constructor(sessionId: string, reason: 'timeout' | 'failed', detail: string) {
    super(
      reason === 'timeout'
        ? `The server replica running session ${sessionId} did not answer within ${detail} (it stopped or hangs). Retry; a replica that stopped frees the session when its lock expires, and its turn ends as lost.`
        : `The server replica running session ${sessionId} failed to handle the request: ${detail}. Retry, or check that replica's log.`,
      { code: reason === 'timeout' ? 'control_timeout' : 'control_failed', category: 'io', recoverable: true, details: { sessionId } },
    );
  }
}

/** The cluster a session store plugin offers beside its `SessionStore` (`redisSessionStore()`). Optional. */
export const SessionCluster = createToken<SessionCluster>('SessionCluster');
