import { createToken } from './token.js';

/** The fields of one log event; values must be JSON-serialisable. */
export type SessionLogData = Record<string, string | number | boolean | object | null | undefined>;

/** Structured, append-only event log of a session (spec: ISessionLogger). */
export interface SessionLogger {
  /** Records one event. Called on the turn's path, so it must not block: a logger that writes files buffers and flushes later. */
  log(sessionId: string, event: string, data: SessionLogData): void;
  /** Resolves once everything logged so far is durable. */
  flush?(): Promise<void>;
}

/** The session event log, bound by `sessionLogger()` (or a silent one in tests). Optional: without it nothing is logged. */
export const SessionLogger = createToken<SessionLogger>('SessionLogger');
