import { assertSafeTaskId, type TBackgroundTaskKind } from '@tessera/plugin-background';

/** Where one queue's task records live in Redis. Every key starts with `prefix`. */
export interface TaskKeys {
  readonly prefix: string;
  readonly queue: string;
  /** Hash per task: `state`, `request`, `version`, `cancel`, `logDropped`, `attempts`, `handBacks`, `kind` and `status` (copies of the state's, for scripts), … */
  task(taskId: string): string;
  /** List of log lines per task. */
  log(taskId: string): string;
  /** Sorted set of task ids, scored by `createdAt`. */
  readonly index: string;
  /** Stream of every `background_task_*` event of the queue, in commit order. */
  readonly events: string;
  /** Pub/sub channel workers listen on for cancel requests and input (`send`). */
  readonly control: string;
  /** List a worker pushes its answer to one `send` on (expires after a minute). */
  reply(requestId: string): string;
  /** Prefix handed to BullMQ (its keys are `{bullPrefix}:{queue name}:…`). */
  readonly bullPrefix: string;
  /** The BullMQ queue that carries jobs of one kind. */
  queueName(kind: TBackgroundTaskKind): string;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** A key prefix may also hold `:` (`acme:prod`), as the Redis session store's does; not at its end. */
const SAFE_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** A key prefix: 1-64 letters, digits, `_`, `-`, `.` or `:`, starting with a letter or digit, not ending with `:`. */
export function isSafeKeyPrefix(prefix: string): boolean {
  return typeof prefix === 'string' && SAFE_PREFIX.test(prefix) && !prefix.endsWith(':');
}

export function isSafeKeyName(name: string): boolean {
  return typeof name === 'string' && SAFE_NAME.test(name);
}

/**
 * Task keys share one Redis Cluster hash slot per queue (the `{queue}` tag), because the
 * commit script touches the task hash, the index and the event stream at once.
 */
export function createTaskKeys(prefix: string, queue: string): TaskKeys {
  const base = `${prefix}:bg:{${queue}}`;
  return {
    prefix,
    queue,
    // Ids reach here from clients and models (fetch, cancel, readLog…): checked before they name a key.
    task: (taskId) => `${base}:task:${safeTaskId(taskId)}`,
    log: (taskId) => `${base}:log:${safeTaskId(taskId)}`,
    index: `${base}:tasks`,
    events: `${base}:events`,
    control: `${base}:control`,
    reply: (requestId) => `${base}:reply:${requestId}`,
    bullPrefix: `${prefix}:bull`,
    queueName: (kind) => `${queue}-${kind}`,
  };
}

/** `taskId` when it is a safe task id (see `assertSafeTaskId`); a validation error otherwise. */
function safeTaskId(taskId: string): string {
  assertSafeTaskId(taskId);
  return taskId;
}
