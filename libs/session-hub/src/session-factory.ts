import type { IResumableSession, InteractiveSession } from '@tessera/kernel';

/** How a transport opens sessions without knowing the preset behind them. */
export interface SessionOpenOptions {
  /** The session's working directory (absolute; the host checks it against its allowed roots). */
  cwd: string;
  /** Continue a stored session. */
  resumeSessionId?: string;
  /** A new session's id (a client that names its own). */
  sessionId?: string;
  model?: string;
  /** Text appended to the system prompt (an editor's or a caller's instructions). */
  appendSystemPrompt?: string;
}

/**
 * The sessions a host offers its transports: `open` composes nothing new (one kernel serves
 * every session), `list` reads the store.
 */
export interface SessionFactory {
  open(options: SessionOpenOptions): Promise<InteractiveSession>;
  list(cwd?: string): Promise<IResumableSession[]>;
}
