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

export interface BackgroundTaskTicket {
  id: string;
  /** Where its output is logged, when the runtime writes a log file. */
  logPath?: string;
}

/**
 * The part of the background runtime other plugins need: hand a job over and get its id.
 * The background plugin binds this token; without it, tools that need it fail clearly.
 */
export interface BackgroundTasks {
  spawn(request: BackgroundProcessRequest): Promise<BackgroundTaskTicket>;
}

export const BackgroundTasks = createToken<BackgroundTasks>('BackgroundTasks');
