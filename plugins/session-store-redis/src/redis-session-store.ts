import { assertValidSessionId, TesseraError, type ISessionRecord, type SessionRecordChange, type SessionStore } from '@tessera/contracts';
import type { Redis } from 'ioredis';
import { SessionConflictError, SessionRecordCorruptError, SessionStoreUnavailableError } from './errors.js';
import { RedisScript } from './redis-script.js';
import { createSessionKeys, isValidTurnId, type SessionKeys } from './session-keys.js';

export interface RedisSessionStoreConfig {
  /** The connection (the plugin makes one from its `connection` option). Closed by its owner, not here. */
  redis: Redis;
  /** Every key starts with `<prefix>:`. Default `tessera`. */
  prefix?: string;
  /** A stored session `list()` skipped because it cannot be read (reported, never thrown). */
  report?: (error: unknown, operation: string) => void;
}

/** What this process last loaded or saved of a session: the revision and where its lists end. */
interface KnownCopy {
  revision: number;
  historyLength: number;
  /** The id of the last stored history entry: a save whose history still has it there appends. */
  lastEntryId: string | undefined;
  messagesLength: number;
  /** The last stored message as JSON, for the same check on messages. */
  lastMessage: string | undefined;
  /** The record's other fields as stored (JSON), written again only when they change. */
  meta: string;
}

/**
 * Checks the lease and the revision and writes in one step, so a copy loaded before another
 * process saved cannot overwrite that save, and a process whose lease on the session was lost
 * cannot write after another one took the session (the lease token fences the save). Lists
 * are appended to, or replaced when marked `r`; every check comes before the first write.
 * Returns `{1, revision}`, `{0, stored}` on a stale revision, `{-1, stored}` when a list's
 * length is not where the append should start, or `{-2, stored}` when the lock is not this
 * save's: held by another lease, or gone while the save was made under one.
 *
 * KEYS: record hash, history list, messages list, index, lock. ARGV: expected revision, id,
 * meta ('' = unchanged), updatedAt, score, history mode, history base, history count, messages
 * mode, messages base, lease token ('' = saved without a lease), then the history entries and
 * the messages.
 */
const SAVE = new RedisScript(`
local stored = tonumber(redis.call('HGET', KEYS[1], 'revision') or '0')
local holder = redis.call('GET', KEYS[5])
if ARGV[11] == '' then
  if holder then return {-2, stored} end
elseif holder ~= ARGV[11] then return {-2, stored} end
if stored ~= tonumber(ARGV[1]) then return {0, stored} end
if ARGV[6] ~= 'r' and redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[7]) then return {-1, stored} end
if ARGV[9] ~= 'r' and redis.call('LLEN', KEYS[3]) ~= tonumber(ARGV[10]) then return {-1, stored} end
local function push(key, mode, from, to)
  if mode == 'r' then redis.call('DEL', key) end
  local i = from
  while i <= to do
    local j = math.min(i + 499, to)
    redis.call('RPUSH', key, unpack(ARGV, i, j))
    i = j + 1
  end
end
local historyCount = tonumber(ARGV[8])
push(KEYS[2], ARGV[6], 12, 11 + historyCount)
push(KEYS[3], ARGV[9], 12 + historyCount, #ARGV)
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'meta', ARGV[3]) end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[4], 'revision', stored + 1)
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[2])
return {1, stored + 1}
`);

type StoredParts = [meta: Record<string, string>, history: string[], messages: string[]];

/**
 * The `SessionStore` port on Redis, for server replicas sharing sessions. A session is a hash
 * (`meta`: the record's other fields as JSON, `updatedAt`, `revision`), a list of history
 * entries and a list of messages, one JSON value per element; an index sorted by `updatedAt`
 * serves `list()`. A save appends only what is new since this process's last load or save of
 * the session (or replaces a list that was rewritten, as by a compaction).
 *
 * Optimistic concurrency: each save raises the stored `revision`. The store remembers the
 * revision of its copy of each session and refuses a save from a stale copy
 * (`SessionConflictError`, `session_conflict`) instead of overwriting newer data; a save with
 * nothing new is skipped. A session this process never loaded can only be saved when it is not
 * stored yet (a new session). `isCurrent(id)` tells whether the copy is still the newest.
 *
 * Fencing: while this process holds a session's lock (`fence(id, token)`, done by the
 * cluster's `lock`), its saves of the session land only while the lock key still holds that
 * lease's token; a save made without a lease lands only while nobody holds the lock. A save
 * sent before a lease was lost (a partition, a stalled event loop) and executed after another
 * replica took the session is refused (`session_conflict`) instead of overwriting what that
 * replica loaded; the revision check alone would let it land first and refuse the new holder.
 */
export class RedisSessionStore implements SessionStore {
  readonly keys: SessionKeys;
  private readonly redis: Redis;
  private readonly known = new Map<string, KnownCopy>();
  /** Copies let go of without a save (`discard`): their saves are skipped until the session is loaded again. */
  private readonly discarded = new Set<string>();
  private readonly saving = new Map<string, Promise<void>>();
  /** The lease token of each session whose lock this process holds (or held and lost, until released). */
  private readonly fences = new Map<string, string>();
  private readonly report: (error: unknown, operation: string) => void;

  constructor(options: RedisSessionStoreConfig) {
    this.redis = options.redis;
    this.keys = createSessionKeys(options.prefix ?? 'tessera');
    this.report = options.report ?? (() => undefined);
  }

  /**
   * Saves of `sessionId` are made under the lease `token` from now on: they land only while the
   * session's lock key holds it. Kept after the lease is lost, so a late save is refused, until
   * `unfence` with the same token (the lease is released).
   */
  fence(sessionId: string, token: string): void {
    this.fences.set(sessionId, token);
  }

  /** Ends the fence `token` set; a newer lease's fence stays. */
  unfence(sessionId: string, token: string): void {
    if (this.fences.get(sessionId) === token) this.fences.delete(sessionId);
  }

  /** The lease token saves of `sessionId` are made under, or `undefined` when this process holds no lease on it. */
  leaseOf(sessionId: string): string | undefined {
    return this.fences.get(sessionId);
  }

  /** Saves of one session run one after another: each needs the revision the previous one left. */
  async save(record: ISessionRecord, change?: SessionRecordChange): Promise<void> {
    checkRecord(record);
    // The lease as the save is asked for: a save queued behind another still belongs to the lease it was made under.
    const token = this.fences.get(record.id) ?? '';
    const previous = this.saving.get(record.id) ?? Promise.resolve();
    const next = previous.then(() => this.write(record, change, token));
    const settled = next.catch(() => undefined);
    this.saving.set(record.id, settled);
    void settled.then(() => {
      if (this.saving.get(record.id) === settled) this.saving.delete(record.id);
    });
    return next;
  }

  private async write(record: ISessionRecord, change: SessionRecordChange | undefined, token: string): Promise<void> {
    const id = record.id;
    if (this.discarded.has(id)) return;
    const { history, messages, updatedAt, ...rest } = record;
    const meta = JSON.stringify(rest);
    const known = this.known.get(id);
    const appendHistory =
      known !== undefined && change?.rewritten !== true && history.length >= known.historyLength && (known.historyLength === 0 || history[known.historyLength - 1]?.id === known.lastEntryId);
    const appendMessages =
      known !== undefined &&
      change?.rewritten !== true &&
      messages.length >= known.messagesLength &&
      (known.messagesLength === 0 || JSON.stringify(messages[known.messagesLength - 1]) === known.lastMessage);
    const newEntries = appendHistory ? history.slice(known!.historyLength) : history;
    const newMessages = appendMessages ? messages.slice(known!.messagesLength) : messages;
    // Nothing new: a stale copy ending without changes must not count as a conflict, nor an unchanged copy raise the revision.
    if (known && appendHistory && appendMessages && newEntries.length === 0 && newMessages.length === 0 && sameFields(meta, known.meta)) return;
    const write = async (full: boolean): Promise<[number, number]> => {
      const entries = full ? history : newEntries;
      const added = full ? messages : newMessages;
      const result = (await this.call('save a session', () =>
        SAVE.run(
          this.redis,
          [this.keys.record(id), this.keys.history(id), this.keys.messages(id), this.keys.index, this.keys.lock(id)],
          [
            known?.revision ?? 0,
            id,
            known !== undefined && meta === known.meta ? '' : meta,
            updatedAt,
            scoreOf(updatedAt),
            full || !appendHistory ? 'r' : 'a',
            full || !appendHistory ? 0 : known!.historyLength,
            entries.length,
            full || !appendMessages ? 'r' : 'a',
            full || !appendMessages ? 0 : known!.messagesLength,
            token,
            ...entries.map((entry) => JSON.stringify(entry)),
            ...added.map((message) => JSON.stringify(message)),
          ],
        ),
      )) as [number, number];
      return result;
    };
    let [status, revision] = await write(false);
    // The revision matched but a list did not end where this copy's did: write the whole record.
    if (status === -1) [status, revision] = await write(true);
    if (status === -2) throw new SessionConflictError(id, known?.revision ?? 0, revision, token === '' ? 'locked' : 'lease_lost');
    if (status !== 1) throw new SessionConflictError(id, known?.revision ?? 0, revision);
    this.known.set(id, {
      revision,
      historyLength: history.length,
      lastEntryId: history.at(-1)?.id,
      messagesLength: messages.length,
      lastMessage: messages.length === 0 ? undefined : JSON.stringify(messages.at(-1)),
      meta,
    });
  }

  async load(id: string): Promise<ISessionRecord | undefined> {
    assertValidSessionId(id);
    const parts = await this.read(id);
    this.discarded.delete(id);
    if (!parts) return undefined;
    const { record, revision } = this.parse(id, parts);
    this.known.set(id, {
      revision,
      historyLength: parts[1].length,
      lastEntryId: record.history.at(-1)?.id,
      messagesLength: parts[2].length,
      lastMessage: parts[2].at(-1),
      meta: parts[0].meta!,
    });
    return record;
  }

  /**
   * Newest `updatedAt` first. Listing does not count as loading: it changes no remembered
   * revision. A record that cannot be read (not what this store writes, or an id that is not
   * one) is left out and reported, so one bad record does not hide every other session.
   */
  async list(): Promise<ISessionRecord[]> {
    const ids = await this.call('list sessions', () => this.redis.zrevrange(this.keys.index, 0, -1));
    // Sent together: the client pipelines them on one connection.
    const stored = await Promise.all(
      ids.map(async (id) => {
        try {
          const parts = await this.read(id);
          return parts ? [this.parse(id, parts).record] : [];
        } catch (error) {
          if (!isUnreadable(error)) throw error;
          this.report(error, `list stored session "${id.slice(0, 80)}" (left out)`);
          return [];
        }
      }),
    );
    return stored.flat();
  }

  async delete(id: string): Promise<void> {
    assertValidSessionId(id);
    // Earlier turns' streams expire on their own within minutes; the latest one may be kept for an hour.
    const latest = await this.call('delete a session', () => this.redis.get(this.keys.latestTurn(id)));
    const turns = [this.keys.latestTurn(id), this.keys.legacyTurn(id), ...(latest !== null && isValidTurnId(latest) ? [this.keys.turn(id, latest)] : [])];
    await this.call('delete a session', () =>
      this.redis.multi().del(this.keys.record(id), this.keys.history(id), this.keys.messages(id), ...turns).zrem(this.keys.index, id).exec(),
    );
    this.known.delete(id);
  }

  /** Forgets this process's copy: a later save of the session must load it first. */
  release(id: string): void {
    this.known.delete(id);
    this.discarded.delete(id);
  }

  /**
   * Lets go of this process's copy without saving it: its saves are skipped until the session is
   * loaded again (or released). A replica ending its copy while another one holds the session's
   * lock must not overwrite what that one is writing.
   */
  discard(id: string): void {
    this.known.delete(id);
    this.discarded.add(id);
  }

  /** The revision of this process's copy (last load or save), or `undefined` when it has none. */
  revision(id: string): number | undefined {
    return this.known.get(id)?.revision;
  }

  /** The stored revision (0 when the session is not stored). */
  async storedRevision(id: string): Promise<number> {
    assertValidSessionId(id);
    const value = await this.call('read a revision', () => this.redis.hget(this.keys.record(id), 'revision'));
    return value === null ? 0 : Number(value);
  }

  /** True when this process's copy is the newest stored revision. */
  async isCurrent(id: string): Promise<boolean> {
    const mine = this.revision(id);
    return mine !== undefined && (await this.storedRevision(id)) === mine;
  }

  /** Runs one Redis operation; a connection failure becomes `SessionStoreUnavailableError`. */
  async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof TesseraError) throw error;
      const options = this.redis.options;
      throw new SessionStoreUnavailableError(operation, options.path ?? `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`, error);
    }
  }

  /** The session's hash and lists as of one moment (a transaction), or `undefined` when it is not stored. */
  private async read(id: string): Promise<StoredParts | undefined> {
    const results = await this.call('load a session', () =>
      this.redis.multi().hgetall(this.keys.record(id)).lrange(this.keys.history(id), 0, -1).lrange(this.keys.messages(id), 0, -1).exec(),
    );
    if (!results) throw new SessionStoreUnavailableError('load a session', this.keys.prefix, new Error('the transaction was aborted'));
    for (const [error] of results) if (error) throw new SessionStoreUnavailableError('load a session', this.keys.prefix, error);
    const parts = results.map(([, value]) => value) as StoredParts;
    return parts[0].meta === undefined ? undefined : parts;
  }

  private parse(id: string, [hash, history, messages]: StoredParts): { record: ISessionRecord; revision: number } {
    const json = (key: string, text: string): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        throw new SessionRecordCorruptError(id, key, 'holds a value that is not JSON');
      }
    };
    const meta = json(this.keys.record(id), hash.meta!);
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw new SessionRecordCorruptError(id, this.keys.record(id), 'has a meta field that is not an object');
    const record = {
      ...(meta as Record<string, unknown>),
      id,
      updatedAt: hash.updatedAt ?? (meta as { createdAt?: string }).createdAt ?? '',
      history: history.map((entry) => json(this.keys.history(id), entry)),
      messages: messages.map((message) => json(this.keys.messages(id), message)),
    } as ISessionRecord;
    return { record, revision: Number(hash.revision ?? 0) };
  }
}

/** A stored record that cannot be read, as opposed to Redis failing: a listing leaves it out. */
export function isUnreadable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return error instanceof SessionRecordCorruptError || code === 'invalid_session_id';
}

function checkRecord(record: ISessionRecord): void {
  const invalid = (field: string, problem: string): TesseraError =>
    new TesseraError(`Cannot save the session record: ${field} ${problem}.`, { code: 'invalid_session_record', category: 'validation', recoverable: false, details: { field } });
  if (typeof record !== 'object' || record === null) throw invalid('record', 'must be an object');
  assertValidSessionId(record.id);
  if (typeof record.cwd !== 'string') throw invalid('cwd', 'must be a string');
  if (typeof record.updatedAt !== 'string' || Number.isNaN(Date.parse(record.updatedAt))) throw invalid('updatedAt', 'must be an ISO date');
  if (!Array.isArray(record.history)) throw invalid('history', 'must be an array');
  if (!Array.isArray(record.messages)) throw invalid('messages', 'must be an array');
}

/** Record fields a copy rebuilds when it is opened rather than changes: a copy that differs only there has nothing to save. */
const REBUILT_FIELDS = ['toolSchemas'];

/**
 * Whether two stored `meta` values hold the same fields, leaving out the rebuilt ones (a copy
 * resumed on another replica lists its tools without the command tools until its first turn).
 */
function sameFields(meta: string, stored: string): boolean {
  if (meta === stored) return true;
  const fields = (json: string): string => {
    const parsed = JSON.parse(json) as Record<string, unknown>;
    for (const field of REBUILT_FIELDS) delete parsed[field];
    return JSON.stringify(Object.fromEntries(Object.entries(parsed).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  };
  return fields(meta) === fields(stored);
}

function scoreOf(updatedAt: string): number {
  return Date.parse(updatedAt);
}
