import type { ToolPermission } from '@tessera/contracts';
import { matchesPermissionRule } from '@tessera/permission-rules';

/**
 * The per-handler `if` field: one permission rule (`Bash(git *)`, `Edit(src/**)`,
 * `WebFetch(domain:example.com)`) that must match the tool call for the handler to run. It
 * means exactly what the rule means in a permission `deny` list — the permissions plugin's
 * own matcher decides — so a hook filter and a permission rule never disagree: path
 * patterns are anchored at `cwd` (the session's, where permission rules are anchored too;
 * a Bash `cd` does not move them), a compound Bash command
 * matches when one of its subcommands does, and `Edit(…)` covers Write. A rule that cannot
 * be read matches every call of its tool (a hook that fires too often is safer than a guard
 * that never fires); the config reader reports such rules. A tool that declares a permission
 * family (an MCP tool) is judged by it, as the permission engine judges it: `Edit(src/**)`
 * also covers an edit-family tool writing under `src/`.
 */
export function matchesIfCondition(rule: string, toolName: string, input: unknown, cwd: string, permission?: ToolPermission): boolean {
  const open = rule.indexOf('(');
  const tool = (open === -1 ? rule : rule.slice(0, open)).trim();
  // Claude Code renamed Task to Agent; hook configs use either.
  const normalize = (name: string): string => (name === 'Task' ? 'Agent' : name);
  const normalized = normalize(tool) === tool ? rule : `${normalize(tool)}${rule.slice(tool.length)}`;
  return matchesPermissionRule(normalized, normalize(toolName), input, { cwd, ...(permission === undefined ? {} : { permission }) });
}
