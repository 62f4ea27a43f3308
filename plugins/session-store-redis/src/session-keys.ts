import { assertValidSessionId } from '@tessera/contracts';

/** Where sessions live in Redis. Every key starts with `prefix` and a colon. */
export interface SessionKeys {
  readonly prefix: string;
  /** Sorted set of session ids scored by `updatedAt` (ms): `list()` reads it newest first. */
  readonly index: string;
  /** Hash per session: `meta` (the record's other fields, JSON), `updatedAt`, `revision`. */
  record(sessionId: string): string;
  /** List per session: one JSON history entry per element, in order. */
  history(sessionId: string): string;
  /** List per session: one JSON message per element, in order. */
  messages(sessionId: string): string;
  /** String per session: the lease token of the replica holding its lock. */
  lock(sessionId: string): string;
  /** String per session: the id of its latest turn. */
  latestTurn(sessionId: string): string;
  /** Stream per turn: its events, `turn-start` first. */
  turn(sessionId: string, turnId: string): string;
  /** What earlier versions kept a session's latest turn in (one stream per session); only deleted now. */
  legacyTurn(sessionId: string): string;
  /** Pub/sub channel per session (no key): control requests to the replica running its turn. */
  control(sessionId: string): string;
  /** Pub/sub channel per session (no key): the id of each turn as it starts, on any replica. */
  turnStarts(sessionId: string): string;
  /** Pub/sub channel per cluster instance (no key): answers to its control requests. */
  replies(instanceId: string): string;
}

const TURN = /^[A-Za-z0-9_-]{1,64}$/;
const INSTANCE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

export function isValidTurnId(turnId: unknown): turnId is string {
  return typeof turnId === 'string' && TURN.test(turnId);
}

export function isValidPrefix(prefix: unknown): prefix is string {
  return typeof prefix === 'string' && PREFIX.test(prefix) && !prefix.endsWith(':');
}

/**
 * The key names. A session id is checked before it becomes part of any key, so an id can
 * never reach into another session's keys or out of the prefix.
 */
export function createSessionKeys(prefix: string): SessionKeys {
  const base = (sessionId: string): string => {
    assertValidSessionId(sessionId);
    return `${prefix}:session:${sessionId}`;
  };
  return {
    prefix,
    index: `${prefix}:sessions`,
    record: base,
    history: (sessionId) => `${base(sessionId)}:history`,
    messages: (sessionId) => `${base(sessionId)}:messages`,
    lock: (sessionId) => `${base(sessionId)}:lock`,
    latestTurn: (sessionId) => `${base(sessionId)}:latest-turn`,
    turn: (sessionId, turnId) => {
      if (!TURN.test(turnId)) throw new Error(`"${String(turnId).slice(0, 80)}" is not a turn id (1–64 letters, digits, "_" or "-").`);
      return `${base(sessionId)}:turn:${turnId}`;
    },
    legacyTurn: (sessionId) => `${base(sessionId)}:turn`,
    control: (sessionId) => `${base(sessionId)}:control`,
    turnStarts: (sessionId) => `${base(sessionId)}:turns`,
    replies: (instanceId) => {
      if (!INSTANCE.test(instanceId)) throw new Error(`"${instanceId.slice(0, 80)}" is not a cluster instance id (a UUID).`);
      return `${prefix}:control:replies:${instanceId}`;
    },
  };
}
