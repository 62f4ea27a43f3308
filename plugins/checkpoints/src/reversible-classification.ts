import type { ToolPermission } from '@tessera/contracts';
import { judgedTool } from '@tessera/permission-rules';

/**
 * What undoing a tool call takes, for local-first reversible execution:
 * - `read-only`: nothing to undo (Read, Glob, Grep, WebFetch, WebSearch, read/fetch families);
 * - `session-only`: changes only the conversation (todo lists, questions to the user, plan mode);
 * - `file-edit`: an edit checkpoint, or isolation;
 * - `process`: isolation (a worktree or a sandbox), since no checkpoint sees a shell's effects;
 * - `agent`: a subagent; reversible when its jobs run in worktrees, or under isolation;
 * - `unknown`: nothing this policy can vouch for.
 */
export type ReversibilityClass = 'read-only' | 'session-only' | 'file-edit' | 'process' | 'agent' | 'unknown';

/** Read-only tools the permission families do not cover. */
const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(['WebSearch', 'BashOutput', 'TaskOutput', 'TodoRead']);
const SESSION_ONLY_TOOLS: ReadonlySet<string> = new Set(['TodoWrite', 'AskUserQuestion', 'ExitPlanMode', 'EnterPlanMode']);
/** Process control besides Bash itself. */
const PROCESS_TOOLS: ReadonlySet<string> = new Set(['KillShell']);

/** Classifies a call by tool name, or by the permission family a third-party tool declares. */
export function reversibilityOf(toolName: string, permission?: ToolPermission): ReversibilityClass {
  const judged = judgedTool(toolName, permission);
  if (judged.family === 'Read' || judged.family === 'WebFetch' || READ_ONLY_TOOLS.has(judged.name)) return 'read-only';
  if (judged.family === 'Edit') return 'file-edit';
  if (judged.family === 'Bash' || PROCESS_TOOLS.has(judged.name)) return 'process';
  if (judged.name === 'Agent') return 'agent';
  if (SESSION_ONLY_TOOLS.has(judged.name)) return 'session-only';
  return 'unknown';
}

/** An Agent call whose job (or every job of its batch) asks for a worktree. */
export function agentRunsInWorktrees(input: unknown): boolean {
  if (typeof input !== 'object' || input === null) return false;
  const { isolation, jobs } = input as { isolation?: unknown; jobs?: unknown };
  if (Array.isArray(jobs) && jobs.length > 0) {
    return jobs.every((job) => typeof job === 'object' && job !== null && ((job as { isolation?: unknown }).isolation ?? isolation) === 'worktree');
  }
  return isolation === 'worktree';
}
