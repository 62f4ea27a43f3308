import type { TBackgroundTaskEvent } from '@tessera/plugin-background';
import type { Redis } from 'ioredis';

/** One stream entry: the event, its Redis stream id (the replay cursor) and the task version it committed (0 for progress). */
export interface StreamedTaskEvent {
  id: string;
  version: number;
  event: TBackgroundTaskEvent;
}

/** Cursor meaning "from the very first entry still in the stream". */
export const STREAM_START = '0-0';

type TEntries = Array<[id: string, fields: string[]]>;

function decode(entries: TEntries): StreamedTaskEvent[] {
  const out: StreamedTaskEvent[] = [];
  for (const [id, fields] of entries) {
    let version = 0;
    let json: string | undefined;
    for (let index = 0; index + 1 < fields.length; index += 2) {
      if (fields[index] === 'v') version = Number(fields[index + 1]);
      else if (fields[index] === 'e') json = fields[index + 1];
    }
    if (json === undefined) continue;
    try {
      out.push({ id, version, event: JSON.parse(json) as TBackgroundTaskEvent });
    } catch {
      // A foreign or corrupt entry: skipped, the cursor still moves past it.
    }
  }
  return out;
}

/** Entries after `after` (exclusive), oldest first, at most `count`. */
export async function readTaskEvents(redis: Redis, stream: string, after = STREAM_START, count = 1000): Promise<StreamedTaskEvent[]> {
  const entries = (await redis.xrange(stream, `(${after}`, '+', 'COUNT', count)) as TEntries;
  return decode(entries);
}

/** The id of the newest entry, or `0-0` for an empty stream: the cursor for "only what comes next". */
export async function latestTaskEventId(redis: Redis, stream: string): Promise<string> {
  const last = (await redis.xrevrange(stream, '+', '-', 'COUNT', 1)) as TEntries;
  return last[0]?.[0] ?? STREAM_START;
}

export interface TaskEventFollower {
  /** Id of the last entry delivered. */
  readonly cursor: string;
  stop(): Promise<void>;
}

/**
 * Delivers every entry after `after`, in order, until stopped, with a blocking XREAD on
 * `redis` (a connection of its own: a blocked connection serves nothing else). Replay and
 * live delivery are the same loop, so no entry falls between them. `onEvent` must not throw;
 * if it does, `onError` hears of it and delivery goes on.
 */
export function followTaskEvents(
  redis: Redis,
  stream: string,
  after: string,
  onEvent: (entry: StreamedTaskEvent) => void,
  onError: (error: unknown) => void = () => undefined,
  blockMs = 1000,
): TaskEventFollower {
  let cursor = after;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      let reply: Array<[string, TEntries]> | null;
      try {
        reply = (await redis.xread('COUNT', 500, 'BLOCK', blockMs, 'STREAMS', stream, cursor)) as Array<[string, TEntries]> | null;
      } catch (error) {
        if (stopped) return;
        onError(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      if (!reply) continue;
      for (const [, entries] of reply) {
        for (const entry of decode(entries)) {
          if (stopped) return;
          try {
            onEvent(entry);
          } catch (error) {
            onError(error);
          }
        }
        const last = entries[entries.length - 1];
        if (last) cursor = last[0];
      }
    }
  })();
  return {
    get cursor() {
      return cursor;
    },
    async stop() {
      stopped = true;
      // A blocked XREAD returns after blockMs; disconnecting ends it at once.
      redis.disconnect();
      await loop.catch(() => undefined);
    },
  };
}
