import type { ToolSchema } from '@tessera/contracts';
import { compileRules, normalizeToolName, type PermissionRules } from '@tessera/permission-rules';

/**
 * The tools to offer the model: those a deny rule denies outright (`WebFetch`, `Bash(*)`,
 * `mcp__server`, `mcp__server__*`, or a family rule such as a bare `Edit` for Write) are left
 * out, as Claude Code removes them from the model's context — every call would be denied.
 * Rules scoped to a specifier (`Bash(rm *)`) keep the tool. Returns `tools` itself when
 * nothing is left out.
 */
/** Whether a deny rule denies `WebSearch` outright: the provider's hosted web search must stay off too. */
export function webSearchDenied(rules: PermissionRules): boolean {
  if (!rules.deny || rules.deny.length === 0) return false;
  return compileRules(rules).deny.bareRule('WebSearch') !== undefined;
}

export function offeredTools(rules: PermissionRules, tools: readonly ToolSchema[]): readonly ToolSchema[] {
  if (!rules.deny || rules.deny.length === 0) return tools;
  const { deny } = compileRules(rules);
  const kept = tools.filter((tool) => deny.bareRule(normalizeToolName(tool.name)) === undefined);
  return kept.length === tools.length ? tools : kept;
}
