import type { ToolPermission } from '@tessera/contracts';
import { EDIT_TOOLS, normalizeToolName, READ_TOOLS } from './permission-rule.js';

/** The built-in tool whose rules (and mode defaults) a family of tools shares. */
export type RuleFamily = 'Read' | 'Edit' | 'Bash' | 'WebFetch';

/** `ToolPermission.family` → the built-in tool whose rules judge it. */
const FAMILY_TOOL: ReadonlyMap<string, RuleFamily> = new Map<ToolPermission['family'], RuleFamily>([
  ['read', 'Read'],
  ['edit', 'Edit'],
  ['execute', 'Bash'],
  ['fetch', 'WebFetch'],
]);

/** Tools that only read or talk to the user: no approval in any mode. */
export const SAFE_TOOLS: ReadonlySet<string> = new Set([
  'WebSearch',
  'TodoRead',
  'TodoWrite',
  'AskUserQuestion',
  'ExitPlanMode',
  'EnterPlanMode',
  'Agent',
  'BashOutput',
  'TaskOutput',
]);

/**
 * How a tool call is judged: under its own name, and as a member of a family whose rules
 * also apply. Built-in tools belong to their family by name; any other tool only through the
 * `ToolPermission` it declares (`declared`), which also names the input field it is judged by.
 */
export interface JudgedTool {
  /** The tool's name, `Task` normalised to `Agent`. */
  name: string;
  family: RuleFamily | undefined;
  /** True when the family comes from `Tool.permission`, not from a built-in name. */
  declared: boolean;
  /** The input field holding the path, command or URL; undefined: the built-in tools' fields. */
  subjectField: string | undefined;
}

/** Whether the rules know this tool by name (its declared `permission` is then ignored). */
export function isBuiltInTool(toolName: string): boolean {
  const name = normalizeToolName(toolName);
  return (
    READ_TOOLS.has(name) || EDIT_TOOLS.has(name) || SAFE_TOOLS.has(name) || name === 'Bash' || name === 'WebFetch' || name === 'Skill'
  );
}

/**
 * The family a call is judged by. A built-in name decides by itself; an unknown name with a
 * `permission` joins that family (`mcp__fs__write_file` with `{ family: 'edit' }` is judged as
 * Edit of `input[subject]`); an unknown name without one has no family, as before.
 */
export function judgedTool(toolName: string, permission?: ToolPermission): JudgedTool {
  const name = normalizeToolName(toolName);
  if (name === 'Bash') return { name, family: 'Bash', declared: false, subjectField: undefined };
  if (name === 'WebFetch') return { name, family: 'WebFetch', declared: false, subjectField: undefined };
  if (READ_TOOLS.has(name)) return { name, family: 'Read', declared: false, subjectField: undefined };
  if (EDIT_TOOLS.has(name)) return { name, family: 'Edit', declared: false, subjectField: undefined };
  // A family this version does not know (metadata comes from third-party code) counts as none.
  const family = permission === undefined || isBuiltInTool(name) ? undefined : FAMILY_TOOL.get(permission.family);
  if (family === undefined) return { name, family: undefined, declared: false, subjectField: undefined };
  const subjectField = typeof permission?.subject === 'string' && permission.subject !== '' ? permission.subject : undefined;
  return { name, family, declared: true, subjectField };
}
