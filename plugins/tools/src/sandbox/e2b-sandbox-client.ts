import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import type { ISandboxClient, ISandboxFileStat, ISandboxRunOptions, ISandboxRunResult } from './sandbox-client.js';

/** What `CommandHandle.wait()` of the e2b SDK resolves with (its `CommandResult`). */
export interface E2BCommandResultLike {
  exitCode: number;
  stdout: string;
  stderr: string;
  error?: string;
}

/**
 * The part of the e2b SDK's `CommandHandle` the adapter drives. `wait()` rejects with a
 * `CommandExitError` (carrying `exitCode`, `stdout`, `stderr`) when the exit code is not 0.
 */
export interface E2BCommandHandleLike {
  /** Output received so far; still readable after a kill. */
  readonly stdout: string;
  readonly stderr: string;
  wait(): Promise<E2BCommandResultLike>;
  /** SIGKILLs the command; `false` when it was already gone. */
  kill(): Promise<boolean>;
  /** Stops listening to the command's output stream. */
  disconnect?(): Promise<void>;
}

/** Options the adapter passes to `sandbox.commands.run` (a subset of the SDK's `CommandStartOpts`). */
export interface E2BCommandStartOptionsLike {
  /** Always `true`: the adapter needs the handle to kill the command on timeout or abort. */
  background: true;
  cwd?: string;
  envs?: Record<string, string>;
  /** The SDK's own stream deadline; the adapter sets it a little past its own deadline as a backstop. */
  timeoutMs?: number;
  user?: string;
}

/** Options the adapter passes to `sandbox.files.*` (a subset of the SDK's `FilesystemRequestOpts`). */
export interface E2BFileRequestOptionsLike {
  user?: string;
}

/** The part of the SDK's `EntryInfo` that `stat` maps: `type` is `'file'` or `'dir'`. */
export interface E2BEntryInfoLike {
  type?: string;
  size: number;
  modifiedTime?: Date;
}

/**
 * The subset of an e2b JS SDK `Sandbox` (package `e2b`: its `commands` and `files` modules and
 * `createSnapshot`) that {@link E2BSandboxClient} uses. It is declared here instead of imported so that this package never depends on the
 * provider SDK: a real `Sandbox` satisfies it structurally, and so does a test fake.
 */
export interface E2BSandboxLike {
  /** Used only to name the sandbox in error messages. */
  readonly sandboxId?: string;
  readonly commands: {
    run(command: string, options: E2BCommandStartOptionsLike): Promise<E2BCommandHandleLike>;
  };
  readonly files: {
    read(path: string, options: E2BFileRequestOptionsLike & { format: 'bytes' }): Promise<Uint8Array>;
    /** Creates missing parent directories. Older SDKs resolve `void`, newer ones a `WriteInfo`. */
    write(path: string, data: string | ArrayBuffer, options?: E2BFileRequestOptionsLike): Promise<unknown>;
    getInfo(path: string, options?: E2BFileRequestOptionsLike): Promise<E2BEntryInfoLike>;
    /** `false` when something already exists at `path` (older SDKs resolve `void`). */
    makeDir(path: string, options?: E2BFileRequestOptionsLike): Promise<boolean | void>;
  };
  /** Present on SDKs with sandbox snapshots; the id can start new sandboxes (`Sandbox.create(id)`). */
  createSnapshot?(): Promise<{ snapshotId: string }>;
}

export interface E2BSandboxClientOptions {
  /** Sandbox user for commands and file operations. Default: the template's default user. */
  user?: string;
  /** Deadline for a `run` whose options give no `timeoutMs`. Default 60,000 ms, the SDK's own default. */
  defaultTimeoutMs?: number;
  /**
   * After the adapter kills a command (timeout or abort), how long it waits for the SDK to report
   * the end before returning the output gathered so far. Default 2,000 ms.
   */
  killGraceMs?: number;
  /**
   * Starts a sandbox from a snapshot id, e.g. `(id) => Sandbox.create(id)`. E2B snapshots do not
   * roll a sandbox back in place; they seed new sandboxes, so `restore()` exists only with this.
   */
  restoreSandbox?: (snapshotId: string) => Promise<E2BSandboxLike>;
  /** Receives the sandbox that `restore()` replaced, e.g. `(old) => old.kill()`; it is not killed otherwise. */
  onSandboxReplaced?: (previous: E2BSandboxLike) => void | Promise<void>;
}

/** Deadline for a command whose call gives none; the SDK's own `commands.run` default. */
export const DEFAULT_E2B_COMMAND_TIMEOUT_MS = 60_000;
const DEFAULT_KILL_GRACE_MS = 2_000;
/** Reported when the adapter killed the command: 128 + SIGKILL, as a shell would report it. */
export const E2B_KILLED_EXIT_CODE = 137;
/** Node timers overflow above this. */
const MAX_TIMER_MS = 2_147_483_647;
/** Timers can fire a millisecond or so early against a wall clock; allowed when judging a deadline. */
const TIMER_SLACK_MS = 10;

/** Nonce-tagged markers around the `pwd` report appended to each command. */
interface CwdMarkers {
  open: string;
  close: string;
}

type RunOutcome =
  | { kind: 'finished'; exitCode: number; stdout: string; stderr: string }
  | { kind: 'stopped'; reason: 'timeout' | 'abort'; stdout: string; stderr: string }
  | { kind: 'failed'; error: unknown };

function checkPath(path: string): string {
  if (!posix.isAbsolute(path) || path.includes('\0')) {
    throw new TypeError(`Sandbox paths must be absolute POSIX paths, got "${path}".`);
  }
  return posix.normalize(path);
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

/**
 * The SDK's `CommandExitError` (non-zero exit). Recognised by shape, since this package cannot
 * `instanceof` a class from an SDK it does not install.
 */
function exitErrorResult(error: unknown): E2BCommandResultLike | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const candidate = error as Partial<Record<'exitCode' | 'stdout' | 'stderr', unknown>>;
  if (typeof candidate.exitCode !== 'number' || typeof candidate.stdout !== 'string' || typeof candidate.stderr !== 'string') return undefined;
  return { exitCode: candidate.exitCode, stdout: candidate.stdout, stderr: candidate.stderr };
}

/** `FileNotFoundError` or its deprecated parent `NotFoundError`; never `SandboxNotFoundError`. */
function isFileNotFound(error: unknown): boolean {
  const name = errorName(error);
  return name === 'FileNotFoundError' || name === 'NotFoundError';
}

function newMarkers(): CwdMarkers {
  const nonce = randomUUID().replaceAll('-', '');
  return { open: `__TESSERA_CWD_${nonce}__`, close: `__TESSERA_CWD_END_${nonce}__` };
}

function singleQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The SDK runs a command as `bash -l -c COMMAND`. `eval` keeps the user's command in the same
 * shell so a `cd` in it is visible afterwards; a syntax error in it fails only the `eval`. The
 * final `pwd -P` is printed between per-call markers and the command's own status is kept.
 */
function wrapWithCwdReport(command: string, markers: CwdMarkers): string {
  return [
    `eval ${singleQuote(command)}`,
    '__tessera_status=$?',
    `printf '%s%s%s\\n' ${singleQuote(markers.open)} "$(pwd -P 2>/dev/null)" ${singleQuote(markers.close)}`,
    'exit "$__tessera_status"',
  ].join('\n');
}

/**
 * Removes the cwd report from stdout. The report starts right after the command's output (even
 * when that output has no final newline), so everything before the opening marker is the
 * command's own output; anything printed after the report (a straggling background job) is kept.
 */
function splitCwdReport(stdout: string, markers: CwdMarkers): { stdout: string; cwd?: string } {
  const open = stdout.lastIndexOf(markers.open);
  if (open < 0) return { stdout };
  const before = stdout.slice(0, open);
  const close = stdout.indexOf(markers.close, open);
  if (close < 0) return { stdout: before };
  const cwd = stdout.slice(open + markers.open.length, close);
  let after = stdout.slice(close + markers.close.length);
  if (after.startsWith('\n')) after = after.slice(1);
  return { stdout: before + after, ...(cwd ? { cwd } : {}) };
}

function stringEnv(env: ISandboxRunOptions['env']): Record<string, string> | undefined {
  if (!env) return undefined;
  const entries = Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  return Object.fromEntries(entries);
}

function toArrayBuffer(content: Uint8Array): ArrayBuffer {
  // `slice()` copies exactly the viewed bytes into a fresh, plain ArrayBuffer.
  return content.slice().buffer as ArrayBuffer;
}

function finished(result: E2BCommandResultLike): RunOutcome {
  return { kind: 'finished', exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

function notFound(path: string, cause: unknown): Error {
  return Object.assign(new Error(`ENOENT: no such file in sandbox: ${path}`, { cause }), { code: 'ENOENT' });
}

/**
 * Waits for a background command, killing it at the deadline or on abort. Never rejects: every
 * way the command can end becomes a {@link RunOutcome}.
 */
function superviseCommand(
  handle: E2BCommandHandleLike,
  timing: { startedAt: number; deadlineMs: number; killGraceMs: number },
  signal: AbortSignal | undefined,
): Promise<RunOutcome> {
  const { startedAt, deadlineMs, killGraceMs } = timing;
  return new Promise((resolve) => {
    let settled = false;
    let stopReason: 'timeout' | 'abort' | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const settle = (outcome: RunOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadlineTimer);
      clearTimeout(graceTimer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const stopped = (reason: 'timeout' | 'abort', output: { stdout: string; stderr: string }): RunOutcome => ({
      kind: 'stopped', reason, stdout: output.stdout, stderr: output.stderr,
    });
    const stop = (reason: 'timeout' | 'abort'): void => {
      if (settled || stopReason) return;
      stopReason = reason;
      handle.kill().catch(() => false);
      graceTimer = setTimeout(() => {
        handle.disconnect?.().catch(() => undefined);
        settle(stopped(reason, handle));
      }, killGraceMs);
    };
    function onAbort(): void {
      stop('abort');
    }

    const deadlineTimer = setTimeout(() => stop('timeout'), Math.min(deadlineMs, MAX_TIMER_MS));
    if (signal?.aborted) stop('abort');
    else signal?.addEventListener('abort', onAbort, { once: true });

    handle.wait().then(
      (result) => settle(stopReason ? stopped(stopReason, result) : finished(result)),
      (error: unknown) => {
        const exited = exitErrorResult(error);
        if (stopReason) settle(stopped(stopReason, exited ?? handle));
        else if (exited) settle(finished(exited));
        // The SDK's stream deadline (a TimeoutError) is set just past ours, so it only means the
        // command's deadline once that has passed; earlier it means the sandbox itself went away.
        else if (errorName(error) === 'TimeoutError' && Date.now() - startedAt >= deadlineMs - TIMER_SLACK_MS) settle(stopped('timeout', handle));
        else settle({ kind: 'failed', error });
      },
    );
  });
}

/**
 * Runs the sandbox port on an E2B cloud sandbox. Wrap a `Sandbox` from the `e2b` package, which
 * the application installs; this package never does and matches the SDK object structurally
 * ({@link E2BSandboxLike}).
 *
 * - Commands start in the background so that a timeout or an abort can kill them: the SDK's
 *   `commands.run` takes no `AbortSignal` that stops the remote process. Killed commands report
 *   exit code 137 and the output gathered so far; a timeout also sets `timedOut`.
 * - A non-zero exit is a result, not an error: the SDK's `CommandExitError` is mapped back.
 * - Each command is followed by a `pwd -P` report between per-call random markers, stripped from
 *   stdout and returned as `cwd`, so a `cd` carries over to the next Bash call.
 * - `stat` returns `undefined` for the SDK's `FileNotFoundError`/`NotFoundError`; `readFile`
 *   turns them into an `ENOENT` error like the in-memory client's.
 * - `snapshot()` exists when the sandbox has `createSnapshot()`. `restore()` exists only with the
 *   `restoreSandbox` option: an E2B snapshot starts a new sandbox rather than rewinding this one,
 *   so restoring switches the client to that new sandbox (see {@link sandbox}).
 */
export class E2BSandboxClient implements ISandboxClient {
  private current: E2BSandboxLike;
  private readonly defaultTimeoutMs: number;
  private readonly killGraceMs: number;
  // `declare`: no own property at all when unsupported, so `'snapshot' in client` is false too.
  declare readonly snapshot?: () => Promise<string>;
  declare readonly restore?: (snapshotId: string) => Promise<void>;

  constructor(
    sandbox: E2BSandboxLike,
    private readonly options: E2BSandboxClientOptions = {},
  ) {
    this.current = sandbox;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_E2B_COMMAND_TIMEOUT_MS;
    this.killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    if (typeof sandbox.createSnapshot === 'function') this.snapshot = () => this.createSnapshot();
    const restoreSandbox = options.restoreSandbox;
    if (restoreSandbox) this.restore = (snapshotId) => this.replaceFromSnapshot(snapshotId, restoreSandbox);
  }

  /** The sandbox in use now; a different object after `restore()`. */
  get sandbox(): E2BSandboxLike {
    return this.current;
  }

  private get label(): string {
    return this.current.sandboxId ? `E2B sandbox ${this.current.sandboxId}` : 'the E2B sandbox';
  }

  private get fileOptions(): E2BFileRequestOptionsLike {
    return this.options.user ? { user: this.options.user } : {};
  }

  async run(command: string, options: ISandboxRunOptions = {}): Promise<ISandboxRunResult> {
    const deadlineMs = options.timeoutMs ?? this.defaultTimeoutMs;
    if (options.signal?.aborted) {
      return { exitCode: E2B_KILLED_EXIT_CODE, stdout: '', stderr: 'Command not started: the run was aborted before it began.\n' };
    }
    const markers = newMarkers();
    const startedAt = Date.now();
    const handle = await this.start(wrapWithCwdReport(command, markers), options, deadlineMs);
    const outcome = await superviseCommand(handle, { startedAt, deadlineMs, killGraceMs: this.killGraceMs }, options.signal);
    if (outcome.kind === 'failed') {
      throw new Error(
        `${this.label} lost the command "${command}" before it finished (${describeError(outcome.error)}). ` +
          'Check that the sandbox is still running (sandbox.isRunning()) and extend its lifetime with sandbox.setTimeout() if it expired.',
        { cause: outcome.error },
      );
    }
    const report = splitCwdReport(outcome.stdout, markers);
    if (outcome.kind === 'stopped') {
      return { exitCode: E2B_KILLED_EXIT_CODE, stdout: report.stdout, stderr: outcome.stderr, ...(outcome.reason === 'timeout' ? { timedOut: true } : {}) };
    }
    return { exitCode: outcome.exitCode, stdout: report.stdout, stderr: outcome.stderr, ...(report.cwd ? { cwd: report.cwd } : {}) };
  }

  private async start(script: string, options: ISandboxRunOptions, deadlineMs: number): Promise<E2BCommandHandleLike> {
    const envs = stringEnv(options.env);
    const startOptions: E2BCommandStartOptionsLike = {
      background: true,
      timeoutMs: Math.min(deadlineMs + this.killGraceMs, MAX_TIMER_MS),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(envs ? { envs } : {}),
      ...(this.options.user ? { user: this.options.user } : {}),
    };
    try {
      return await this.current.commands.run(script, startOptions);
    } catch (error) {
      const where = options.cwd ? ` in "${options.cwd}"` : '';
      throw new Error(
        `${this.label} could not start a command${where} (${describeError(error)}). ` +
          'Check that the directory exists and the sandbox is running; reconnect with Sandbox.connect(sandboxId) if it was paused.',
        { cause: error },
      );
    }
  }

  async readFile(path: string): Promise<Uint8Array> {
    const target = checkPath(path);
    try {
      return await this.current.files.read(target, { ...this.fileOptions, format: 'bytes' });
    } catch (error) {
      if (isFileNotFound(error)) throw notFound(target, error);
      throw this.fileError('read', target, error);
    }
  }

  async writeFile(path: string, content: string | Uint8Array): Promise<void> {
    const target = checkPath(path);
    const data = typeof content === 'string' ? content : toArrayBuffer(content);
    try {
      await this.current.files.write(target, data, this.fileOptions);
    } catch (error) {
      throw this.fileError('write', target, error);
    }
  }

  async stat(path: string): Promise<ISandboxFileStat | undefined> {
    const target = checkPath(path);
    let info: E2BEntryInfoLike;
    try {
      info = await this.current.files.getInfo(target, this.fileOptions);
    } catch (error) {
      if (isFileNotFound(error)) return undefined;
      throw this.fileError('stat', target, error);
    }
    const mtimeMs = info.modifiedTime instanceof Date ? info.modifiedTime.getTime() : undefined;
    return { size: info.size, isDirectory: info.type === 'dir', ...(mtimeMs !== undefined && !Number.isNaN(mtimeMs) ? { mtimeMs } : {}) };
  }

  async mkdir(path: string): Promise<void> {
    const target = checkPath(path);
    let created: boolean | void;
    try {
      created = await this.current.files.makeDir(target, this.fileOptions);
    } catch (error) {
      throw this.fileError('create directory', target, error);
    }
    // `false` means something already exists there; that is only fine if it is a directory.
    if (created === false && (await this.stat(target))?.isDirectory === false) {
      throw new Error(`EEXIST: ${target} is a file in ${this.label}; remove it or choose another directory path.`);
    }
  }

  private fileError(action: string, path: string, cause: unknown): Error {
    return new Error(`Could not ${action} ${path} in ${this.label} (${describeError(cause)}).`, { cause });
  }

  private async createSnapshot(): Promise<string> {
    const createSnapshot = this.current.createSnapshot;
    if (typeof createSnapshot !== 'function') {
      throw new Error(`${this.label} has no createSnapshot(); it came from restoreSandbox, which must return SDK Sandbox objects.`);
    }
    try {
      return (await createSnapshot.call(this.current)).snapshotId;
    } catch (error) {
      throw new Error(
        `Could not snapshot ${this.label} (${describeError(error)}). Snapshots need a template built with envd v0.5.0 or later.`,
        { cause: error },
      );
    }
  }

  private async replaceFromSnapshot(snapshotId: string, restoreSandbox: (snapshotId: string) => Promise<E2BSandboxLike>): Promise<void> {
    let next: E2BSandboxLike;
    try {
      next = await restoreSandbox(snapshotId);
    } catch (error) {
      throw new Error(`Could not start a sandbox from snapshot "${snapshotId}" (${describeError(error)}); the client keeps using ${this.label}.`, {
        cause: error,
      });
    }
    const previous = this.current;
    this.current = next;
    await this.options.onSandboxReplaced?.(previous);
  }
}
