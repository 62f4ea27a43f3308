import { resolve } from 'node:path';
import type { PreToolUseContext } from '@tessera/contracts';
import { judgedTool } from '@tessera/permission-rules';

/** Where the built-in edit tools (Write, Edit, MultiEdit, NotebookEdit) take their path. */
const BUILT_IN_PATH_FIELDS = ['file_path', 'notebook_path', 'filePath', 'notebookPath', 'path'];

/**
 * The absolute path a tool call is about to change, or `undefined` when the call is not a file
 * edit. Edit tools are the ones the permission rules judge as `Edit`: the built-ins by name,
 * any other tool by its declared `permission: { family: 'edit', subject }`. A relative path
 * resolves against the session cwd, as the tools resolve it.
 */
export function editTargetOf(context: Pick<PreToolUseContext, 'toolName' | 'tool' | 'input' | 'session'>): string | undefined {
  const judged = judgedTool(context.toolName, context.tool?.permission);
  if (judged.family !== 'Edit') return undefined;
  const input = context.input;
  if (typeof input !== 'object' || input === null) return undefined;
  const fields = judged.subjectField === undefined ? BUILT_IN_PATH_FIELDS : [judged.subjectField];
  for (const field of fields) {
    const value = (input as Record<string, unknown>)[field];
    if (typeof value === 'string' && value !== '' && !value.includes('\0')) return resolve(context.session.cwd, value);
  }
  return undefined;
}
