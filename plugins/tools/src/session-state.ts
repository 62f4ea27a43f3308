import { createToken } from '@tessera/contracts';

/** What Read recorded about a file, so Write and Edit can tell whether it changed since. */
export interface FileReadRecord {
  /** Modification time seen by Read (ms); `undefined` where the backend has none (sandbox). */
  mtimeMs: number | undefined;
  size: number;
  /** sha256 of the bytes Read saw; decides when mtime alone is inconclusive. */
  hash: string;
}

/** Per-session state of the built-in tools. */
export interface SessionToolState {
  /** Bash working directory after the last call; `undefined` until a call changes it. */
  cwd: string | undefined;
  /** Real path → what Read (or our own Write/Edit) last saw. Insertion order = age. */
  readonly reads: Map<string, FileReadRecord>;
}

export interface ToolSessionStateOptions {
  /** Sessions kept at once; the least recently used one is dropped beyond this. Default 256. */
  maxSessions?: number;
  /** Read records kept per session; the oldest is dropped beyond this. Default 2,000. */
  maxFilesPerSession?: number;
}

/**
 * State the tools keep between calls, keyed by `ToolContext.sessionId`: the Bash working
 * directory and the read-file registry behind stale-edit protection. Bounded on both axes so
 * a long-running host cannot grow it without limit, and released on `sessionEnd` by the
 * plugin that provides it. Tools that must agree (Read and Edit) have to share one instance:
 * in a kernel, the one bound to `ToolSessionStateToken`.
 */
export class ToolSessionState {
  private readonly sessions = new Map<string, SessionToolState>();
  private readonly maxSessions: number;
  private readonly maxFiles: number;

  constructor(options: ToolSessionStateOptions = {}) {
    this.maxSessions = Math.max(1, options.maxSessions ?? 256);
    this.maxFiles = Math.max(1, options.maxFilesPerSession ?? 2_000);
  }

  /** The session's state, created on first use; touching it makes it the most recent. */
  get(sessionId: string): SessionToolState {
    let state = this.sessions.get(sessionId);
    if (state) {
      this.sessions.delete(sessionId);
    } else {
      state = { cwd: undefined, reads: new Map() };
      if (this.sessions.size >= this.maxSessions) {
        const oldest = this.sessions.keys().next().value;
        if (oldest !== undefined) this.sessions.delete(oldest);
      }
    }
    this.sessions.set(sessionId, state);
    return state;
  }

  /**
   * The session's Bash directory, or undefined before any `cd`. Looks without creating or
   * touching the session, so the permission layer and hook runner asking (for sessions that
   * may never run Bash) neither grow the state nor reorder it. Backs `ShellDirectories`.
   */
  cwdFor(sessionId: string): string | undefined {
    return this.sessions.get(sessionId)?.cwd;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  recordRead(sessionId: string, path: string, record: FileReadRecord): void {
    const { reads } = this.get(sessionId);
    reads.delete(path);
    if (reads.size >= this.maxFiles) {
      const oldest = reads.keys().next().value;
      if (oldest !== undefined) reads.delete(oldest);
    }
    reads.set(path, record);
  }

  lastRead(sessionId: string, path: string): FileReadRecord | undefined {
    return this.sessions.get(sessionId)?.reads.get(path);
  }

  release(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  get size(): number {
    return this.sessions.size;
  }
}

/**
 * A kernel's `ToolSessionState`, shared by its Bash, Read, Write and Edit plugins (and behind
 * `ShellDirectories`). Provided by `toolSessionStatePlugin()`, which `builtinTools()` includes;
 * each kernel's container builds its own, so two kernels never share shell directories or
 * read records.
 */
export const ToolSessionStateToken = createToken<ToolSessionState>('ToolSessionState');
