import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { OutputBuffer } from './output-buffer.js';

export interface ShellRunOptions {
  command: string;
  cwd: string;
  shell: string;
  timeoutMs: number;
  signal: AbortSignal;
  maxOutputChars: number;
  /** Time between SIGTERM and SIGKILL when the command is stopped. */
  killGraceMs: number;
  env?: NodeJS.ProcessEnv;
}

export interface ShellRunResult {
  /** stdout and stderr merged in the order they were written, middle-truncated. */
  output: string;
  truncated: boolean;
  exitCode: number | null;
  /** Signal that ended the shell, if any. */
  exitSignal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** The shell's working directory when the command finished (`pwd -P`), if it got that far. */
  finalCwd: string | undefined;
  /** Set when the shell could not be started at all. */
  spawnError?: string;
}

/**
 * Runs the command through `eval` so that a `cd` in it changes the shell's directory, which
 * is then reported on file descriptor 3 (closed for the command itself). `exec 2>&1` merges
 * stderr into stdout inside the shell, preserving the order of writes.
 *
 * The command arrives as `$1`; it is copied to `__tessera_cmd` and `set --` clears the
 * positional parameters, so the command sees `$#` = 0 and empty `$1`/`$@`, as under `bash -c`.
 * `__tessera_cmd` (unexported, so invisible to child processes) stays readable by the command
 * itself: unsetting it inside the eval'd text would make bash echo that prefix in every syntax
 * error message. Changing it has no effect, since eval has already expanded it.
 * `__tessera_status` is only set after the command has finished.
 */
const SCRIPT =
  '__tessera_cmd=$1; set --; exec 2>&1; eval "$__tessera_cmd" 3>&-; ' +
  '__tessera_status=$?; pwd -P >&3 2>/dev/null; exit $__tessera_status';

/** How long to wait for output pipes to close once the shell has exited. */
const DRAIN_MS = 500;

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // A negative pid addresses the whole process group the shell leads.
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Runs one shell command in its own process group. On timeout or abort the whole group gets
 * SIGTERM, then SIGKILL after `killGraceMs`; when the shell exits, anything it left running in
 * its group is killed too, so no call leaves processes behind (detach with
 * `run_in_background` instead).
 */
export function runShellCommand(options: ShellRunOptions): Promise<ShellRunResult> {
  return new Promise((resolve) => {
    const output = new OutputBuffer(options.maxOutputChars);
    const decoder = new StringDecoder('utf8');
    let cwdReport = '';
    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    // `$0` is the shell's own name, as `bash -c` / `sh -c` would set it (and what its error
    // messages start with).
    const child = spawn(options.shell, ['-c', SCRIPT, basename(options.shell), options.command], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const streams = [child.stdout, child.stderr, child.stdio[3] as Readable | null];

    const finish = (spawnError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      options.signal.removeEventListener('abort', onAbort);
      for (const stream of streams) stream?.destroy();
      output.push(decoder.end());
      const finalCwd = cwdReport.trim().split('\n').pop();
      resolve({
        output: output.toString(),
        truncated: output.truncated,
        exitCode,
        exitSignal,
        timedOut,
        aborted,
        finalCwd: finalCwd ? finalCwd : undefined,
        ...(spawnError ? { spawnError } : {}),
      });
    };

    const stop = (): void => {
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), options.killGraceMs);
      killTimer.unref();
    };
    const onAbort = (): void => {
      if (settled || aborted || timedOut) return;
      aborted = true;
      stop();
    };
    const timer = setTimeout(() => {
      if (settled || aborted) return;
      timedOut = true;
      stop();
    }, options.timeoutMs);

    child.stdout?.on('data', (chunk: Buffer) => output.push(decoder.write(chunk)));
    child.stderr?.on('data', (chunk: Buffer) => output.push(decoder.write(chunk)));
    (child.stdio[3] as Readable | null)?.on('data', (chunk: Buffer) => {
      if (cwdReport.length < 65_536) cwdReport += chunk.toString('utf8');
    });
    child.on('error', (error) => finish(`could not start ${options.shell}: ${error.message}`));
    child.on('exit', (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      // Background jobs the command started still hold the group; they die with the call.
      killGroup(child.pid, 'SIGKILL');
      drainTimer = setTimeout(() => finish(), DRAIN_MS);
    });
    child.on('close', () => finish());

    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
  });
}
