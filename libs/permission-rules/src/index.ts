/**
 * Claude Code permission rules as a library: read rules, match a tool call against one rule
 * or decide a call against rule lists and a permission mode. Pure functions over strings and
 * paths (plus real-path lookups on the file system); no kernel, no container, no hooks. The
 * permissions plugin enforces these decisions; a third-party plugin may use them to test
 * rules of its own the same way.
 */

// Deciding a call: deny → ask → allow → mode.
export { evaluatePermission, explainPermission } from './evaluate-permission.js';
export type { PermissionContext, PermissionExplanation, SessionRule } from './evaluate-permission.js';

// Matching one rule against one call (a hook's `if`, a plugin's own rule lists).
export { matchesPermissionRule } from './rule-match.js';
export type { RuleMatchOptions } from './rule-match.js';

// Reading rules.
export { compileRule, EDIT_TOOLS, normalizeToolName, READ_TOOLS, validatePermissionRules } from './permission-rule.js';
export type { CompiledRule, RuleList, RuleProblem } from './permission-rule.js';
export { CompiledRuleList, compileRules } from './rule-set.js';
export type { CompiledRules, PermissionRules } from './rule-set.js';

// How a tool is judged: by its built-in name or by the family it declares.
export { isBuiltInTool, judgedTool, SAFE_TOOLS } from './tool-family.js';
export type { JudgedTool, RuleFamily } from './tool-family.js';
export { permissionSubject, resolveAnchors } from './permission-subject.js';
export type { BashFiles, PermissionSubject } from './permission-subject.js';

// Bash commands: parsing, the forms rules are matched against, files written through options.
export { parseBashCommand } from './bash-command.js';
export type { BashRedirect, BashSubcommand, BashWord, ParsedBashCommand } from './bash-command.js';
export { analyzeBashCommand } from './command-forms.js';
export type { AnalyzedBashCommand, CommandForms } from './command-forms.js';
export { writeTargets } from './write-targets.js';

// Paths: `Read(…)` / `Edit(…)` patterns, anchors, real paths, workspace containment.
export {
  expandHome,
  insideDirectories,
  matchesPathPattern,
  parsePathPattern,
  pathCandidates,
  pathPatternRegExps,
  realPathNearest,
} from './path-match.js';
export type { PathAnchor, PathAnchors, PathPattern } from './path-match.js';
export { readDenyTest } from './read-access.js';
export type { DeniedPathTest } from './read-access.js';

// Sandboxes: a path or command seen inside the sandbox root, judged as the host path it stands for.
export { hostCommand, hostInput, hostPathFor } from './sandbox-view.js';
