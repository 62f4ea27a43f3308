/** What a CLI command reads and writes; tests pass their own. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The working directory (`--cwd` applied). */
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The user's home: `HOME`, else `os.homedir()`. Settings and sessions live under it. */
  home: string;
  /** Piped input, when there is any. */
  stdin?: NodeJS.ReadableStream;
  /** Whether stdin is a terminal. */
  stdinIsTTY?: boolean;
  /** Whether stdout is a terminal (the interactive UI needs one; otherwise print mode). */
  stdoutIsTTY?: boolean;
  /** Aborted when nobody reads stdout any more (EPIPE); a print run then ends without output. */
  stdoutClosed?: AbortSignal;
}

/** A subcommand: its own arguments (after the subcommand name) → exit code. */
export type Subcommand = (argv: readonly string[], io: CliIO) => Promise<number>;
