import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatTaskContext } from './format-task-context.js';
import { parseTaskFile, type TaskFile, type TaskStatus } from './task-file.js';

/** Where task files live, relative to the working directory. */
export const TASKS_DIRECTORY = '.agents/tasks';

export interface LoadTaskContextOptions {
  /** The checked-out branch: a task whose `Branch` field equals it comes first. */
  currentBranch?: string;
  /** At most this many tasks are selected. Default 3. */
  maxTasks?: number;
  /** Unchecked items kept per task; the rest are only counted (`omittedUncheckedItems`). Default 20. */
  maxUncheckedItems?: number;
}

export interface TaskContext {
  /** The selected tasks, in selection order. */
  tasks: TaskFile[];
  /** `formatTaskContext(tasks)`; `''` when nothing was selected. */
  formatted: string;
  /** Active (not completed) task files found, before the `maxTasks` cut. */
  available: number;
}

const STATUS_RANK: Readonly<Record<Exclude<TaskStatus, 'completed'>, number>> = { in_progress: 0, todo: 1, unknown: 2 };

/**
 * Reads the direct `*.md` files of `<cwd>/.agents/tasks/` (not `README.md`, not `completed/`
 * or any other subfolder) and selects the working set: tasks on `currentBranch` first, then
 * in progress, todo, and unknown status; completed tasks never. Ties go by path, so the same
 * files always give the same selection. A missing folder or an unreadable file is skipped.
 */
export function loadTaskContext(cwd: string, options: LoadTaskContextOptions = {}): TaskContext {
  const maxTasks = options.maxTasks ?? 3;
  const maxItems = options.maxUncheckedItems ?? 20;
  const candidates = readTaskFiles(cwd)
    .filter((task) => task.status !== 'completed')
    .map((task) => capItems(task, maxItems));
  const branch = options.currentBranch?.trim();
  const rank = (task: TaskFile): number =>
    (branch && task.branch === branch ? 0 : 10) + STATUS_RANK[task.status as Exclude<TaskStatus, 'completed'>];
  const tasks = candidates
    .sort((a, b) => rank(a) - rank(b) || compareText(a.path, b.path))
    .slice(0, Math.max(0, maxTasks));
  return { tasks, formatted: formatTaskContext(tasks), available: candidates.length };
}

function readTaskFiles(cwd: string): TaskFile[] {
  const directory = join(cwd, TASKS_DIRECTORY);
  let names: string[];
  try {
    names = readdirSync(directory, { withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.md$/i.test(entry.name) && entry.name.toLowerCase() !== 'readme.md')
      .map((entry) => entry.name);
  } catch {
    return [];
  }
  const tasks: TaskFile[] = [];
  for (const name of names.sort(compareText)) {
    try {
      tasks.push(parseTaskFile(readFileSync(join(directory, name), 'utf8'), `${TASKS_DIRECTORY}/${name}`));
    } catch {
      // Unreadable (permissions, a dangling link): task context is best effort.
    }
  }
  return tasks;
}

function capItems(task: TaskFile, max: number): TaskFile {
  if (task.uncheckedItems.length <= max) return task;
  return { ...task, uncheckedItems: task.uncheckedItems.slice(0, max), omittedUncheckedItems: task.uncheckedItems.length - max };
}

/** Code-unit order, independent of the process locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
