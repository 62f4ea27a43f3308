/**
 * One task file under `.agents/tasks/`, read leniently.
 *
 * The parser accepts the metadata shapes people actually write, and ignores everything else:
 *
 * - title: the first Markdown heading (any level); the file name without `.md` otherwise;
 * - fields: a list item whose key is `Status`, `Branch`, `Scope` or `Objective` (`Goal` is read
 *   as the objective), bold or plain, with the colon inside or outside the bold:
 *   `- **Status**: todo`, `* **Status:** todo`, `- Status: todo`. The first occurrence wins;
 *   a value wrapped in backticks loses them;
 * - unchecked items: `- [ ] …` (also `*` / `+` bullets, any indentation);
 * - fenced code blocks are skipped, so an example inside ``` never counts.
 */

/** Where a task stands, after normalising what the file says. */
export type TaskStatus = 'in_progress' | 'todo' | 'completed' | 'unknown';

export interface TaskFile {
  /** Path relative to the directory the tasks were loaded for, with `/` separators. */
  path: string;
  title: string;
  status: TaskStatus;
  /** The status exactly as written; undefined when the file has no status field. */
  statusText?: string;
  branch?: string;
  scope?: string;
  objective?: string;
  /** Text of each `- [ ]` item, in file order. */
  uncheckedItems: string[];
  /** Unchecked items left out by a selection cap (`loadTaskContext`'s `maxUncheckedItems`). */
  omittedUncheckedItems?: number;
}

type FieldName = 'status' | 'branch' | 'scope' | 'objective';

const FIELD_ALIASES: Readonly<Record<string, FieldName>> = {
  status: 'status',
  branch: 'branch',
  scope: 'scope',
  objective: 'objective',
  goal: 'objective',
};

// `- **Key**: value`, `- **Key:** value`, `- Key: value`.
const FIELD_LINE = /^\s*[-*+]\s+(?:\*\*([^*]+?)\s*(:?)\s*\*\*\s*(:?)|([A-Za-z][A-Za-z ]*?)\s*(:))\s*(.*)$/;
const HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;
const UNCHECKED = /^\s*[-*+]\s+\[ \]\s+(.*\S)\s*$/;
const FENCE = /^\s*(```|~~~)/;

const STATUS_WORDS: ReadonlyArray<[TaskStatus, readonly string[]]> = [
  ['in_progress', ['in progress', 'inprogress', 'wip', 'active', 'doing', 'started', 'ongoing']],
  ['todo', ['todo', 'to do', 'pending', 'planned', 'not started', 'open', 'backlog', 'ready']],
  ['completed', ['completed', 'complete', 'done', 'closed', 'finished', 'shipped', 'merged']],
];

/** Maps free status text to a `TaskStatus`: `In-Progress`, `WIP`, `done ✅` all work. */
export function normalizeTaskStatus(text: string | undefined): TaskStatus {
  if (text === undefined) return 'unknown';
  const words = text.toLowerCase().replace(/[_-]+/g, ' ').replace(/[^a-z ]+/g, ' ').replace(/\s+/g, ' ').trim();
  for (const [status, synonyms] of STATUS_WORDS) {
    if (synonyms.some((synonym) => words === synonym || words.startsWith(`${synonym} `))) return status;
  }
  return 'unknown';
}

/** A metadata line's field and the slice of the line that holds its value, when it is one. */
export interface FieldMatch {
  field: FieldName;
  value: string;
  /** Everything before the value (`- **Status**: `), so a writer can keep the author's style. */
  prefix: string;
}

export function matchFieldLine(line: string): FieldMatch | undefined {
  const match = FIELD_LINE.exec(line);
  if (!match) return undefined;
  const boldKey = match[1];
  const hasColon = boldKey !== undefined ? match[2] === ':' || match[3] === ':' : match[5] === ':';
  const key = (boldKey ?? match[4] ?? '').trim().toLowerCase();
  const field = FIELD_ALIASES[key];
  if (!hasColon || field === undefined) return undefined;
  const raw = match[6] ?? '';
  return { field, value: unquote(raw.trim()), prefix: line.slice(0, line.length - raw.length) };
}

/** Reads one task file's text. `path` is stored as given. */
export function parseTaskFile(text: string, path: string): TaskFile {
  const fields: Partial<Record<FieldName, string>> = {};
  const uncheckedItems: string[] = [];
  let title: string | undefined;
  let inFence = false;
  for (const line of text.split(/\r?\n/)) {
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    const heading = HEADING.exec(line);
    if (heading) {
      if (title === undefined && heading[1] !== '') title = heading[1];
      continue;
    }
    const item = UNCHECKED.exec(line);
    if (item) {
      uncheckedItems.push(item[1]!);
      continue;
    }
    const field = matchFieldLine(line);
    if (field && fields[field.field] === undefined && field.value !== '') fields[field.field] = field.value;
  }
  const task: TaskFile = {
    path,
    title: title ?? fileStem(path),
    status: normalizeTaskStatus(fields.status),
    uncheckedItems,
  };
  if (fields.status !== undefined) task.statusText = fields.status;
  if (fields.branch !== undefined) task.branch = fields.branch;
  if (fields.scope !== undefined) task.scope = fields.scope;
  if (fields.objective !== undefined) task.objective = fields.objective;
  return task;
}

function unquote(value: string): string {
  const quoted = /^`([^`]*)`$/.exec(value);
  return quoted ? quoted[1]!.trim() : value;
}

function fileStem(path: string): string {
  const name = path.split(/[\\/]/).pop() ?? path;
  return name.replace(/\.md$/i, '');
}
