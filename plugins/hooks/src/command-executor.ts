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

/**
 * Runs a command hook through `sh -c` (or `bash -c` when `shell` says so) in its own
 * process group, writes the input JSON to stdin, and kills the whole group on timeout or
 * abort so that children the hook started do not outlive it.
 */
export function runCommandHook(handler: CommandHookHandler, options: CommandRunOptions): Promise<ProcessOutcome> {
  return new Promise((resolve) => {
    const shell = handler.shell === 'bash' ? 'bash' : 'sh';
    let stdout = '';
    let stderr = '';
    let settled = false;
    let timedOut = false;
    let aborted = false;
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
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (outcome: ProcessOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
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
    child.on('close', (code, signal) => {
      const exitCode = code ?? (signal ? 128 : 1);
      finish({ exitCode, stdout, stderr, ...(timedOut ? { timedOut } : {}), ...(aborted ? { aborted } : {}) });
    });
    if (options.signal?.aborted) onAbort();
  });
}
