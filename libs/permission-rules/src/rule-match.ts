import { findMatch } from './evaluate-permission.js';
import { normalizeToolName } from './permission-rule.js';
import { permissionSubject, resolveAnchors } from './permission-subject.js';
import { CompiledRuleList } from './rule-set.js';

const compiledRules = new Map<string, CompiledRuleList>();

function compiled(rule: string): CompiledRuleList {
  let list = compiledRules.get(rule);
  if (!list) {
    list = new CompiledRuleList([rule], 'deny');
    if (compiledRules.size > 1000) compiledRules.clear();
    compiledRules.set(rule, list);
  }
  return list;
}

/**
 * True when `rule` (`Write(src/**)`, `Bash(git *)`, `WebFetch(domain:x.com)`, bare `Read`…)
 * matches this tool call, with the meaning the rule has in a `deny` list here — so a hook's
 * `if` and a permission rule never disagree. `Edit(…)` covers Write, MultiEdit and
 * NotebookEdit; path patterns are anchored at `anchors` (`./x` and `x/y` at `cwd`, `/x` at
 * `settingsRoot`, default `cwd`, `~/x` at `homeDir`) and tested against the path as given
 * and its real path, case-insensitively; a compound Bash command matches when one of its
 * subcommands does (wrappers and `VAR=` prefixes stripped). A rule that cannot be read
 * matches every call of the tool it names, as a deny rule would (check rules with
 * `validatePermissionRules` to report them).
 */
export function matchesPermissionRule(
  rule: string,
  toolName: string,
  input: unknown,
  anchors: { cwd: string; settingsRoot?: string; homeDir?: string },
): boolean {
  const resolved = resolveAnchors(anchors);
  const tool = normalizeToolName(toolName);
  const subject = permissionSubject(tool, input, resolved);
  return findMatch(compiled(rule), tool, input, subject, resolved) !== undefined;
}
