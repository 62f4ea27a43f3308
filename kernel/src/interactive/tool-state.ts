import type { IDiffLine, IToolState } from '@tessera/contracts';

/** Input fields that hold a call's main argument, by preference (lower first). */
const FIRST_ARG_RANK: ReadonlyMap<string, number> = new Map(
  ['file_path', 'notebook_path', 'path', 'command', 'pattern', 'url', 'query', 'prompt', 'description', 'skill', 'subagent_type'].map((field, rank) => [field, rank]),
);

/** Longest `firstArg` kept (a one-line summary, not the input). */
const MAX_FIRST_ARG = 200;
/** Longest command output kept on a tool state (`toolResultData`). */
export const MAX_TOOL_RESULT_DATA = 4000;

/** The call's main argument for a one-line summary: a path, a command, a pattern, a URL… */
export function firstArgOf(input: unknown): string {
  if (typeof input !== 'object' || input === null) return typeof input === 'string' ? bound(input) : '';
  // One pass over the input's own keys (usually a few): the best-ranked known field wins,
  // else the first string value.
  const record = input as Record<string, unknown>;
  let best: string | undefined;
  let bestRank = Number.POSITIVE_INFINITY;
  let fallback: string | undefined;
  for (const key in record) {
    const value = record[key];
    if (typeof value !== 'string' || value === '') continue;
    const rank = FIRST_ARG_RANK.get(key);
    if (rank !== undefined && rank < bestRank) {
      best = value;
      bestRank = rank;
    } else if (fallback === undefined) fallback = value;
  }
  const chosen = best ?? fallback;
  return chosen === undefined ? '' : bound(chosen);
}

function bound(text: string): string {
  const newline = text.indexOf('\n');
  const line = newline === -1 ? text : text.slice(0, newline);
  return line.length > MAX_FIRST_ARG ? `${line.slice(0, MAX_FIRST_ARG - 1)}…` : line;
}

interface Hunk {
  oldStart: number;
  newStart: number;
  lines: string[];
}

/**
 * Diff lines of a completed Edit: from the tool's structured patch when it gave one, else from
 * `old_string` / `new_string` placed at the result's `startLine`.
 */
export function editDiffLines(input: unknown, data: unknown): IDiffLine[] | undefined {
  const patch = (data as { structuredPatch?: unknown } | undefined)?.structuredPatch;
  if (Array.isArray(patch) && patch.length > 0) return fromHunks(patch as Hunk[]);
  const { old_string: oldString, new_string: newString } = (input ?? {}) as { old_string?: unknown; new_string?: unknown };
  if (typeof oldString !== 'string' || typeof newString !== 'string') return undefined;
  const startLine = (data as { startLine?: unknown } | undefined)?.startLine;
  const start = typeof startLine === 'number' && startLine > 0 ? startLine : 1;
  const removed = oldString === '' ? [] : oldString.split('\n');
  const added = newString === '' ? [] : newString.split('\n');
  return [
    { type: 'hunk', text: `@@ -${start},${removed.length} +${start},${added.length} @@` },
    ...removed.map((text, index): IDiffLine => ({ type: 'remove', text, oldLine: start + index })),
    ...added.map((text, index): IDiffLine => ({ type: 'add', text, newLine: start + index })),
  ];
}

function fromHunks(hunks: readonly Hunk[]): IDiffLine[] {
  const lines: IDiffLine[] = [];
  for (const hunk of hunks) {
    const removed = hunk.lines.filter((line) => !line.startsWith('+')).length;
    const added = hunk.lines.filter((line) => !line.startsWith('-')).length;
    lines.push({ type: 'hunk', text: `@@ -${hunk.oldStart},${removed} +${hunk.newStart},${added} @@` });
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    for (const line of hunk.lines) {
      const text = line.slice(1);
      if (line.startsWith('-')) lines.push({ type: 'remove', text, oldLine: oldLine++ });
      else if (line.startsWith('+')) lines.push({ type: 'add', text, newLine: newLine++ });
      else lines.push({ type: 'context', text, oldLine: oldLine++, newLine: newLine++ });
    }
  }
  return lines;
}

/** The bounded command output a tool state carries (`stdout` of Bash-like results). */
export function toolResultDataOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const stdout = (data as { stdout?: unknown }).stdout;
  if (typeof stdout !== 'string') return undefined;
  return stdout.length > MAX_TOOL_RESULT_DATA ? `${stdout.slice(0, MAX_TOOL_RESULT_DATA)}\n… (${stdout.length - MAX_TOOL_RESULT_DATA} more characters)` : stdout;
}

const EDIT_TOOLS = new Set(['Edit', 'MultiEdit']);

/** A tool state after `tool_end`. */
export function finishedToolState(
  running: IToolState,
  end: { success: boolean; denied?: boolean; errorCode?: string; data?: unknown; input: unknown },
): IToolState {
  const state: IToolState = {
    toolCallId: running.toolCallId,
    toolName: running.toolName,
    firstArg: running.firstArg,
    isRunning: false,
    result: end.denied ? 'denied' : end.success ? 'success' : 'error',
  };
  if (end.denied) state.denied = true;
  if (end.errorCode !== undefined) state.errorCode = end.errorCode;
  if (end.success && EDIT_TOOLS.has(running.toolName)) {
    const diffLines = editDiffLines(end.input, end.data);
    const file = (end.input as { file_path?: unknown } | undefined)?.file_path;
    if (diffLines) state.diffLines = diffLines;
    if (typeof file === 'string') state.diffFile = file;
  }
  const output = toolResultDataOf(end.data);
  if (output !== undefined) state.toolResultData = output;
  if (end.success && running.toolName === 'TodoWrite') {
    const todos = todosOf(end.data);
    if (todos) state.todos = todos;
  }
  return state;
}

const MAX_TODOS = 100;
const TODO_STATUSES = new Set(['pending', 'in_progress', 'completed']);

/** The list a TodoWrite result carries (`data.todos`), checked and bounded, for UIs. */
export function todosOf(data: unknown): IToolState['todos'] | undefined {
  const list = (data as { todos?: unknown } | undefined)?.todos;
  if (!Array.isArray(list)) return undefined;
  const todos: Array<NonNullable<IToolState['todos']>[number]> = [];
  for (const item of list.slice(0, MAX_TODOS)) {
    const { content, status, activeForm } = (item ?? {}) as { content?: unknown; status?: unknown; activeForm?: unknown };
    if (typeof content !== 'string' || typeof status !== 'string' || !TODO_STATUSES.has(status)) continue;
    todos.push({ content: bound(content), status: status as 'pending' | 'in_progress' | 'completed', ...(typeof activeForm === 'string' ? { activeForm: bound(activeForm) } : {}) });
  }
  return todos;
}
