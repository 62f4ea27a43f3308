/** Options for one command run inside a sandbox. */
export interface ISandboxRunOptions {
  /** Working directory inside the sandbox. */
  cwd?: string;
  /** Kill the command after this many milliseconds. */
  timeoutMs?: number;
  /** Extra environment variables for this command. */
  env?: Readonly<Record<string, string>>;
  /** Aborting stops the command. */
  signal?: AbortSignal;
}

export interface ISandboxRunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** True when the command was stopped by `timeoutMs`. */
  timedOut?: boolean;
  /** Working directory after the command, when the sandbox reports it (lets `cd` persist). */
  cwd?: string;
}

export interface ISandboxFileStat {
  size: number;
  isDirectory: boolean;
  mtimeMs?: number;
}

/**
 * The port the sandbox-aware tools talk to: run a command and read/write files somewhere
 * other than the host (a provider VM, a container, memory). Paths are absolute POSIX paths
 * inside the sandbox. Adapters wrap a provider SDK object structurally; this package never
 * installs one.
 */
export interface ISandboxClient {
  run(command: string, options?: ISandboxRunOptions): Promise<ISandboxRunResult>;
  readFile(path: string): Promise<Uint8Array>;
  /** Writes the whole file, creating parent directories. */
  writeFile(path: string, content: string | Uint8Array): Promise<void>;
  /** `undefined` when nothing exists at `path`. */
  stat(path: string): Promise<ISandboxFileStat | undefined>;
  mkdir(path: string): Promise<void>;
  /** Provider-owned snapshot id of the whole workspace, when the provider supports it. */
  snapshot?(): Promise<string>;
  restore?(snapshotId: string): Promise<void>;
}
