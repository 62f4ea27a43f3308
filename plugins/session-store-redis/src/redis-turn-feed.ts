import type { ClusterTurnEvent } from '@tessera/session-hub';
import type { Redis } from 'ioredis';
import { RedisScript } from './redis-script.js';
import { isValidTurnId, type SessionKeys } from './session-keys.js';

export interface RedisTurnFeedOptions {
  redis: Redis;
  keys: SessionKeys;
  /** The token of the lease this process holds on the session (its events are fenced by it), or `undefined`. */
  lease(sessionId: string): string | undefined;
  /** True while some replica holds the session's lock (a running turn's replica is alive). */
  held(sessionId: string): Promise<boolean>;
  /** A failed publish or read, reported (never thrown). */
  report(error: unknown, operation: string): void;
  /** How long a follower's blocking read waits before checking the turn's replica is alive. Default 2 s. */
  blockMs?: number;
}

/** A stream kept this long after its turn started, in case the replica dies before ending it. */
const RUNNING_TTL_MS = 24 * 60 * 60 * 1000;
/** After its end, the latest turn stays readable this long. */
const ENDED_TTL_MS = 60 * 60 * 1000;
/** Once a newer turn started, an earlier one stays readable this long: a follower behind on it reads it to its end. */
const REPLACED_TTL_MS = 5 * 60 * 1000;

/**
 * Appends one event to its turn's stream, only while the publisher's lease still holds the
 * session's lock (when it publishes under one): events a replica sends after its lease was
 * lost never reach the turn of the replica that took the session. `turn-start` creates the
 * turn's stream, points the session's latest turn at it, shortens the previous turn's life to
 * `REPLACED_TTL_MS` (not deleted: a follower may still be reading it) and announces the start.
 * A part or end of a turn whose stream is gone is dropped. Returns 1, or 0 when refused.
 *
 * KEYS: latest turn, this turn's stream, lock. ARGV: lease token ('' = none), type, turn id,
 * part JSON, running TTL, ended TTL, replaced TTL, turn stream key without the id, start channel.
 */
const PUBLISH = new RedisScript(`
if ARGV[1] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
if ARGV[2] == 'turn-start' then
  local previous = redis.call('GET', KEYS[1])
  if previous and previous ~= ARGV[3] then
    local key = ARGV[8] .. previous
    local ttl = redis.call('PTTL', key)
    if ttl == -1 or ttl > tonumber(ARGV[7]) then redis.call('PEXPIRE', key, ARGV[7]) end
  end
  redis.call('DEL', KEYS[2])
  redis.call('XADD', KEYS[2], '*', 'type', 'turn-start', 'turn', ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[5])
  redis.call('PUBLISH', ARGV[9], ARGV[3])
  return 1
end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
if ARGV[2] == 'turn-part' then
  redis.call('XADD', KEYS[2], '*', 'type', 'turn-part', 'turn', ARGV[3], 'part', ARGV[4])
  return 1
end
redis.call('XADD', KEYS[2], '*', 'type', 'turn-end', 'turn', ARGV[3])
if redis.call('GET', KEYS[1]) == ARGV[3] then
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
end
return 1
`);

type StreamEntry = [id: string, fields: string[]];

/**
 * Turn events on one Redis stream per turn (`<prefix>:session:<id>:turn:<turnId>`), and the id
 * of the session's latest turn beside them: `turn-start` creates the stream, parts are appended
 * in order, `turn-end` closes it. A newer turn leaves the previous one's stream to expire a few
 * minutes later, so a follower behind on it still reads it to its end. A follower reads its
 * turn from the start (the replay), then blocks for new entries on a connection of its own.
 * Publishing runs one script per event on the shared connection, in the order published.
 */
export class RedisTurnFeed {
  /** Stops every follower still reading (each has a connection of its own). */
  private readonly followers = new Set<() => void>();

  constructor(private readonly options: RedisTurnFeedOptions) {}

  /** How many turns are followed now, each reading on a connection of its own. */
  get following(): number {
    return this.followers.size;
  }

  /** Stops every follower: their connections close, their listeners get nothing more. */
  close(): void {
    for (const stop of [...this.followers]) stop();
  }

  publish(sessionId: string, event: ClusterTurnEvent): void {
    const { redis, keys, report } = this.options;
    let turnKeys: string[];
    let streamBase: string;
    try {
      turnKeys = [keys.latestTurn(sessionId), keys.turn(sessionId, event.turnId), keys.lock(sessionId)];
      streamBase = turnKeys[1]!.slice(0, -event.turnId.length);
    } catch (error) {
      report(error, 'publish a turn event');
      return;
    }
    // A refused event (its lease was lost, its turn is gone) is dropped silently: the lease's loss is reported where the turn stops.
    void PUBLISH.runInOrder(redis, turnKeys, [
      this.options.lease(sessionId) ?? '',
      event.type,
      event.turnId,
      event.type === 'turn-part' ? JSON.stringify(event.part) : '',
      RUNNING_TTL_MS,
      ENDED_TTL_MS,
      REPLACED_TTL_MS,
      streamBase,
      keys.turnStarts(sessionId),
    ]).catch((error: unknown) => report(error, 'publish a turn event'));
  }

  /** The latest turn's id while it has not ended and its replica still holds the session. */
  async runningTurn(sessionId: string): Promise<string | undefined> {
    const { redis, keys } = this.options;
    const turnId = await redis.get(keys.latestTurn(sessionId));
    if (turnId === null || !isValidTurnId(turnId)) return undefined;
    const last = await redis.xrevrange(keys.turn(sessionId, turnId), '+', '-', 'COUNT', 1);
    const end = last[0] ? parseEntry(last[0]) : undefined;
    if (end === undefined || end.type === 'turn-end') return undefined;
    return (await this.options.held(sessionId)) ? turnId : undefined;
  }

  async follow(sessionId: string, turnId: string, listener: (event: ClusterTurnEvent) => void): Promise<() => void> {
    const { redis, keys } = this.options;
    let stopped = false;
    let last = '0-0';
    const end = (lost: boolean): true => {
      if (!stopped) listener({ type: 'turn-end', turnId, ...(lost ? { lost } : {}) });
      stopped = true;
      return true;
    };
    if (!isValidTurnId(turnId)) {
      end(true);
      return () => undefined;
    }
    const key = keys.turn(sessionId, turnId);
    /** Delivers the turn's entries; true once it ended. */
    const deliver = (entries: readonly StreamEntry[]): boolean => {
      for (const entry of entries) {
        last = entry[0];
        const event = parseEntry(entry);
        if (!event || event.turnId !== turnId) continue;
        if (!stopped) listener(event);
        if (event.type === 'turn-end') return (stopped = true);
      }
      return false;
    };
    const replay = await redis.xrange(key, '-', '+');
    if (replay.length === 0 || parseEntry(replay[0]!)?.type !== 'turn-start') {
      end(true);
      return () => undefined;
    }
    if (deliver(replay)) return () => undefined;
    // Its blocking read waits up to `blockMs` for an answer: allowed on top of the connection's command timeout.
    const timeout = redis.options.commandTimeout;
    const reader = redis.duplicate(timeout === undefined ? {} : { commandTimeout: timeout + (this.options.blockMs ?? 2000) });
    reader.on('error', () => undefined);
    const stop = (): void => {
      stopped = true;
      this.followers.delete(stop);
      reader.disconnect();
    };
    this.followers.add(stop);
    void (async () => {
      let failures = 0;
      while (!stopped) {
        try {
          const read = (await reader.xread('BLOCK', this.options.blockMs ?? 2000, 'STREAMS', key, last)) as Array<[string, StreamEntry[]]> | null;
          failures = 0;
          if (read) {
            if (deliver(read[0]![1])) break;
            continue;
          }
          if (await this.alive(sessionId, turnId)) continue;
          // The turn ended (its end is written before the lock is released), was replaced by a newer one, or its replica died.
          if (!deliver(await redis.xrange(key, `(${last}`, '+'))) end(true);
        } catch (error) {
          if (stopped) break;
          failures += 1;
          if (failures === 1) this.options.report(error, 'follow a turn');
          await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** failures, 5000)));
        }
      }
      stop();
    })();
    return stop;
  }

  /** True while `turnId` is the session's latest turn and some replica holds the session: it may still get entries. */
  private async alive(sessionId: string, turnId: string): Promise<boolean> {
    const latest = await this.options.redis.get(this.options.keys.latestTurn(sessionId));
    return latest === turnId && (await this.options.held(sessionId));
  }
}

function parseEntry([, fields]: StreamEntry): ClusterTurnEvent | undefined {
  const map = new Map<string, string>();
  for (let index = 0; index + 1 < fields.length; index += 2) map.set(fields[index]!, fields[index + 1]!);
  const turnId = map.get('turn');
  if (turnId === undefined) return undefined;
  switch (map.get('type')) {
    case 'turn-start':
      return { type: 'turn-start', turnId };
    case 'turn-end':
      return { type: 'turn-end', turnId };
    case 'turn-part':
      try {
        return { type: 'turn-part', turnId, part: JSON.parse(map.get('part') ?? 'null') };
      } catch {
        return undefined;
      }
    default:
      return undefined;
  }
}
