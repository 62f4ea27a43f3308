import type * as acp from '@agentclientprotocol/sdk';
import type { ToolResultBlock } from '@tessera/contracts';

/**
 * The one place Tessera's tool calls become ACP tool-call fields: a title, a kind, the files
 * touched, and the call's content (a diff for edits, text for everything else). The session
 * adapter and the history replay both build their updates here, so a live turn and a loaded
 * session look the same in the editor.
 */

const TOOL_KINDS: Readonly<Record<string, acp.ToolKind>> = {
  Read: 'read',
  NotebookRead: 'read',
  Edit: 'edit',
  MultiEdit: 'edit',
  Write: 'edit',
  NotebookEdit: 'edit',
  Bash: 'execute',
  BashOutput: 'execute',
  KillShell: 'execute',
  Glob: 'search',
  Grep: 'search',
  LS: 'search',
  WebFetch: 'fetch',
  WebSearch: 'fetch',
  Task: 'think',
  Agent: 'think',
  TodoWrite: 'think',
  ExitPlanMode: 'switch_mode',
  EnterPlanMode: 'switch_mode',
};

/** The ACP kind of a Tessera tool (`other` for tools it does not know: MCP, plugins). */
export function toolKind(toolName: string): acp.ToolKind {
  return TOOL_KINDS[toolName] ?? 'other';
}

type Input = Record<string, unknown>;

const asInput = (input: unknown): Input => (typeof input === 'object' && input !== null ? (input as Input) : {});
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const oneLine = (value: string, max = 80): string => {
  const line = value.split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** A short human title: `Read /src/a.ts`, `Bash: npm test`, `Grep "TODO" in src`. */
export function toolTitle(toolName: string, rawInput: unknown): string {
  const input = asInput(rawInput);
  const path = text(input.file_path) ?? text(input.notebook_path) ?? text(input.path);
  switch (toolName) {
    case 'Read':
    case 'Edit':
    case 'MultiEdit':
    case 'Write':
    case 'NotebookEdit':
      return path ? `${toolName} ${path}` : toolName;
    case 'Bash': {
      const command = text(input.command);
      return command ? `Bash: ${oneLine(command)}` : 'Bash';
    }
    case 'Glob':
    case 'Grep': {
      const pattern = text(input.pattern);
      if (!pattern) return toolName;
      return `${toolName} "${oneLine(pattern, 60)}"${path ? ` in ${path}` : ''}`;
    }
    case 'WebFetch':
      return text(input.url) ? `Fetch ${input.url as string}` : toolName;
    case 'WebSearch':
      return text(input.query) ? `Search the web: ${oneLine(input.query as string, 60)}` : toolName;
    case 'Task':
    case 'Agent':
      return text(input.description) ? `${toolName}: ${oneLine(input.description as string, 60)}` : toolName;
    default:
      return toolName;
  }
}

/** The files a call reads or writes, for the editor's "follow along". */
export function toolLocations(toolName: string, rawInput: unknown, data?: unknown): acp.ToolCallLocation[] {
  const input = asInput(rawInput);
  const path = text(input.file_path) ?? text(input.notebook_path) ?? (toolName === 'Read' || toolName === 'LS' ? text(input.path) : undefined);
  if (!path) return [];
  const startLine = (data as { startLine?: unknown } | undefined)?.startLine;
  const offset = toolName === 'Read' ? input.offset : undefined;
  const line = typeof startLine === 'number' && startLine > 0 ? startLine : typeof offset === 'number' && offset > 0 ? offset : undefined;
  return [line === undefined ? { path } : { path, line }];
}

/**
 * Diff content for edit tools, from the input alone (so a permission prompt shows it before
 * the call runs): Edit and MultiEdit as old → new snippets, Write as the new file (its old text
 * is not known here, so it is left out), NotebookEdit as the new cell source.
 */
export function editDiffs(toolName: string, rawInput: unknown): acp.ToolCallContent[] {
  const input = asInput(rawInput);
  const path = text(input.file_path) ?? text(input.notebook_path);
  if (!path) return [];
  switch (toolName) {
    case 'Edit':
      return typeof input.new_string === 'string' ? [diff(path, input.old_string, input.new_string)] : [];
    case 'MultiEdit':
      return Array.isArray(input.edits)
        ? input.edits.filter((edit): edit is Input => typeof asInput(edit).new_string === 'string').map((edit) => diff(path, edit.old_string, edit.new_string as string))
        : [];
    case 'Write':
      return typeof input.content === 'string' ? [{ type: 'diff', path, newText: input.content }] : [];
    case 'NotebookEdit':
      return typeof input.new_source === 'string' ? [{ type: 'diff', path, newText: input.new_source }] : [];
    default:
      return [];
  }
}

function diff(path: string, oldText: unknown, newText: string): acp.ToolCallContent {
  return { type: 'diff', path, oldText: typeof oldText === 'string' ? oldText : null, newText };
}

/** Text content for a tool result (what the model was given), or nothing when it is empty. */
export function resultContent(result: Pick<ToolResultBlock, 'content'>): acp.ToolCallContent[] {
  const body = typeof result.content === 'string' ? result.content : result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return body === '' ? [] : [{ type: 'content', content: { type: 'text', text: body } }];
}

/** A `tool_call` update for a call that is about to run (or, in a replay, ran). */
export function toolCallStart(toolCallId: string, toolName: string, rawInput: unknown, status: acp.ToolCallStatus = 'pending'): acp.ToolCall & { sessionUpdate: 'tool_call' } {
  return {
    sessionUpdate: 'tool_call',
    toolCallId,
    title: toolTitle(toolName, rawInput),
    kind: toolKind(toolName),
    status,
    content: editDiffs(toolName, rawInput),
    locations: toolLocations(toolName, rawInput),
    rawInput,
  };
}

/**
 * The content shown once a call ended: an edit keeps its diff when it succeeded; anything else
 * shows the tool's output (or its error).
 */
export function finishedContent(toolName: string, rawInput: unknown, success: boolean, result: Pick<ToolResultBlock, 'content'> | undefined): acp.ToolCallContent[] {
  const diffs = success ? editDiffs(toolName, rawInput) : [];
  if (diffs.length > 0) return diffs;
  return result ? resultContent(result) : [];
}

/** TodoWrite's list as an ACP plan (`undefined` for any other call or a list it cannot read). */
export function planFromTodos(toolName: string, rawInput: unknown): acp.Plan | undefined {
  if (toolName !== 'TodoWrite') return undefined;
  const todos = asInput(rawInput).todos;
  if (!Array.isArray(todos)) return undefined;
  const entries: acp.PlanEntry[] = [];
  for (const todo of todos) {
    const item = asInput(todo);
    const content = text(item.content);
    if (!content) continue;
    const status = item.status === 'completed' || item.status === 'in_progress' ? item.status : 'pending';
    const priority = item.priority === 'high' || item.priority === 'low' ? item.priority : 'medium';
    entries.push({ content, status, priority });
  }
  return { entries };
}
