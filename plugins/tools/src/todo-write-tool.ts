import type { Tool } from '@tessera/contracts';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';
import { succeed } from './result.js';

export type TodoStatus = 'pending' | 'in_progress' | 'completed';

/** One item of the list, as Claude Code's TodoWrite takes it (`id` and `priority` from its older schema are kept when sent). */
export interface TodoItem {
  content: string;
  status: TodoStatus;
  /** The item in the present continuous ("Running the tests"), shown while it is in progress. */
  activeForm?: string;
  id?: string;
  priority?: 'high' | 'medium' | 'low';
}

export interface TodoWriteToolData {
  todos: TodoItem[];
}

export const todoWriteInputSchema = z.object({
  todos: z
    .array(
      z.object({
        content: z.string().trim().min(1).describe('What to do, in the imperative ("Run the tests")'),
        status: z.enum(['pending', 'in_progress', 'completed']),
        activeForm: z.string().trim().min(1).optional().describe('The same in the present continuous ("Running the tests"), shown while it is in progress'),
        id: z.string().optional(),
        priority: z.enum(['high', 'medium', 'low']).optional(),
      }),
    )
    .describe('The whole updated list: every item, in order, with its current status'),
});

export type TodoWriteInput = z.infer<typeof todoWriteInputSchema>;

/**
 * TodoWrite: the model's task list for the current work. Each call sends the whole list; the
 * tool changes no file and needs no permission (`SAFE_TOOLS`). UIs show the list from the call
 * (ACP sends it as a `plan` update; the result's `data.todos` carries it too).
 */
export function todoWriteTool(): Tool<TodoWriteInput, TodoWriteToolData> {
  return defineTool<TodoWriteInput, TodoWriteToolData>({
    name: 'TodoWrite',
    description:
      'Keeps a structured task list for the current work, shown to the user as your plan. Use it for work of three or more steps, ' +
      'when the user gives several tasks, or when new steps come up; skip it for a single simple step. Send the whole list each time. ' +
      'Mark an item in_progress before starting it (one at a time) and completed as soon as it is done — not before it is fully done, ' +
      'and not with failing tests or unfinished parts. Add items for follow-up work you discover; remove items that no longer apply.',
    inputSchema: todoWriteInputSchema,
    execute(input) {
      const todos: TodoItem[] = input.todos.map((todo) => ({
        content: todo.content,
        status: todo.status,
        ...(todo.activeForm === undefined ? {} : { activeForm: todo.activeForm }),
        ...(todo.id === undefined ? {} : { id: todo.id }),
        ...(todo.priority === undefined ? {} : { priority: todo.priority }),
      }));
      const count = (status: TodoStatus): number => todos.filter((todo) => todo.status === status).length;
      const active = count('in_progress');
      const summary =
        todos.length === 0
          ? 'The todo list is now empty.'
          : `The todo list is updated: ${todos.length} item${todos.length === 1 ? '' : 's'} (${count('completed')} completed, ${active} in progress, ${count('pending')} pending).`;
      const advice =
        active > 1
          ? ' More than one item is in progress: finish one and mark it completed before moving on.'
          : todos.length > 0 && count('completed') < todos.length
            ? ' Keep it current: mark each item completed as soon as it is done.'
            : '';
      return succeed(summary + advice, { todos });
    },
  });
}
