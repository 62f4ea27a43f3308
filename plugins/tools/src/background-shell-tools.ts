import type { BackgroundOutputRead, BackgroundTasks, Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';
import { compilePattern } from './grep-tool.js';
import { errorText, fail, succeed } from './result.js';

/** The background runtime, or a getter asked on every call (the tool plugins pass a lookup of the kernel's `BackgroundTasks`). */
export type BackgroundTasksSource = BackgroundTasks | (() => BackgroundTasks | undefined);

export interface BackgroundShellToolOptions {
  backgroundTasks?: BackgroundTasksSource;
  /** Characters of output one BashOutput call returns at most (the newest are kept). Default 30,000. */
  maxOutputChars?: number;
}

export interface BashOutputToolData {
  bashId: string;
  status: BackgroundOutputRead['status'];
  exitCode?: number | null;
  /** New lines returned (after the filter). */
  lines: number;
  /** New lines the filter dropped; they cannot be read again. */
  filtered: number;
  /** More output is already waiting: another call returns it. */
  more?: boolean;
}

export interface KillShellToolData {
  shellId: string;
  status: BackgroundOutputRead['status'];
}

export const bashOutputInputSchema = z.object({
  bash_id: z.string().min(1).describe('The ID of the background shell to retrieve output from'),
  filter: z.string().optional().describe('Optional regular expression: only output lines that match are returned (the others are discarded)'),
});

export const killShellInputSchema = z.object({
  shell_id: z.string().min(1).describe('The ID of the background shell to kill'),
});

export type BashOutputInput = z.infer<typeof bashOutputInputSchema>;
export type KillShellInput = z.infer<typeof killShellInputSchema>;

const FINISHED = new Set(['completed', 'failed', 'cancelled']);
/** Read positions kept at most (one per session and shell); the oldest are forgotten first. */
const MAX_POSITIONS = 1_000;

function runtimeOf(source: BackgroundTasksSource | undefined): BackgroundTasks | undefined {
  return typeof source === 'function' ? source() : source;
}

const NO_RUNTIME =
  'No background task runtime is available, so there are no background shells. Add the background plugin (backgroundRuntime()) to the kernel.';

/** `[stdout] x` → `x`; other streams keep their marker; the runtime's `[exit]` line is left to the status. */
function presentLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (line.startsWith('[stdout] ')) out.push(line.slice(9));
    else if (!line.startsWith('[exit] ')) out.push(line);
  }
  return out;
}

/**
 * BashOutput (Claude Code's shape, `{bash_id, filter?}`): what a `run_in_background` command
 * logged since the last BashOutput call for it in this session, with its status and exit code.
 * Each session keeps its own read position per shell; lines a `filter` drops are consumed, as
 * in Claude Code. Only shells the calling session started can be read.
 */
export function bashOutputTool(options: BackgroundShellToolOptions = {}): Tool<BashOutputInput, BashOutputToolData> {
  const maxChars = options.maxOutputChars ?? 30_000;
  /** `sessionId\0taskId` → the next line to read. */
  const positions = new Map<string, number>();
  return defineTool<BashOutputInput, BashOutputToolData>({
    name: 'BashOutput',
    description:
      'Retrieves output from a background shell started with Bash run_in_background: the lines written since the last check, ' +
      'with its status (running, completed, failed, cancelled) and exit code. filter is an optional regular expression; ' +
      'lines that do not match are discarded and cannot be read again.',
    inputSchema: bashOutputInputSchema,
    maxResultChars: maxChars + 500,
    async execute(input, context) {
      const runtime = runtimeOf(options.backgroundTasks);
      if (!runtime) return fail(NO_RUNTIME, 'unavailable');
      if (!runtime.readOutput) return fail('The background task runtime in use keeps no readable output.', 'unavailable');
      let filter: RegExp | undefined;
      if (input.filter !== undefined) {
        try {
          filter = compilePattern(input.filter, '');
        } catch (error) {
          return fail(`Invalid filter ${JSON.stringify(input.filter)}: ${errorText(error)}.`, 'invalid_pattern');
        }
      }
      const key = `${context.sessionId}\0${input.bash_id}`;
      let read: BackgroundOutputRead;
      try {
        read = await runtime.readOutput(input.bash_id, positions.get(key) ?? 0, context.sessionId);
      } catch (error) {
        return fail(`No background shell ${JSON.stringify(input.bash_id)} in this session (${errorText(error)}).`, 'not_found');
      }
      positions.delete(key);
      positions.set(key, read.nextLine);
      if (positions.size > MAX_POSITIONS) positions.delete(positions.keys().next().value!);
      const all = presentLines(read.lines);
      const kept = filter ? all.filter((line) => filter.test(line)) : all;
      let body = kept.join('\n');
      if (body.length > maxChars) body = `[… ${body.length - maxChars} earlier characters not shown …]\n${body.slice(-maxChars)}`;
      const exit = FINISHED.has(read.status) && read.exitCode !== undefined && read.exitCode !== null ? ` (exit code ${read.exitCode})` : '';
      const parts = [`Status: ${read.status}${exit}`];
      if (read.dropped) parts.push('[Earlier output was dropped from the log before it was read.]');
      parts.push(kept.length > 0 ? body : all.length > 0 ? `(no new lines match the filter; ${all.length} discarded)` : '(no new output)');
      if (read.more) parts.push('[More output is already waiting: call BashOutput again to read it.]');
      return succeed(parts.join('\n'), {
        bashId: input.bash_id,
        status: read.status,
        ...(read.exitCode === undefined ? {} : { exitCode: read.exitCode }),
        lines: kept.length,
        filtered: all.length - kept.length,
        ...(read.more ? { more: true } : {}),
      });
    },
  });
}

/** KillShell (Claude Code's shape, `{shell_id}`): stops a background shell this session started, its whole process group. */
export function killShellTool(options: BackgroundShellToolOptions = {}): Tool<KillShellInput, KillShellToolData> {
  return defineTool<KillShellInput, KillShellToolData>({
    name: 'KillShell',
    description: 'Kills a background shell started with Bash run_in_background, by its ID (the whole process group).',
    inputSchema: killShellInputSchema,
    async execute(input, context) {
      const runtime = runtimeOf(options.backgroundTasks);
      if (!runtime) return fail(NO_RUNTIME, 'unavailable');
      if (!runtime.stop) return fail('The background task runtime in use cannot stop tasks.', 'unavailable');
      let status: BackgroundOutputRead['status'];
      try {
        status = await runtime.stop(input.shell_id, context.sessionId);
      } catch (error) {
        return fail(`No background shell ${JSON.stringify(input.shell_id)} in this session (${errorText(error)}).`, 'not_found');
      }
      const text = status === 'cancelled' ? `Killed background shell ${input.shell_id}.` : `Background shell ${input.shell_id} had already ended (${status}).`;
      return succeed(text, { shellId: input.shell_id, status });
    },
  });
}
