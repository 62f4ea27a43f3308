import { spawn } from 'node:child_process';
import type { CommandHookHandler } from '@tessera/contracts';

export interface ProcessOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
  aborted?: boolean;
}

export interface CommandRunOptions {
  cwd: string;
  env: Record<string, string>;
  input: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

const MAX_CAPTURE = 1_000_000;
/** The longest delay `setTimeout` honours; a longer one fires at once (and the guard would fail open). */
export const MAX_TIMEOUT_MS = 2_147_483_647;
/**
 * How long output may still arrive after the shell exited. A background child (`notify &`,
 * `setsid daemon &`) keeps the pipes open after the hook is done, so the outcome cannot wait
 * for them to close.
 */
const EXIT_GRACE_MS = 200;

/**
 * Runs a command hook through `sh -c` (or `bash -c` when `shell` says so) in its own
 * process group and writes the input JSON to stdin. The outcome is the shell's exit: it
 * settles once the shell exited and its output drained (at most `EXIT_GRACE_MS` later), then
 * stops reading the pipes, so a background child that holds them can neither delay a decision
 * already made nor hang the session. On timeout or abort it kills the whole group; a child
 * that left the group (`setsid`) survives that, but the outcome still settles.
 */
export function runCommandHook(handler: CommandHookHandler, options: CommandRunOptions): Promise<ProcessOutcome> {
  return new Promise((resolve) => {
    const shell = handler.shell === 'bash' ? 'bash' : 'sh';
    let stdout = '';
    let stderr = '';
    let settled = false;
    let timedOut = false;
    let aborted = false;
    let exitCode: number | undefined;
    let grace: NodeJS.Timeout | undefined;
    const child = spawn(shell, ['-c', handler.command], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const finish = (outcome: ProcessOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      options.signal?.removeEventListener('abort', onAbort);
      // Whoever still holds the pipes (a detached grandchild) no longer keeps this process busy.
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
      resolve(outcome);
    };
    const outcome = (): ProcessOutcome => ({
      exitCode: exitCode ?? 1,
      stdout,
      stderr,
      ...(timedOut ? { timedOut } : {}),
      ...(aborted ? { aborted } : {}),
    });
    // Also the fallback when no exit event comes after a kill: the outcome settles regardless.
    const settleSoon = (): void => {
      if (grace === undefined) grace = setTimeout(() => finish(outcome()), EXIT_GRACE_MS);
    };
    const stop = (): void => {
      killGroup();
      settleSoon();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, Math.min(Math.max(1, options.timeoutMs), MAX_TIMEOUT_MS));
    const onAbort = (): void => {
      // A shell that already exited has answered; aborting now changes nothing.
      if (exitCode !== undefined) return;
      aborted = true;
      stop();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < MAX_CAPTURE) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < MAX_CAPTURE) stderr += chunk;
    });
    // A hook that exits without reading stdin closes the pipe: not an error.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
    child.on('error', (error) => finish({ exitCode: 127, stdout, stderr: stderr || error.message }));
    child.on('exit', (code, signal) => {
      exitCode = code ?? (signal ? 128 : 1);
      // The shell's exit status is its answer: a timeout from here on must not replace it.
      clearTimeout(timer);
      settleSoon();
    });
    child.on('close', () => finish(outcome()));
    if (options.signal?.aborted) onAbort();
  });
}
