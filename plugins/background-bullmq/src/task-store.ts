import { BackgroundTaskError, cloneTaskState, type IBackgroundTaskLogCursor, type IBackgroundTaskLogPage, type IBackgroundTaskRequest, type IBackgroundTaskState, type TBackgroundTaskEvent } from '@tessera/plugin-background';
import type { Redis } from 'ioredis';
import type { TaskKeys } from './redis-keys.js';
import { copyWith } from '@tessera/contracts';

/** One task as Redis holds it. */
export interface StoredTask {
  state: IBackgroundTaskState;
  request: IBackgroundTaskRequest;
  /** Raised by every committed change, by one per event it appends (at least one); the commit script compares it (optimistic locking). */
  version: number;
  /** Set once someone asked to cancel: the reason. Workers watch it. */
  cancel?: string;
  /**
   * Runs of the task a worker started, handed-back ones included (1 on the first run). It only
   * ever goes up: each run's number is the fence of its commits and log lines, so no two runs
   * share one.
   */
  attempts: number;
  /**
   * Runs a worker handed back at shutdown (`unfinished: 'hand-back'`). They do not count against
   * the task's `retries`: the runs that do are `attempts - handBacks`.
   */
  handBacks: number;
}

/**
 * `mutate` changes `state` in place (through the pure state machine) and returns the events
 * to append, or `undefined` to leave the task as it is. It may run more than once: after a
 * concurrent commit it is called again on the fresh state, so it must not have side effects.
 */
export type TTaskMutation = (state: IBackgroundTaskState, stored: StoredTask) => readonly TBackgroundTaskEvent[] | undefined;

/**
 * Lua for the stream text of one event argument: a snapshot of the state being written comes
 * as "\u0001" + its JSON up to the task (see `eventArg`) and is completed here with the state's
 * JSON, which the script has anyway; anything else is the event's whole JSON.
 */
function expandEvent(argument: string, stateArgument: string): string {
  return `(string.byte(${argument}, 1) == 1 and (string.sub(${argument}, 2) .. ${stateArgument} .. '}') or ${argument})`;
}

const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'request', ARGV[3], 'version', 1, 'attempts', 0, 'kind', ARGV[7], 'status', ARGV[8])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'v', 1, 'e', ${expandEvent('ARGV[6]', 'ARGV[2]')})
return 1`;

// Compare-and-set of the state plus its events, so stream order is commit order. Each event
// gets a version of its own (one commit of a run's start and end carries two snapshots, and a
// reader keeps a snapshot only when its version is newer); the task takes the last. A fence
// (ARGV[5], '' for none) is the attempt of the run committing: once a later attempt began, a
// stale run's commit is refused (-3) instead of ending the attempt that runs now. ARGV[6] is
// the number of plain hash fields written with the state (name, value pairs after it; an empty
// value deletes the field), so a field that must change with the state (a cron fire's tick)
// never lags behind it.
const COMMIT = `
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return -2 end
if ARGV[5] ~= '' and redis.call('HGET', KEYS[1], 'attempts') ~= ARGV[5] then return -3 end
if tonumber(current) ~= tonumber(ARGV[1]) then return -1 end
local version = tonumber(current)
local first = 7 + 2 * tonumber(ARGV[6])
for i = first, #ARGV do
  version = version + 1
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'v', version, 'e', ${expandEvent('ARGV[i]', 'ARGV[2]')})
end
if #ARGV < first then version = version + 1 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'version', version, 'status', ARGV[4])
for i = 7, first - 1, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[1], ARGV[i]) else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return version`;

// The cancel flag, and a version step: an update read before the flag was set fails its
// compare-and-set and reads the record again, so it cannot commit as if no one had asked.
const REQUEST_CANCEL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'cancel', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'version', 1)
return 1`;

const CLOSE = `
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return -2 end
if tonumber(current) ~= tonumber(ARGV[1]) then return -1 end
redis.call('DEL', KEYS[1], KEYS[4])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 'v', tonumber(current) + 1, 'e', ARGV[4])
return 1`;

// ARGV[2] fences the lines as COMMIT's ARGV[5] does: a stale run's output is dropped (-1).
const APPEND_LOG = `
if ARGV[2] ~= '' and redis.call('HGET', KEYS[2], 'attempts') ~= ARGV[2] then return -1 end
local length = redis.call('RPUSH', KEYS[1], unpack(ARGV, 3))
local max = tonumber(ARGV[1])
local dropped = tonumber(redis.call('HGET', KEYS[2], 'logDropped') or '0')
if length > max then
  local drop = length - max
  redis.call('LTRIM', KEYS[1], drop, -1)
  dropped = redis.call('HINCRBY', KEYS[2], 'logDropped', drop)
  length = max
end
return dropped + length`;

// A run handed back at shutdown is counted apart (`handBacks`), never by lowering `attempts`:
// the attempt number is the fence of every commit and log line, and the next run must get a new
// one. Fenced as COMMIT is (ARGV[1] is the attempt handing back): a stale run, whose attempt is
// no longer the task's, hands nothing back (-1); 0 when the task is gone.
const HAND_BACK = `
local attempts = redis.call('HGET', KEYS[1], 'attempts')
if not attempts then return 0 end
if attempts ~= ARGV[1] then return -1 end
return redis.call('HINCRBY', KEYS[1], 'handBacks', 1)`;

// One command instead of a MULTI transaction (which costs the worker a pipeline object and
// three replies per task); a task closed meanwhile is not brought back as a stray hash. No run
// begins once a cancel was asked (-1): a client that found no attempt begun after setting the
// flag may end a queued task itself, sure that no worker starts its command.
const BEGIN_ATTEMPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HEXISTS', KEYS[1], 'cancel') == 1 then return -1 end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'worker', ARGV[1])
return attempts`;

// A worker's first look at a job's task: the whole hash, and when it plainly is a first run (a
// queued, runnable task nobody started or asked to cancel; `kind` and `status` mirror the
// state for this check) the attempt is counted at once, which saves `beginAttempt`'s round
// trip. The reply is the hash as it was before, then `begun` and the new attempts (or 0).
// Counting the attempt is the run's start as far as a cancel is concerned: it happens only
// while no cancel is asked, and a client that then finds `attempts` above 0 treats the task
// as running (flag + message to the worker), never ending it `queued → cancelled` itself. So a
// task cancelled while queued never has its command started, at no round trip more. A handed-back
// task is never a first run here: a hand-back leaves `attempts` as it is (see HAND_BACK).
const READ_FOR_RUN = `
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return fields end
local values = {}
for i = 1, #fields, 2 do values[fields[i]] = fields[i + 1] end
local begun = 0
if values.status == 'queued' and values.kind ~= 'scheduled' and values.kind ~= nil and values.cancel == nil and (values.attempts == nil or values.attempts == '0') then
  begun = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('HSET', KEYS[1], 'worker', ARGV[1])
end
fields[#fields + 1] = 'begun'
fields[#fields + 1] = tostring(begun)
return fields`;

const READ_LOG = `
local dropped = tonumber(redis.call('HGET', KEYS[2], 'logDropped') or '0')
local total = dropped + redis.call('LLEN', KEYS[1])
local first = math.min(math.max(tonumber(ARGV[1]), dropped), total)
local last = math.min(first + tonumber(ARGV[2]), total)
local lines = {}
if last > first then lines = redis.call('LRANGE', KEYS[1], first - dropped, last - dropped - 1) end
return { dropped, total, first, lines }`;

type TScript = (...args: Array<string | number>) => Promise<unknown>;

export interface TaskStoreOptions {
  /** Stream entries kept (approximate trim; default 100,000). */
  maxEvents?: number;
  /** Log lines kept per task (default 10,000); older lines are dropped and reported as truncated. */
  maxLogLines?: number;
}

/** A value of a task snapshot's nested records (`metadata`, `error`…) equal to another without serialising. */
function sameRecord(a: object, b: object): boolean {
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return false;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (key !== other[index] || (a as Record<string, unknown>)[key] !== (b as Record<string, unknown>)[key]) return false;
  }
  return true;
}

/**
 * True when `JSON.stringify(snapshot)` would give the same text as `JSON.stringify(state)`: the
 * same keys in the same order, equal primitives, and nested records equal one level down (a
 * deeper object must be the same object).
 */
function sameSnapshot(snapshot: IBackgroundTaskState, state: IBackgroundTaskState): boolean {
  if (snapshot === state) return true;
  const keys = Object.keys(snapshot);
  const other = Object.keys(state);
  if (keys.length !== other.length) return false;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (key !== other[index]) return false;
    const a = (snapshot as unknown as Record<string, unknown>)[key];
    const b = (state as unknown as Record<string, unknown>)[key];
    if (a === b) continue;
    if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null || Array.isArray(a) || !sameRecord(a, b)) return false;
    for (const value of Object.values(a)) if (typeof value === 'object' && value !== null) return false;
  }
  return true;
}

/** The `{"type":…,"taskId":…,"task":` head of a snapshot event whose task equals `state`, else undefined. */
function snapshotHead(event: TBackgroundTaskEvent, state: IBackgroundTaskState): string | undefined {
  const task = (event as { task?: IBackgroundTaskState }).task;
  if (task === undefined) return undefined;
  const keys = Object.keys(event);
  if (keys.length !== 3 || keys[0] !== 'type' || keys[1] !== 'taskId' || keys[2] !== 'task' || !sameSnapshot(task, state)) return undefined;
  return `{"type":${JSON.stringify(event.type)},"taskId":${JSON.stringify(event.taskId)},"task":`;
}

/**
 * `event` as an argument of the create and commit scripts, which put `JSON.stringify(event)` in
 * the stream. A snapshot event (`{ type, taskId, task }`) whose task equals the state they write
 * (a spawn's `created` event, a run's end) goes as "\u0001" + its head only, and the script
 * appends the state's JSON it gets anyway (`expandEvent`): the task is neither serialised nor
 * sent to Redis twice.
 */
export function eventArg(event: TBackgroundTaskEvent, state: IBackgroundTaskState): string {
  const head = snapshotHead(event, state);
  return head === undefined ? JSON.stringify(event) : `\u0001${head}`;
}

function parse(taskId: string, fields: Record<string, string>): StoredTask | undefined {
  if (fields.state === undefined || fields.request === undefined) return undefined;
  try {
    return {
      state: JSON.parse(fields.state) as IBackgroundTaskState,
      request: JSON.parse(fields.request) as IBackgroundTaskRequest,
      version: Number(fields.version),
      attempts: Number(fields.attempts ?? 0),
      handBacks: Number(fields.handBacks ?? 0),
      ...(fields.cancel === undefined ? {} : { cancel: fields.cancel }),
    };
  } catch (error) {
    throw new BackgroundTaskError('runner', `The Redis record of background task ${taskId} is not valid JSON; delete the key or fix the writer.`, { code: 'background_store_corrupt', taskId, cause: error });
  }
}

/** Task records, logs and the event stream of one queue in Redis. Holds no task in memory. */
export class RedisTaskStore {
  readonly maxEvents: number;
  readonly maxLogLines: number;
  private readonly scripts: Record<'create' | 'commit' | 'close' | 'requestCancel' | 'beginAttempt' | 'handBack' | 'readForRun' | 'appendLog' | 'readLog', TScript>;

  constructor(
    readonly redis: Redis,
    readonly keys: TaskKeys,
    options: TaskStoreOptions = {},
  ) {
    this.maxEvents = options.maxEvents ?? 100_000;
    this.maxLogLines = options.maxLogLines ?? 10_000;
    const define = (name: string, numberOfKeys: number, lua: string): TScript => {
      const command = `tesseraBg${name}`;
      if (!(command in redis)) redis.defineCommand(command, { numberOfKeys, lua });
      const bound = (redis as unknown as Record<string, TScript>)[command]!;
      return bound.bind(redis);
    };
    this.scripts = {
      create: define('Create', 3, CREATE),
      commit: define('Commit', 2, COMMIT),
      close: define('Close', 4, CLOSE),
      requestCancel: define('RequestCancel', 1, REQUEST_CANCEL),
      beginAttempt: define('BeginAttempt', 1, BEGIN_ATTEMPT),
      handBack: define('HandBack', 1, HAND_BACK),
      readForRun: define('ReadForRun', 1, READ_FOR_RUN),
      appendLog: define('AppendLog', 2, APPEND_LOG),
      readLog: define('ReadLog', 2, READ_LOG),
    };
  }

  /** Writes a new task and its `created` event; false when the id is taken. */
  async create(state: IBackgroundTaskState, request: IBackgroundTaskRequest, created: TBackgroundTaskEvent): Promise<boolean> {
    const stateJson = JSON.stringify(state);
    const done = await this.scripts.create(this.keys.task(state.id), this.keys.index, this.keys.events, state.id, stateJson, JSON.stringify(request), state.createdAt, this.maxEvents, eventArg(created, state), request.kind, state.status);
    return done === 1;
  }

  async read(taskId: string): Promise<StoredTask | undefined> {
    return parse(taskId, await this.redis.hgetall(this.keys.task(taskId)));
  }

  /**
   * `read` for a worker about to run the task. When the record shows a first run (queued,
   * runnable, never started, no cancel asked), this run is counted and the worker named in the
   * same step: `begun` is the new `attempts`, as `beginAttempt` would have answered. The
   * record is the one from before the count. Otherwise `begun` is 0 and nothing was written.
   */
  async readForRun(taskId: string, workerId: string): Promise<{ stored: StoredTask | undefined; begun: number }> {
    const reply = (await this.scripts.readForRun(this.keys.task(taskId), workerId)) as string[];
    const fields: Record<string, string> = {};
    for (let index = 0; index + 1 < reply.length; index += 2) fields[reply[index]!] = reply[index + 1]!;
    const begun = Number(fields.begun ?? 0);
    delete fields.begun;
    return { stored: parse(taskId, fields), begun };
  }

  /** Every task of the queue, oldest first. */
  async list(): Promise<IBackgroundTaskState[]> {
    const ids = await this.redis.zrange(this.keys.index, 0, -1);
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.keys.task(id), 'state');
    const replies = (await pipeline.exec()) ?? [];
    const states: IBackgroundTaskState[] = [];
    for (const [error, value] of replies) if (!error && typeof value === 'string') states.push(JSON.parse(value) as IBackgroundTaskState);
    return states;
  }

  /**
   * Applies `mutate` and commits it atomically with its events; retries on a concurrent commit.
   * Resolves with the committed record, the unchanged one when `mutate` returned `undefined`,
   * or `undefined` when the task does not exist (closed) or `fence`, the attempt of the run
   * committing, is no longer the task's (a later attempt began: this run's worker is stale).
   * `fields` are plain hash fields written in the same script as the state, only when `mutate`
   * commits (an empty value deletes the field).
   */
  async update(taskId: string, mutate: TTaskMutation, known?: StoredTask, fence?: number, fields?: Readonly<Record<string, string>>): Promise<StoredTask | undefined> {
    const extra = fields === undefined ? [] : Object.entries(fields).flat();
    for (let attempt = 0; attempt < 100; attempt += 1) {
      // A record the caller just read or committed saves one read; a stale one fails the compare-and-set and is re-read.
      const stored = attempt === 0 && known ? known : await this.read(taskId);
      if (!stored) return undefined;
      // cloneTaskState, not structuredClone: the same deep copy of a task state in ~50 ns instead of ~2.4 µs.
      const state = cloneTaskState(stored.state);
      const events = mutate(state, stored);
      if (!events) return stored;
      const stateJson = JSON.stringify(state);
      const version = (await this.scripts.commit(this.keys.task(taskId), this.keys.events, stored.version, stateJson, this.maxEvents, state.status, fence ?? '', extra.length / 2, ...extra, ...events.map((event) => eventArg(event, state)))) as number;
      if (version === -2 || version === -3) return undefined;
      if (version > 0) return copyWith(stored, { state, version });
    }
    throw new BackgroundTaskError('capacity', `Background task ${taskId} changed 100 times while one update was being committed; retry later.`, { code: 'background_store_contention', taskId });
  }

  /** Removes the task, its log and index entry, and appends its `closed` event; false if it changed meanwhile. */
  async close(stored: StoredTask, closed: TBackgroundTaskEvent): Promise<boolean> {
    const id = stored.state.id;
    const done = await this.scripts.close(this.keys.task(id), this.keys.index, this.keys.events, this.keys.log(id), stored.version, id, this.maxEvents, JSON.stringify(closed));
    return done === 1;
  }

  /** Progress without a state change (text deltas): appended with version 0. */
  async appendEvent(event: TBackgroundTaskEvent): Promise<void> {
    await this.redis.xadd(this.keys.events, 'MAXLEN', '~', this.maxEvents, '*', 'v', 0, 'e', JSON.stringify(event));
  }

  /**
   * Counts a run and names its worker in one command; resolves with the new `attempts`, 0 when
   * the task was closed meanwhile, or -1 when a cancel was asked (nothing counted: do not run it).
   */
  async beginAttempt(taskId: string, workerId: string): Promise<number> {
    return Number(await this.scripts.beginAttempt(this.keys.task(taskId), workerId));
  }

  /**
   * Counts `attempt`, stopped by its worker's shutdown, as handed back (it then does not count
   * against the task's retries); resolves with the task's hand-backs, 0 when the task was closed
   * meanwhile, or -1 when a later attempt began (this run is stale: nothing is counted).
   */
  async handBack(taskId: string, attempt: number): Promise<number> {
    return Number(await this.scripts.handBack(this.keys.task(taskId), attempt));
  }

  /** Sets plain fields of the task hash (never `state` or `version`: those change through `update`). */
  async setFields(taskId: string, fields: Partial<Record<'host' | 'groupStart' | 'fireTick' | 'firePid', string>>): Promise<void> {
    await this.redis.hset(this.keys.task(taskId), fields);
  }

  async getFields<K extends string>(taskId: string, names: readonly K[]): Promise<Partial<Record<K, string>>> {
    const values = await this.redis.hmget(this.keys.task(taskId), ...names);
    const out: Partial<Record<K, string>> = {};
    names.forEach((name, index) => {
      if (values[index] !== null && values[index] !== undefined) out[name] = values[index]!;
    });
    return out;
  }

  /**
   * Sets the cancel flag (workers watch it) and steps the version, so an update that read the
   * record before the flag was set is retried and sees it. False when the task is gone.
   */
  async requestCancel(taskId: string, reason: string): Promise<boolean> {
    return (await this.scripts.requestCancel(this.keys.task(taskId), reason)) === 1;
  }

  /** Cron counters only: `attempts` goes up through `beginAttempt` / `readForRun` and never down. */
  async incrementField(taskId: string, field: 'fires' | 'skippedFires' | 'failedFires', by = 1): Promise<number> {
    return this.redis.hincrby(this.keys.task(taskId), field, by);
  }

  async getField(taskId: string, field: string): Promise<string | null> {
    return this.redis.hget(this.keys.task(taskId), field);
  }

  /**
   * Appends log lines; returns the absolute number of lines ever written, or -1 when `fence` (the
   * attempt of the run writing) is no longer the task's and the lines were dropped.
   */
  async appendLog(taskId: string, lines: readonly string[], fence?: number): Promise<number> {
    if (lines.length === 0) return 0;
    return (await this.scripts.appendLog(this.keys.log(taskId), this.keys.task(taskId), this.maxLogLines, fence ?? '', ...lines)) as number;
  }

  /** One page of the task's log; cursors are absolute line numbers, as in the in-process runtime. */
  async readLog(taskId: string, cursor?: IBackgroundTaskLogCursor, limit = 200): Promise<IBackgroundTaskLogPage> {
    const requested = cursor?.offset ?? 0;
    if (!Number.isInteger(requested) || requested < 0) throw new RangeError(`Log cursor offset must be a non-negative integer, got ${String(requested)}.`);
    const [dropped, total, first, lines] = (await this.scripts.readLog(this.keys.log(taskId), this.keys.task(taskId), requested, limit)) as [number, number, number, string[]];
    const next = first + lines.length;
    return { lines, cursor: { offset: first }, nextCursor: { offset: next }, hasMore: next < total, truncated: cursor !== undefined && requested < dropped, totalLines: total };
  }
}
