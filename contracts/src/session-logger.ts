import { createToken } from './token.js';

export type SessionLogData = Record<string, string | number | boolean | object | null | undefined>;

/** Structured, append-only event log of a session (spec: ISessionLogger). */
export interface SessionLogger {
  log(sessionId: string, event: string, data: SessionLogData): void;
  /** Resolves once everything logged so far is durable. */
  flush?(): Promise<void>;
}

export const SessionLogger = createToken<SessionLogger>('SessionLogger');
