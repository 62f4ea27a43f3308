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
  const builtIn = BUILT_IN_JUDGED.get(name);
  if (builtIn !== undefined) return builtIn;
  // A family this version does not know (metadata comes from third-party code) counts as none.
  const family = permission === undefined || isBuiltInTool(name) ? undefined : FAMILY_TOOL.get(permission.family);
  if (family === undefined) return undeclared(name);
  const subjectField = typeof permission?.subject === 'string' && permission.subject !== '' ? permission.subject : undefined;
  return declaredTool(permission!, name, family, subjectField);
}

/**
 * The judged tools are shared (frozen) objects: judging a call allocates nothing for a
 * built-in name, an unknown name, or a declared tool already seen with the same permission.
 */
const frozenTool = (name: string, family: RuleFamily | undefined, declared: boolean, subjectField: string | undefined): JudgedTool =>
  Object.freeze({ name, family, declared, subjectField });

const BUILT_IN_JUDGED: ReadonlyMap<string, JudgedTool> = new Map<string, JudgedTool>([
  ['Bash', frozenTool('Bash', 'Bash', false, undefined)],
  ['WebFetch', frozenTool('WebFetch', 'WebFetch', false, undefined)],
  ...[...READ_TOOLS].map((name): [string, JudgedTool] => [name, frozenTool(name, 'Read', false, undefined)]),
  ...[...EDIT_TOOLS].map((name): [string, JudgedTool] => [name, frozenTool(name, 'Edit', false, undefined)]),
]);

const undeclaredTools = new Map<string, JudgedTool>();

function undeclared(name: string): JudgedTool {
  let tool = undeclaredTools.get(name);
  if (tool === undefined) {
    tool = frozenTool(name, undefined, false, undefined);
    if (undeclaredTools.size > 1000) undeclaredTools.clear();
    undeclaredTools.set(name, tool);
  }
  return tool;
}

// Per permission object: the tools judged with it, by name. Checked against the family and
// subject read this time, so a permission object changed in place is judged afresh.
const declaredTools = new WeakMap<ToolPermission, Map<string, JudgedTool>>();

function declaredTool(permission: ToolPermission, name: string, family: RuleFamily, subjectField: string | undefined): JudgedTool {
  let byName = declaredTools.get(permission);
  if (byName === undefined) declaredTools.set(permission, (byName = new Map()));
  let tool = byName.get(name);
  if (tool === undefined || tool.family !== family || tool.subjectField !== subjectField) {
    tool = frozenTool(name, family, true, subjectField);
    if (byName.size > 1000) byName.clear();
    byName.set(name, tool);
  }
  return tool;
}
