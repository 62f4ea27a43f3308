import {
  ApprovalHandler,
  noSessionServices,
  PermissionPolicy,
  ReadAccess,
  SandboxPaths,
  ShellDirectories,
  TesseraError,
  WorkspaceGrants,
  type ISession,
  type SessionServices,
  copyWith,
} from '@tessera/contracts';
import { definePlugin, Stage, type Plugin } from '@tessera/kernel';
import type { PermissionRules } from '@tessera/permission-rules';
import type { ApprovalChainOptions } from './approval-chain.js';
import { PermissionEnforcer } from './permission-enforcer.js';
import { RulesPermissionPolicy, type RulesPermissionPolicyOptions } from './rules-permission-policy.js';

export const PERMISSIONS_PLUGIN_NAME = 'permissions';

export interface PermissionsPluginOptions extends RulesPermissionPolicyOptions, Omit<ApprovalChainOptions, 'approvalHandler'> {
  /** Claude Code `permissions` rules (`allow`, `ask`, `deny`, `additionalDirectories`). */
  rules?: PermissionRules;
  /** Tool output longer than this is middle-truncated; `false` turns it off. Default 30,000. */
  maxOutputChars?: number | false;
  /**
   * Called with each kernel's enforcer when that kernel registers the plugin (to read or
   * clear session approvals). A plugin value composed into two kernels calls it twice.
   */
  onEnforcer?: (enforcer: PermissionEnforcer) => void;
}

function validate(options: PermissionsPluginOptions): void {
  const { maxOutputChars } = options;
  if (maxOutputChars !== undefined && maxOutputChars !== false && !(typeof maxOutputChars === 'number' && maxOutputChars > 0)) {
    throw new TesseraError(`permissionsPlugin: maxOutputChars must be a positive number or false (got ${String(maxOutputChars)}).`, {
      code: 'invalid_plugin_options',
      category: 'configuration',
      recoverable: false,
      details: { plugin: PERMISSIONS_PLUGIN_NAME, option: 'maxOutputChars' },
    });
  }
}

/**
 * Rule-based permissions: provides `PermissionPolicy` (so `testPreset({ replace })` swaps
 * out the allow-all policy) and guards every tool call at `Stage.Guard`. The `ApprovalHandler`
 * a session sees, when some plugin provides one, is the approver after `permissionHandler`.
 * Also provides `ReadAccess` (Read deny rules for Glob and Grep results), leaves tools that a
 * deny rule denies outright out of each model request, and resolves a Bash command's relative
 * paths in the shell's directory when some plugin binds `ShellDirectories`.
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own
 * `RulesPermissionPolicy`, and each kernel's `register()` its own `PermissionEnforcer` (and
 * returns the activation that holds that kernel's state), so one plugin value composes into
 * any number of kernels. Every check reads the policy, approver, shell directories and
 * sandbox mapping from the session's services, so a `kernel.container.rebind(PermissionPolicy)`
 * reaches sessions created afterwards.
 */
export function permissionsPlugin(options: PermissionsPluginOptions = {}): Plugin {
  validate(options);

  return definePlugin({
    name: PERMISSIONS_PLUGIN_NAME,
    provides: [PermissionPolicy, ReadAccess, WorkspaceGrants],
    optional: [ApprovalHandler, ShellDirectories, SandboxPaths],
    register({ bind, hooks }) {
      // One RulesPermissionPolicy per kernel behind the three tokens (so `setRules()` on the
      // policy also changes ReadAccess and WorkspaceGrants), built on first resolution.
      let policy: RulesPermissionPolicy | undefined;
      const rulesPolicy = (): RulesPermissionPolicy => (policy ??= new RulesPermissionPolicy(options.rules, options));
      bind(PermissionPolicy).toResolvedValue(rulesPolicy).inSingletonScope();
      bind(ReadAccess).toResolvedValue(rulesPolicy).inSingletonScope();
      bind(WorkspaceGrants).toResolvedValue(rulesPolicy).inSingletonScope();

      // This kernel's own lookups, set when it boots, for sessions made outside it: a
      // subagent's child session or a hook stand-in has no services of its own.
      let kernelServices: SessionServices = noSessionServices;
      const servicesOf = (session: ISession): SessionServices => {
        const own = session.services as SessionServices | undefined;
        return own === undefined || own === noSessionServices ? kernelServices : own;
      };
      const enforcer = new PermissionEnforcer({
        services: servicesOf,
        ...(options.permissionHandler ? { permissionHandler: options.permissionHandler } : {}),
        ...(options.promptForApproval ? { promptForApproval: options.promptForApproval } : {}),
        ...(options.maxOutputChars === undefined ? {} : { maxOutputChars: options.maxOutputChars }),
      });
      options.onEnforcer?.(enforcer);

      // Guard stage: later taps (and the provider) see the list the model will get.
      hooks.beforeProviderRequest.tap({ name: `${PERMISSIONS_PLUGIN_NAME}:offered-tools`, stage: Stage.Guard }, ({ session, request }) => {
        // The session's policy: another policy (a rebind) has no rules to leave tools out by.
        const sessionPolicy = servicesOf(session).getOptional(PermissionPolicy);
        if (!(sessionPolicy instanceof RulesPermissionPolicy)) return undefined;
        const tools = sessionPolicy.offeredTools(request.tools);
        // The provider's hosted web search is not in `tools` and never reaches preToolUse.
        const noWebSearch = sessionPolicy.webSearchDenied() && request.nativeTools?.webSearch !== false;
        if (tools === request.tools && !noWebSearch) return undefined;
        return { request: copyWith(request, { tools, ...(noWebSearch ? { nativeTools: { ...request.nativeTools, webSearch: false } } : {}) }) };
      });
      hooks.preToolUse.tapPromise({ name: `${PERMISSIONS_PLUGIN_NAME}:enforce`, stage: Stage.Guard }, (context) =>
        enforcer.checkPermission(context),
      );
      // Guard stage: hooks that run later see the output the model will see.
      const truncate = { name: `${PERMISSIONS_PLUGIN_NAME}:truncate`, stage: Stage.Guard };
      hooks.postToolUse.tap(truncate, (context) => enforcer.truncate(context));
      hooks.postToolUseFailure.tap(truncate, (context) => enforcer.truncate(context));

      return {
        boot({ get, getOptional, getAll }) {
          kernelServices = { get, getOptional, getAll };
        },
      };
    },
  });
}
