import { describeError, TesseraError, type ErrorCategory } from '@tessera/contracts';
import type { TBackgroundTaskTimeoutReason } from './types.js';

/** The spec's background error taxonomy. */
export type TBackgroundTaskErrorCategory =
  | 'validation'
  | 'capacity'
  | 'permission'
  | 'timeout'
  | 'runner'
  | 'crash'
  | 'provider'
  | 'process';

/** Recoverability is fixed per category (spec error taxonomy). */
const RECOVERABLE: Readonly<Record<TBackgroundTaskErrorCategory, boolean>> = {
  validation: true,
  capacity: true,
  permission: true,
  timeout: true,
  runner: true,
  crash: false,
  provider: true,
  process: true,
};

/**
 * Tessera's shared `ErrorCategory` has no `capacity`, `runner`, `crash` or `process`, so the
 * spec category lives in `taskCategory` and `category` carries the nearest shared one.
 */
const SHARED_CATEGORY: Readonly<Record<TBackgroundTaskErrorCategory, ErrorCategory>> = {
  validation: 'validation',
  capacity: 'state',
  permission: 'permission',
  timeout: 'timeout',
  runner: 'internal',
  crash: 'internal',
  provider: 'provider',
  process: 'tool',
};

export interface BackgroundTaskErrorOptions {
  code: string;
  taskId?: string;
  timeoutReason?: TBackgroundTaskTimeoutReason;
  cause?: unknown;
  details?: Record<string, unknown>;
}

export class BackgroundTaskError extends TesseraError {
  readonly taskCategory: TBackgroundTaskErrorCategory;
  readonly taskId: string | undefined;
  readonly timeoutReason: TBackgroundTaskTimeoutReason | undefined;

  constructor(taskCategory: TBackgroundTaskErrorCategory, message: string, options: BackgroundTaskErrorOptions) {
    super(message, {
      code: options.code,
      category: SHARED_CATEGORY[taskCategory],
      recoverable: RECOVERABLE[taskCategory],
      cause: options.cause,
      details: {
        ...(options.taskId === undefined ? {} : { taskId: options.taskId }),
        ...(options.timeoutReason === undefined ? {} : { timeoutReason: options.timeoutReason }),
        ...options.details,
      },
    });
    this.taskCategory = taskCategory;
    this.taskId = options.taskId;
    this.timeoutReason = options.timeoutReason;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), taskCategory: this.taskCategory };
  }
}

export function isBackgroundTaskError(value: unknown): value is BackgroundTaskError {
  return value instanceof BackgroundTaskError;
}

/**
 * Maps anything a runner threw to a `BackgroundTaskError`. Foreign errors keep only their
 * message; the original stays on `cause` and never reaches task state.
 */
export function toBackgroundTaskError(
  value: unknown,
  fallback: TBackgroundTaskErrorCategory,
  taskId?: string,
): BackgroundTaskError {
  if (value instanceof BackgroundTaskError) return value;
  return new BackgroundTaskError(fallback, describeError(value), {
    code: `background_${fallback}_failed`,
    ...(taskId === undefined ? {} : { taskId }),
    cause: value,
  });
}
