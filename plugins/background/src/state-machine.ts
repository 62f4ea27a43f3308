import { BackgroundTaskError } from './background-task-error.js';
import type { TBackgroundTaskStatus } from './types.js';

export type TBackgroundTaskTransitionEvent =
  | 'START'
  | 'REQUEST_PERMISSION'
  | 'PERMISSION_ALLOWED'
  | 'PERMISSION_DENIED'
  | 'SLEEP'
  | 'WAKE'
  | 'COMPLETE'
  | 'FAIL'
  | 'CANCEL';

type TTransitionTable = Readonly<
  Record<TBackgroundTaskStatus, Readonly<Partial<Record<TBackgroundTaskTransitionEvent, TBackgroundTaskStatus>>>>
>;

/**
 * Every edge a runner or the manager can produce. The self-loops are deliberate:
 * - running + WAKE: a cron fire that overlaps a still-running fire;
 * - sleeping + SLEEP: a spawn `error` followed by `exit` both report the end of a fire;
 * - waiting_permission + REQUEST_PERMISSION: parallel tool calls asking at once.
 * sleeping + COMPLETE is a schedule with no next fire; waiting_permission + COMPLETE/FAIL
 * is a runner that settles while a question is open. A denied permission returns to
 * `running`: the runner decides whether the denial ends the task.
 */
const TRANSITIONS: TTransitionTable = {
  queued: { START: 'running', CANCEL: 'cancelled', FAIL: 'failed' },
  running: {
    REQUEST_PERMISSION: 'waiting_permission',
    SLEEP: 'sleeping',
    WAKE: 'running',
    COMPLETE: 'completed',
    FAIL: 'failed',
    CANCEL: 'cancelled',
  },
  waiting_permission: {
    REQUEST_PERMISSION: 'waiting_permission',
    PERMISSION_ALLOWED: 'running',
    PERMISSION_DENIED: 'running',
    COMPLETE: 'completed',
    FAIL: 'failed',
    CANCEL: 'cancelled',
  },
  sleeping: { WAKE: 'running', SLEEP: 'sleeping', COMPLETE: 'completed', FAIL: 'failed', CANCEL: 'cancelled' },
  completed: {},
  failed: {},
  cancelled: {},
};

const TERMINAL: ReadonlySet<TBackgroundTaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export function isTerminalBackgroundTaskStatus(status: TBackgroundTaskStatus): boolean {
  return TERMINAL.has(status);
}

/** Pure: the status after `event`, or a `validation` error for an edge that does not exist. */
export function transitionBackgroundTaskStatus(
  status: TBackgroundTaskStatus,
  event: TBackgroundTaskTransitionEvent,
): TBackgroundTaskStatus {
  const next = TRANSITIONS[status]?.[event];
  if (next !== undefined) return next;
  const why = TERMINAL.has(status) ? 'the task already ended' : 'no such edge in the transition table';
  throw new BackgroundTaskError('validation', `Invalid background task transition: ${status} + ${event} (${why}).`, {
    code: 'background_invalid_transition',
    details: { status, event },
  });
}

/** A deep copy of the table, for audits and tests. */
export function getBackgroundTaskTransitions(): Record<
  TBackgroundTaskStatus,
  Partial<Record<TBackgroundTaskTransitionEvent, TBackgroundTaskStatus>>
> {
  const copy = {} as Record<TBackgroundTaskStatus, Partial<Record<TBackgroundTaskTransitionEvent, TBackgroundTaskStatus>>>;
  for (const [status, edges] of Object.entries(TRANSITIONS)) copy[status as TBackgroundTaskStatus] = { ...edges };
  return copy;
}
