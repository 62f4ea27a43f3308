// The rule engine lives in @tessera/permission-rules; re-exported for existing importers.
export {
  analyzeBashCommand,
  compileRule,
  compileRules,
  EDIT_TOOLS,
  evaluatePermission,
  explainPermission,
  matchesPermissionRule,
  parseBashCommand,
  READ_TOOLS,
  readDenyTest,
  validatePermissionRules,
} from '@tessera/permission-rules';
export type {
  AnalyzedBashCommand,
  BashRedirect,
  BashSubcommand,
  BashWord,
  CommandForms,
  CompiledRule,
  DeniedPathTest,
  ParsedBashCommand,
  PermissionContext,
  PermissionExplanation,
  PermissionRules,
  RuleList,
  RuleMatchOptions,
  RuleProblem,
  SessionRule,
} from '@tessera/permission-rules';
export { requestApproval } from './approval-chain.js';
export type { ApprovalChainOptions, ApprovalOutcome, PermissionHandler, PromptForApproval } from './approval-chain.js';
export { PermissionEnforcer } from './permission-enforcer.js';
export type { PermissionEnforcerOptions } from './permission-enforcer.js';
export { RulesPermissionPolicy } from './rules-permission-policy.js';
export type { ExplainOptions, RulesPermissionPolicyOptions, RulesPermissionQuery } from './rules-permission-policy.js';
export { offeredTools } from './offered-tools.js';
export { DEFAULT_MAX_OUTPUT_CHARS, truncateMiddle, truncateToolResult } from './truncate-output.js';
export { permissionsPlugin, PERMISSIONS_PLUGIN_NAME } from './permissions-plugin.js';
export type { PermissionsPluginOptions } from './permissions-plugin.js';
export { hostPathFor } from '@tessera/permission-rules';
