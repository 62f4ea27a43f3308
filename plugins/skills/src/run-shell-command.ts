import { spawn } from 'node:child_process';

export interface ShellRunOptions {
  readonly cwd: string;
  readonly timeoutMs: number;
  /** Output beyond this many characters is dropped, with a marker. */
  readonly maxOutputChars: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
}

export interface ShellRunResult {
  /** stdout and stderr as they arrived, bounded, without the trailing newline. */
  readonly output: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly truncated: boolean;
}

/**
 * Runs one command through the platform shell (`/bin/sh`, `cmd.exe` on Windows) and never
 * rejects: a failure to start is reported as output with exit code null. On timeout or abort
 * the whole process group is killed, so `sleep` children do not outlive it.
 */
export function runShellCommand(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
  return new Promise((resolve) => {
    let output = '';
    let truncated = false;
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const posix = process.platform !== 'win32';
    const child = spawn(command, {
      cwd: options.cwd,
      shell: true,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: posix,
      windowsHide: true,
    });
    const append = (chunk: Buffer): void => {
      if (truncated) return;
      const text = chunk.toString('utf8');
      const room = options.maxOutputChars - output.length;
      if (text.length <= room) {
        output += text;
      } else {
        output += text.slice(0, room);
        truncated = true;
      }
    };
    const kill = (): void => {
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      kill();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (exitCode: number | null, extra = ''): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ output: (output + extra).replace(/\r?\n$/, ''), exitCode, timedOut, aborted, truncated });
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    child.on('error', (error) => finish(null, `${output === '' ? '' : '\n'}${error.message}`));
    child.on('close', (code) => finish(code));
  });
}
