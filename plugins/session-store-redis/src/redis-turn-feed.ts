import type { ClusterTurnEvent } from '@tessera/session-hub';
import type { Redis } from 'ioredis';
import type { SessionKeys } from './session-keys.js';

export interface RedisTurnFeedOptions {
  redis: Redis;
  keys: SessionKeys;
  /** True while some replica holds the session's lock (a running turn's replica is alive). */
  held(sessionId: string): Promise<boolean>;
  /** A failed publish or read, reported (never thrown). */
  report(error: unknown, operation: string): void;
  /** How long a follower's blocking read waits before checking the turn's replica is alive. Default 2 s. */
  blockMs?: number;
}

/** A stream kept this long after its turn started, in case the replica dies before ending it. */
const RUNNING_TTL_MS = 24 * 60 * 60 * 1000;
/** After its end, a turn stays readable this long. */
const ENDED_TTL_MS = 60 * 60 * 1000;

type StreamEntry = [id: string, fields: string[]];

/**
 * Turn events on one Redis stream per session holding the latest turn: `turn-start` empties it,
 * parts are appended in order, `turn-end` closes it. A follower reads it from the start (the
 * replay), then blocks for new entries on a connection of its own. Publishing uses plain
 * commands on the shared connection, which keeps them in the order they were published.
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
    let key: string;
    try {
      key = keys.turn(sessionId);
    } catch (error) {
      report(error, 'publish a turn event');
      return;
    }
    const failed = (error: unknown): void => report(error, 'publish a turn event');
    const fields = ['type', event.type, 'turn', event.turnId];
    if (event.type === 'turn-part') fields.push('part', JSON.stringify(event.part));
    if (event.type === 'turn-start') redis.del(key).catch(failed);
    redis.xadd(key, '*', ...fields).catch(failed);
    if (event.type === 'turn-start') {
      redis.pexpire(key, RUNNING_TTL_MS).catch(failed);
      // After the stream holds the start: a watcher that follows at once finds it.
      redis.publish(keys.turnStarts(sessionId), event.turnId).catch(failed);
    }
    if (event.type === 'turn-end') redis.pexpire(key, ENDED_TTL_MS).catch(failed);
  }

  /** The latest turn's id while it has not ended and its replica still holds the session. */
  async runningTurn(sessionId: string): Promise<string | undefined> {
    const { redis, keys } = this.options;
    const key = keys.turn(sessionId);
    const [first, last] = await Promise.all([redis.xrange(key, '-', '+', 'COUNT', 1), redis.xrevrange(key, '+', '-', 'COUNT', 1)]);
    const start = first[0] ? parseEntry(first[0]) : undefined;
    const end = last[0] ? parseEntry(last[0]) : undefined;
    if (start?.type !== 'turn-start' || end?.type === 'turn-end') return undefined;
    return (await this.options.held(sessionId)) ? start.turnId : undefined;
  }

  async follow(sessionId: string, turnId: string, listener: (event: ClusterTurnEvent) => void): Promise<() => void> {
    const { redis, keys } = this.options;
    const key = keys.turn(sessionId);
    let stopped = false;
    let last = '0-0';
    /** Delivers entries of the followed turn; true once it ended (or turned out to be gone). */
    const deliver = (entries: readonly StreamEntry[]): boolean => {
      for (const entry of entries) {
        last = entry[0];
        const event = parseEntry(entry);
        if (!event) continue;
        // Another turn's events: the followed one ended and was replaced before this read.
        if (event.turnId !== turnId) return end(true);
        if (!stopped) listener(event);
        if (event.type === 'turn-end') return (stopped = true);
      }
      return false;
    };
    const end = (lost: boolean): true => {
      if (!stopped) listener({ type: 'turn-end', turnId, ...(lost ? { lost } : {}) });
      stopped = true;
      return true;
    };
    const replay = await redis.xrange(key, '-', '+');
    if (replay.length === 0 || parseEntry(replay[0]!)?.turnId !== turnId) {
      end(true);
      return () => undefined;
    }
    if (deliver(replay)) return () => undefined;
    const reader = redis.duplicate();
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
          if (await this.options.held(sessionId)) continue;
          // The lock is gone: the turn ended (its end is written before the lock is released) or its replica died.
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
