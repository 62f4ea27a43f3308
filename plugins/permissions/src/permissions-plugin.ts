import { ApprovalHandler, PermissionPolicy, ReadAccess, SandboxPaths, ShellDirectories, WorkspaceGrants } from '@tessera/contracts';
import { definePlugin, Stage, type Plugin } from '@tessera/kernel';
import type { ApprovalChainOptions } from './approval-chain.js';
import { PermissionEnforcer } from './permission-enforcer.js';
import type { PermissionRules } from './rule-set.js';
import { RulesPermissionPolicy, type RulesPermissionPolicyOptions } from './rules-permission-policy.js';

export const PERMISSIONS_PLUGIN_NAME = 'permissions';

export interface PermissionsPluginOptions extends RulesPermissionPolicyOptions, Omit<ApprovalChainOptions, 'approvalHandler'> {
  /** Claude Code `permissions` rules (`allow`, `ask`, `deny`, `additionalDirectories`). */
  rules?: PermissionRules;
  /** Tool output longer than this is middle-truncated; `false` turns it off. Default 30,000. */
  maxOutputChars?: number | false;
  /** Called with the enforcer once built (to read or clear session approvals). */
  onEnforcer?: (enforcer: PermissionEnforcer) => void;
}

/**
 * Rule-based permissions: provides `PermissionPolicy` (so `testPreset({ replace })` swaps
 * out the allow-all policy) and guards every tool call at `Stage.Guard`. The bound
 * `ApprovalHandler`, when some plugin provides one, is the approver after `permissionHandler`.
 * Also provides `ReadAccess` (Read deny rules for Glob and Grep results), leaves tools that a
 * deny rule denies outright out of each model request, and resolves a Bash command's relative
 * paths in the shell's directory when some plugin binds `ShellDirectories`.
 */
export function permissionsPlugin(options: PermissionsPluginOptions = {}): Plugin {
  const policy = new RulesPermissionPolicy(options.rules, options);
  const enforcer = new PermissionEnforcer({
    policy,
    ...(options.permissionHandler ? { permissionHandler: options.permissionHandler } : {}),
    ...(options.promptForApproval ? { promptForApproval: options.promptForApproval } : {}),
    ...(options.maxOutputChars === undefined ? {} : { maxOutputChars: options.maxOutputChars }),
  });
  options.onEnforcer?.(enforcer);
  return definePlugin({
    name: PERMISSIONS_PLUGIN_NAME,
    provides: [PermissionPolicy, ReadAccess, WorkspaceGrants],
    register({ bind, hooks }) {
      bind(PermissionPolicy).toConstantValue(policy);
      bind(ReadAccess).toConstantValue(policy);
      bind(WorkspaceGrants).toConstantValue(policy);
      // Guard stage: later taps (and the provider) see the list the model will get.
      hooks.beforeProviderRequest.tap({ name: `${PERMISSIONS_PLUGIN_NAME}:offered-tools`, stage: Stage.Guard }, ({ request }) => {
        const tools = policy.offeredTools(request.tools);
        // The provider's hosted web search is not in `tools` and never reaches preToolUse.
        const noWebSearch = policy.webSearchDenied() && request.nativeTools?.webSearch !== false;
        if (tools === request.tools && !noWebSearch) return undefined;
        return { request: { ...request, tools, ...(noWebSearch ? { nativeTools: { ...request.nativeTools, webSearch: false } } : {}) } };
      });
      hooks.preToolUse.tapPromise({ name: `${PERMISSIONS_PLUGIN_NAME}:enforce`, stage: Stage.Guard }, (context) =>
        enforcer.checkPermission(context),
      );
      // Guard stage: hooks that run later see the output the model will see.
      const truncate = { name: `${PERMISSIONS_PLUGIN_NAME}:truncate`, stage: Stage.Guard };
      hooks.postToolUse.tap(truncate, (context) => enforcer.truncate(context));
      hooks.postToolUseFailure.tap(truncate, (context) => enforcer.truncate(context));
    },
    boot({ getOptional }) {
      enforcer.setApprovalHandler(getOptional(ApprovalHandler));
      // Optional services other plugins bind (the built-in tools); every binding is in place at boot.
      const shellDirectories = getOptional(ShellDirectories);
      const sandboxPaths = getOptional(SandboxPaths);
      enforcer.setShellDirectories(() => shellDirectories);
      enforcer.setSandboxPaths(() => sandboxPaths);
    },
  });
}
