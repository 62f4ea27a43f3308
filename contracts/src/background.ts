import { createToken } from './token.js';

/** A shell command to run in the background (Bash `run_in_background`). */
export interface BackgroundProcessRequest {
  kind: 'process';
  command: string;
  cwd: string;
  description?: string;
  /** Session that asked, for listings and cleanup. */
  sessionId?: string;
}

/** What `spawn` returns: the new task's id, for `readOutput`, `stop` and `close`. */
export interface BackgroundTaskTicket {
  id: string;
  /** Where its output is logged, when the runtime writes a log file. */
  logPath?: string;
}

/** Where a background task is in its life. */
export type BackgroundTaskStatus = 'queued' | 'running' | 'waiting_permission' | 'sleeping' | 'completed' | 'failed' | 'cancelled';

/** Output a background task logged from some line on, with its status (BashOutput). */
export interface BackgroundOutputRead {
  status: BackgroundTaskStatus;
  /** Set once the process has exited. */
  exitCode?: number | null;
  /**
   * Lines logged from the requested line on, in order, each prefixed with its stream as the
   * shell runner logs them: `[stdout] …`, `[stderr] …`, and a final `[exit] …`.
   */
  lines: string[];
  /** Where the next read starts. */
  nextLine: number;
  /** Lines before the requested one were dropped from the log and cannot be read. */
  dropped: boolean;
  /** More lines are already logged than one read returns: read again from `nextLine`. */
  more?: boolean;
}

/**
 * The part of the background runtime other plugins need: hand a job over and get its id,
 * read what it logged, stop it. The background plugin binds this token; without it, tools
 * that need it fail clearly. `readOutput` and `stop` reach background shell commands
 * (`process` tasks) only; `sessionId`, when given, limits them to tasks that session started,
 * so one session cannot read or stop another's commands (or tasks started outside a session).
 */
export interface BackgroundTasks {
  /** Starts the command (or queues it) and resolves with its ticket without waiting for it to finish. */
  spawn(request: BackgroundProcessRequest): Promise<BackgroundTaskTicket>;
  /** Output from line `fromLine` (0: the first) on; rejects for an unknown task. Optional for runtimes without readable logs. */
  readOutput?(taskId: string, fromLine: number, sessionId?: string): Promise<BackgroundOutputRead>;
  /** Stops the task (its whole process group) and resolves with its status afterwards; rejects for an unknown task. */
  stop?(taskId: string, sessionId?: string): Promise<BackgroundTaskStatus>;
  /**
   * Every task event (queued, started, progress, completed…) until the returned function is
   * called. `sessionId` is the session that started the task, so a UI shows its own session's
   * tasks. Optional for runtimes without events.
   */
  subscribe?(listener: (event: BackgroundTaskNotice) => void): () => void;
  /** Known tasks (of `sessionId` when given), newest first. Optional. */
  list?(sessionId?: string): BackgroundTaskSummary[];
  /** Forgets a finished task (its record and log); rejects for a running one. Optional. */
  close?(taskId: string, sessionId?: string): Promise<void>;
}

/** A background task as `/background list` shows it. */
export interface BackgroundTaskSummary {
  id: string;
  kind: string;
  status: string;
  label?: string;
  command?: string;
  agentType?: string;
  createdAt: number;
  completedAt?: number;
  /** What the task is doing now (a tool name), when known. */
  currentAction?: string;
}

/** A background task event as the runtime reports it (`type`, `taskId`, and whatever else the event carries). */
export interface BackgroundTaskNotice {
  type: string;
  taskId: string;
  /** The session that started the task, when one did. */
  sessionId?: string;
  [field: string]: unknown;
}

/**
 * The background runtime, bound by `backgroundRuntime()`. Optional: Bash's `run_in_background`, the
 * `/background` commands and subagents started in the background need it.
 */
export const BackgroundTasks = createToken<BackgroundTasks>('BackgroundTasks');
