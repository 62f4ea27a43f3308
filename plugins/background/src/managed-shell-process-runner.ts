import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { BackgroundTaskError } from './background-task-error.js';
import { BackgroundTaskLogBuffer, createLimitedOutputCapture } from './log-pages.js';
import { assertSafeTaskId } from './task-state.js';
import type {
  IBackgroundProcessTaskRequest,
  IBackgroundTaskHandle,
  IBackgroundTaskResult,
  IBackgroundTaskRunner,
  IBackgroundTaskStart,
} from './types.js';

export interface ManagedShellProcessRunnerOptions {
  /** Shell that runs the command with `-c` (default `/bin/sh`; `cmd.exe /c` on Windows). */
  shell?: string;
  /** Time between SIGTERM and SIGKILL on cancel (default 2000 ms). */
  killGraceMs?: number;
  /** Bytes of combined output kept for the result (default 1 MiB). */
  outputLimitBytes?: number;
  /** When set, every task appends its prefixed log to `{logDir}/{taskId}.log`. */
  logDir?: string;
  /** Log lines kept in memory for `readLog` (default 10,000). */
  maxLogLines?: number;
  /** Base environment (default `process.env`); request `env` is merged on top. */
  env?: NodeJS.ProcessEnv;
}

const IS_WINDOWS = process.platform === 'win32';
const POLL_MS = 20;

/**
 * True while a live process of group `pgid` exists. On Linux /proc is read so zombies (dead,
 * waiting for an init that may never reap them) do not count; elsewhere `kill(-pgid, 0)`.
 */
function groupExists(pgid: number): boolean {
  if (process.platform === 'linux') {
    try {
      return liveGroupMembers(pgid) > 0;
    } catch {
      // /proc unreadable: fall back to the signal probe.
    }
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Number of non-zombie processes whose process group is `pgid` (Linux /proc). */
export function liveGroupMembers(pgid: number): number {
  let live = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the parenthesised command: state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') live += 1;
  }
  return live;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    // Detached children lead their own process group: a negative pid reaches grandchildren too.
    if (IS_WINDOWS) child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the whole group is already gone.
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs `request.command` through a shell in its own process group. Output is streamed into
 * `[stdout]` / `[stderr]` log lines; cancel sends SIGTERM to the group and SIGKILL after the
 * grace period if anything in the group is still alive (judged by the group, not `child.killed`).
 */
export function createManagedShellProcessRunner(
  options: ManagedShellProcessRunnerOptions = {},
): IBackgroundTaskRunner<IBackgroundProcessTaskRequest> {
  const killGraceMs = options.killGraceMs ?? 2000;
  const outputLimit = options.outputLimitBytes ?? 1024 * 1024;
  return {
    kind: 'process',
    start(start: IBackgroundTaskStart<IBackgroundProcessTaskRequest>): IBackgroundTaskHandle {
      const { taskId, request } = start;
      assertSafeTaskId(taskId);
      if (typeof request.command !== 'string' || request.command.trim() === '') {
        throw new BackgroundTaskError('validation', `Process task ${taskId} needs a non-empty command.`, { code: 'process_invalid_command', taskId });
      }
      const log = new BackgroundTaskLogBuffer(options.maxLogLines);
      const capture = createLimitedOutputCapture(outputLimit);
      let file: WriteStream | undefined;
      let logPath: string | undefined;
      if (options.logDir) {
        mkdirSync(options.logDir, { recursive: true });
        logPath = join(options.logDir, `${taskId}.log`);
        file = createWriteStream(logPath, { flags: 'a' });
        file.on('error', () => undefined); // a full disk must not crash the process; the memory log still works
      }
      const writeLog = (source: string, text: string): void => {
        const lines = log.append(source, text);
        if (file && lines.length > 0) file.write(`${lines.join('\n')}\n`);
      };

      const [shell, flag] = IS_WINDOWS ? [options.shell ?? 'cmd.exe', '/c'] : [options.shell ?? '/bin/sh', '-c'];
      const child = spawn(shell, [flag, request.command], {
        cwd: request.cwd,
        env: { ...(options.env ?? process.env), ...request.env },
        detached: !IS_WINDOWS,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      const pgid = child.pid;
      const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
      const partial = { stdout: '', stderr: '' };
      const onData = (source: 'stdout' | 'stderr', chunk: Buffer): void => {
        capture.append(chunk);
        const text = partial[source] + decoders[source].write(chunk);
        const cut = text.lastIndexOf('\n');
        partial[source] = cut < 0 ? text : text.slice(cut + 1);
        if (cut >= 0) writeLog(source, text.slice(0, cut));
      };
      child.stdout?.on('data', (chunk: Buffer) => onData('stdout', chunk));
      child.stderr?.on('data', (chunk: Buffer) => onData('stderr', chunk));
      child.stdin?.on('error', () => undefined); // EPIPE when the process ignores stdin

      let settled = false;
      let stopping: { reason: string; timedOut: boolean } | undefined;
      let resolveResult!: (result: IBackgroundTaskResult) => void;
      let rejectResult!: (error: unknown) => void;
      const result = new Promise<IBackgroundTaskResult>((resolve, reject) => {
        resolveResult = resolve;
        rejectResult = reject;
      });
      const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
      let timeoutTimer: ReturnType<typeof setTimeout> | undefined;

      const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void => {
        if (settled) return; // a spawn `error` is followed by `close`: settle once
        settled = true;
        if (timeoutTimer) clearTimeout(timeoutTimer);
        for (const source of ['stdout', 'stderr'] as const) {
          const rest = partial[source] + decoders[source].end();
          if (rest) writeLog(source, rest);
        }
        writeLog('exit', spawnError ? `failed to start: ${spawnError.message}` : signal ? `signal ${signal}` : `exit code ${exitCode}`);
        file?.end();
        const output = capture.toString();
        const details = { exitCode, signal, output, truncated: capture.truncated };
        if (spawnError) {
          rejectResult(new BackgroundTaskError('process', `Process task ${taskId} could not start "${request.command}" in ${request.cwd}: ${spawnError.message}. Check that the directory and shell exist.`, { code: 'process_spawn_failed', taskId, details, cause: spawnError }));
        } else if (stopping?.timedOut) {
          rejectResult(new BackgroundTaskError('timeout', `Process task ${taskId} ran longer than timeoutMs (${request.timeoutMs} ms) and was killed; raise timeoutMs if it needs longer.`, { code: 'process_timeout', taskId, timeoutReason: 'max_runtime', details }));
        } else if (stopping) {
          rejectResult(new BackgroundTaskError('process', `Process task ${taskId} was cancelled (${stopping.reason}).`, { code: 'process_cancelled', taskId, details }));
        } else if (exitCode !== 0) {
          const how = signal ? `was killed by ${signal}` : `exited with code ${exitCode}`;
          rejectResult(new BackgroundTaskError('process', `Process task ${taskId} ${how}; read its log for the cause.`, { code: 'process_failed', taskId, details }));
        } else {
          resolveResult({ output, exitCode, signal, metadata: { truncated: capture.truncated } });
        }
      };
      child.once('error', (error) => {
        if (child.pid === undefined) finish(null, null, error);
      });
      child.once('close', (code, signal) => finish(code, signal));

      const stop = async (reason: string, timedOut: boolean): Promise<void> => {
        if (settled && (pgid === undefined || !groupExists(pgid))) return;
        stopping ??= { reason, timedOut };
        signalGroup(child, 'SIGTERM');
        const deadline = Date.now() + killGraceMs;
        while (Date.now() < deadline && pgid !== undefined && groupExists(pgid)) await delay(POLL_MS);
        if (pgid !== undefined && groupExists(pgid)) signalGroup(child, 'SIGKILL');
        await Promise.race([closed, delay(killGraceMs + 1000)]);
      };

      if (request.timeoutMs && request.timeoutMs > 0) {
        timeoutTimer = setTimeout(() => void stop('timeout', true), request.timeoutMs);
        timeoutTimer.unref();
      }

      result.catch(() => undefined);
      return {
        taskId,
        ...(pgid === undefined ? {} : { pid: pgid }),
        ...(logPath === undefined ? {} : { logPath }),
        result,
        cancel: (reason = 'cancelled') => stop(reason, false),
        send: (input: string) =>
          new Promise<void>((resolve, reject) => {
            const stdin = child.stdin;
            if (settled || !stdin || !stdin.writable) {
              reject(new BackgroundTaskError('runner', `Process task ${taskId} is not accepting input (its stdin is closed).`, { code: 'process_stdin_closed', taskId }));
              return;
            }
            stdin.write(input, (error) => (error ? reject(error) : resolve()));
          }),
        readLog: async (cursor) => log.page(cursor),
      };
    },
  };
}
