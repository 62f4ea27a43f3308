import type { BackgroundTasks, Tool, ToolContext } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { DEFAULT_SANDBOX_ROOT, stateFor, type FileToolOptions } from './common-options.js';
import { errorText, fail, succeed } from './result.js';
import { runShellCommand, type ShellRunResult } from './shell-process.js';
import { OutputBuffer } from './output-buffer.js';
import { isInside, WorkspaceRoots } from './workspace.js';

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
export const MAX_BASH_TIMEOUT_MS = 600_000;

export interface BashToolOptions extends FileToolOptions {
  /** Shell binary; default `/bin/bash`, or `/bin/sh` where bash is missing. */
  shell?: string;
  /** Default timeout in ms when the call gives none. Default 120,000. */
  defaultTimeoutMs?: number;
  /** Characters of merged output kept (start and end); the middle is cut. Default 30,000. */
  maxOutputChars?: number;
  /** Between SIGTERM and SIGKILL when a command is stopped. Default 2,000 ms. */
  killGraceMs?: number;
  /** Environment for commands; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Background runtime for `run_in_background`: the service, or a function asked on each such
   * call (the plugin passes a lookup of the kernel's `BackgroundTasks`, made when first used).
   */
  backgroundTasks?: BackgroundTasks | (() => BackgroundTasks | undefined);
}

export interface BashToolData {
  /** Merged stdout and stderr (Claude Code's `tool_response.stdout`). */
  stdout: string;
  stderr: string;
  exitCode: number | null;
  interrupted: boolean;
  timedOut: boolean;
  truncated: boolean;
  isImage: false;
  /** Working directory the next call starts in. */
  cwd: string;
  backgroundTaskId?: string;
}

export const bashInputSchema = z.object({
  command: z.string().min(1).describe('The command to execute'),
  description: z.string().optional().describe('Clear, concise description of what this command does in 5-10 words'),
  timeout: z.number().int().positive().max(MAX_BASH_TIMEOUT_MS).optional().describe(`Optional timeout in milliseconds (max ${MAX_BASH_TIMEOUT_MS})`),
  run_in_background: z.boolean().optional().describe('Set to true to run this command in the background and get a task id'),
});

export type BashInput = z.infer<typeof bashInputSchema>;

function defaultShell(): string {
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

/** Why a remembered working directory can no longer be used, or `undefined` when it can. */
async function directoryProblem(path: string): Promise<string | undefined> {
  try {
    return (await stat(path)).isDirectory() ? undefined : 'is no longer a directory';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no longer exists' : `cannot be used (${errorText(error)})`;
  }
}

/** Where a host command starts, and a notice for the result when that is not where the session left off. */
interface StartingCwd {
  cwd: string;
  notice: string;
}

function describeOutcome(run: ShellRunResult, timeoutMs: number): string {
  const body = run.output.replace(/\n+$/, '');
  const parts = [body.length > 0 ? body : '(no output)'];
  if (run.timedOut) parts.push(`Command timed out after ${timeoutMs} ms; its process group was killed.`);
  else if (run.aborted) parts.push('Command was aborted; its process group was killed.');
  else if (run.exitCode !== 0) parts.push(run.exitCode === null ? `Killed by ${run.exitSignal ?? 'a signal'}` : `Exit code: ${run.exitCode}`);
  return parts.join('\n');
}

/**
 * Bash: runs a command with `sh -c` semantics in its own process group. A `cd` carries over to
 * the session's next call (environment changes do not); a directory outside the workspace roots
 * is not carried over, and one that has since vanished falls back to the workspace root with a
 * notice. With a sandbox client the command runs there instead, and `run_in_background` is
 * refused: the background runtime would run it on the host, outside the sandbox.
 */
export function bashTool(options: BashToolOptions = {}): Tool<BashInput, BashToolData> {
  const stateOf = stateFor(options);
  const roots = new WorkspaceRoots(options);
  const shell = options.shell ?? defaultShell();
  const defaultTimeout = Math.min(options.defaultTimeoutMs ?? DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS);
  const maxOutputChars = options.maxOutputChars ?? 30_000;
  const killGraceMs = options.killGraceMs ?? 2_000;
  const background = (): BackgroundTasks | undefined =>
    typeof options.backgroundTasks === 'function' ? options.backgroundTasks() : options.backgroundTasks;

  /**
   * The session's remembered directory (from an earlier `cd`) if it is still usable; otherwise
   * the workspace root, with a notice so the model does not assume it ran where it left off.
   */
  async function startingCwd(context: ToolContext): Promise<StartingCwd> {
    const session = stateOf().get(context.sessionId);
    const remembered = session.cwd;
    if (!remembered) return { cwd: context.cwd, notice: '' };
    const problem = await directoryProblem(remembered);
    if (!problem) return { cwd: remembered, notice: '' };
    session.cwd = undefined;
    return { cwd: context.cwd, notice: `\nShell cwd was reset to ${context.cwd}: the previous working directory ${remembered} ${problem}. The command ran in ${context.cwd}.` };
  }

  async function runInBackground(input: BashInput, context: ToolContext) {
    if (options.sandbox) {
      // The background runtime spawns on the host; handing it a sandboxed command would escape the sandbox.
      return fail(
        'run_in_background is not supported inside the sandbox: the background task runtime runs commands on the host, outside the sandbox. ' +
          `Run the command in the foreground instead (set timeout, up to ${MAX_BASH_TIMEOUT_MS} ms, for a long one).`,
        'unavailable',
      );
    }
    const tasks = background();
    if (!tasks) {
      return fail(
        'run_in_background is not available: no background task runtime is installed. Add the background plugin, or run the command in the foreground.',
        'unavailable',
      );
    }
    const { cwd, notice } = await startingCwd(context);
    const ticket = await tasks.spawn({
      kind: 'process',
      command: input.command,
      cwd,
      sessionId: context.sessionId,
      ...(input.description ? { description: input.description } : {}),
    });
    const read = tasks.readOutput ? ` Read its output with BashOutput (bash_id "${ticket.id}")${tasks.stop ? ', stop it with KillShell' : ''}.` : '';
    const log = ticket.logPath ? ` Output is written to ${ticket.logPath}.` : '';
    return succeed(`Command running in background with ID: ${ticket.id}.${read}${log}${notice}`, {
      stdout: '', stderr: '', exitCode: null, interrupted: false, timedOut: false, truncated: false, isImage: false as const, cwd, backgroundTaskId: ticket.id,
    });
  }

  async function runInSandbox(input: BashInput, context: ToolContext, timeoutMs: number) {
    const sandbox = options.sandbox!;
    const session = stateOf().get(context.sessionId);
    const root = sandbox.root ?? DEFAULT_SANDBOX_ROOT;
    let cwd = session.cwd ?? root;
    let notice = '';
    if (cwd !== root) {
      // As on the host: a remembered directory that is gone means starting over at the root.
      const found = await sandbox.client.stat(cwd).catch(() => undefined);
      if (!found?.isDirectory) {
        notice = `\nShell cwd was reset to ${root}: the previous working directory ${cwd} no longer exists in the sandbox. The command ran in ${root}.`;
        session.cwd = undefined;
        cwd = root;
      }
    }
    const run = await sandbox.client.run(input.command, { cwd, timeoutMs, signal: context.signal, ...(options.env ? { env: options.env as Record<string, string> } : {}) });
    if (run.cwd) session.cwd = run.cwd;
    const merged = new OutputBuffer(maxOutputChars);
    merged.push(run.stdout);
    merged.push(run.stderr);
    const shaped: ShellRunResult = {
      output: merged.toString(), truncated: merged.truncated, exitCode: run.exitCode, exitSignal: null,
      timedOut: run.timedOut ?? false, aborted: context.signal.aborted, finalCwd: run.cwd,
    };
    return finishResult(shaped, timeoutMs, session.cwd ?? cwd, notice);
  }

  function finishResult(run: ShellRunResult, timeoutMs: number, cwd: string, notice: string) {
    const data: BashToolData = {
      stdout: run.output, stderr: '', exitCode: run.exitCode, interrupted: run.aborted || run.timedOut,
      timedOut: run.timedOut, truncated: run.truncated, isImage: false, cwd,
    };
    const text = describeOutcome(run, timeoutMs) + notice;
    if (run.timedOut) return fail(text, 'timeout', data);
    if (run.aborted) return fail(text, 'aborted', data);
    if (run.exitCode !== 0) return fail(text, 'exit_code', data);
    return succeed(text, data);
  }

  return defineTool<BashInput, BashToolData>({
    name: 'Bash',
    description:
      'Executes a bash command and returns its combined stdout and stderr. The working directory persists between calls ' +
      `(a cd carries over); environment changes do not. Default timeout ${defaultTimeout} ms, max ${MAX_BASH_TIMEOUT_MS} ms. ` +
      `Output beyond ${maxOutputChars} characters is cut in the middle. ` +
      (options.sandbox
        ? 'run_in_background is not available (commands run in a sandbox); '
        : 'Use run_in_background for long-running servers or watchers; ') +
      'processes left running by a foreground command are killed when it ends. Prefer Read, Glob, Grep, Edit and Write over cat, find, grep and sed.',
    inputSchema: bashInputSchema,
    async execute(input, context) {
      const timeoutMs = input.timeout ?? defaultTimeout;
      try {
        if (input.run_in_background) return await runInBackground(input, context);
        if (options.sandbox) return await runInSandbox(input, context, timeoutMs);
        const { cwd, notice: startNotice } = await startingCwd(context);
        const run = await runShellCommand({
          command: input.command, cwd, shell, timeoutMs, signal: context.signal, maxOutputChars, killGraceMs,
          ...(options.env ? { env: options.env } : {}),
        });
        if (run.spawnError) return fail(`Could not run the command: ${run.spawnError}`, 'io_error');
        let notice = startNotice;
        const session = stateOf().get(context.sessionId);
        if (run.finalCwd && run.finalCwd !== cwd) {
          const realRoots = await roots.realRoots(context.cwd);
          if (realRoots.some((root) => isInside(run.finalCwd!, root))) {
            session.cwd = run.finalCwd;
          } else {
            session.cwd = undefined;
            notice += `\nShell cwd was reset to ${context.cwd}: ${run.finalCwd} is outside the workspace (${roots.describe(context.cwd)}).`;
          }
        }
        return finishResult(run, timeoutMs, session.cwd ?? context.cwd, notice);
      } catch (error) {
        return fail(`Could not run the command: ${errorText(error)}`, 'io_error');
      }
    },
  });
}
