import { describe, expect, it } from 'vitest';
import { BackgroundTaskError } from './background-task-error.js';
import {
  getBackgroundTaskTransitions,
  isTerminalBackgroundTaskStatus,
  transitionBackgroundTaskStatus,
  type TBackgroundTaskTransitionEvent,
} from './state-machine.js';
import type { TBackgroundTaskStatus } from './types.js';

const STATUSES: TBackgroundTaskStatus[] = ['queued', 'running', 'waiting_permission', 'sleeping', 'completed', 'failed', 'cancelled'];
const EVENTS: TBackgroundTaskTransitionEvent[] = [
  'START',
  'REQUEST_PERMISSION',
  'PERMISSION_ALLOWED',
  'PERMISSION_DENIED',
  'SLEEP',
  'WAKE',
  'COMPLETE',
  'FAIL',
  'CANCEL',
];

/** The expected table, written out independently of the implementation. */
const EXPECTED: Record<string, TBackgroundTaskStatus> = {
  'queued+START': 'running',
  'queued+CANCEL': 'cancelled',
  'queued+FAIL': 'failed',
  'running+REQUEST_PERMISSION': 'waiting_permission',
  'running+SLEEP': 'sleeping',
  'running+WAKE': 'running',
  'running+COMPLETE': 'completed',
  'running+FAIL': 'failed',
  'running+CANCEL': 'cancelled',
  'waiting_permission+REQUEST_PERMISSION': 'waiting_permission',
  'waiting_permission+PERMISSION_ALLOWED': 'running',
  'waiting_permission+PERMISSION_DENIED': 'running',
  'waiting_permission+COMPLETE': 'completed',
  'waiting_permission+FAIL': 'failed',
  'waiting_permission+CANCEL': 'cancelled',
  'sleeping+WAKE': 'running',
  'sleeping+SLEEP': 'sleeping',
  'sleeping+COMPLETE': 'completed',
  'sleeping+FAIL': 'failed',
  'sleeping+CANCEL': 'cancelled',
};

describe('transitionBackgroundTaskStatus', () => {
  for (const status of STATUSES) {
    for (const event of EVENTS) {
      const expected = EXPECTED[`${status}+${event}`];
      if (expected) {
        it(`${status} + ${event} → ${expected}`, () => {
          expect(transitionBackgroundTaskStatus(status, event)).toBe(expected);
        });
      } else {
        it(`${status} + ${event} is a validation error`, () => {
          let caught: unknown;
          try {
            transitionBackgroundTaskStatus(status, event);
          } catch (error) {
            caught = error;
          }
          expect(caught).toBeInstanceOf(BackgroundTaskError);
          const error = caught as BackgroundTaskError;
          expect(error.taskCategory).toBe('validation');
          expect(error.category).toBe('validation');
          expect(error.recoverable).toBe(true);
          expect(error.code).toBe('background_invalid_transition');
          expect(error.message).toContain(`${status} + ${event}`);
          expect(error.message).toContain(isTerminalBackgroundTaskStatus(status) ? 'already ended' : 'no such edge');
        });
      }
    }
  }

  it('covers the edges the reference lacked', () => {
    // overlapping cron fire, double end report, schedule without a next fire, permission answers
    expect(transitionBackgroundTaskStatus('running', 'WAKE')).toBe('running');
    expect(transitionBackgroundTaskStatus('sleeping', 'SLEEP')).toBe('sleeping');
    expect(transitionBackgroundTaskStatus('sleeping', 'COMPLETE')).toBe('completed');
    expect(transitionBackgroundTaskStatus('waiting_permission', 'PERMISSION_DENIED')).toBe('running');
  });
});

describe('getBackgroundTaskTransitions', () => {
  it('matches the expected table exactly', () => {
    const table = getBackgroundTaskTransitions();
    const flattened: Record<string, string> = {};
    for (const [status, edges] of Object.entries(table)) {
      for (const [event, to] of Object.entries(edges)) flattened[`${status}+${event}`] = to;
    }
    expect(flattened).toEqual(EXPECTED);
    expect(Object.keys(table).sort()).toEqual([...STATUSES].sort());
  });

  it('is a snapshot: mutating it does not change the machine', () => {
    const table = getBackgroundTaskTransitions();
    table.queued.START = 'failed';
    expect(transitionBackgroundTaskStatus('queued', 'START')).toBe('running');
  });
});

describe('isTerminalBackgroundTaskStatus', () => {
  it('is true only for completed, failed, cancelled', () => {
    expect(STATUSES.filter(isTerminalBackgroundTaskStatus)).toEqual(['completed', 'failed', 'cancelled']);
  });
});
