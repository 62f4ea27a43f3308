import type { TaskFile } from './task-file.js';

/** The heading the formatted block starts with. */
export const TASK_CONTEXT_HEADING = '## Active Task Context';

/**
 * Renders tasks as neutral Markdown under `## Active Task Context`: each task's path, title,
 * status, branch, scope, objective and unchecked items, as recorded. It states facts only —
 * no instruction about what to do with them — and gives `''` for no tasks.
 */
export function formatTaskContext(tasks: readonly TaskFile[]): string {
  if (tasks.length === 0) return '';
  const blocks = tasks.map((task) => {
    const lines = [`### ${task.title}`, '', `- Path: ${task.path}`, `- Status: ${task.statusText ?? task.status}`];
    if (task.branch !== undefined) lines.push(`- Branch: ${task.branch}`);
    if (task.scope !== undefined) lines.push(`- Scope: ${task.scope}`);
    if (task.objective !== undefined) lines.push(`- Objective: ${task.objective}`);
    if (task.uncheckedItems.length > 0) {
      lines.push('- Unchecked items:');
      for (const item of task.uncheckedItems) lines.push(`  - [ ] ${item}`);
      if (task.omittedUncheckedItems) lines.push(`  - (${task.omittedUncheckedItems} more in the file)`);
    }
    return lines.join('\n');
  });
  return `${TASK_CONTEXT_HEADING}\n\n${blocks.join('\n\n')}\n`;
}
