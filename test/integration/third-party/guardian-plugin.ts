// A plugin as someone outside the project would write it: it imports only the contracts, the
// kernel and the public libraries — no first-party plugin package. It approves tool calls
// that match its own allow-list (using the same rule matcher the permissions plugin uses),
// refuses the rest, and contributes a `guardian` command that reports what it decided.
import {
  ApprovalHandler,
  CommandContribution,
  type ApprovalAnswer,
  type ApprovalRequest,
  type ICommandModule,
  type ToolPermission,
} from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import { explainPermission, validatePermissionRules } from '@tessera/permission-rules';

export interface GuardianOptions {
  /** Claude Code rules this guardian approves (`Bash(git status)`, `Edit(src/**)`). */
  approve: string[];
  /** How to judge tools the rules do not know by name (an MCP tool's family). */
  families?: Record<string, ToolPermission>;
  cwd: string;
}

export interface GuardianDecision {
  toolName: string;
  input: unknown;
  approved: boolean;
  rule?: string;
}

export function guardian(options: GuardianOptions): Plugin {
  const problems = validatePermissionRules(options.approve, 'allow');
  if (problems.length > 0) throw new PluginOptionsError('guardian', 'guardian', 'approve', `has rules it cannot read: ${problems.map((problem) => problem.message).join('; ')}`);
  return definePlugin({
    name: 'guardian',
    provides: [ApprovalHandler],
    contributes: [CommandContribution],
    register({ bind }) {
      // Per kernel: the decisions this kernel's guardian made.
      const decisions: GuardianDecision[] = [];
      const handler: ApprovalHandler = {
        async requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer> {
          const permission = options.families?.[request.toolName];
          // Allow-list meaning: a compound command is approved only when every part is.
          // (`matchesPermissionRule` has deny-list meaning: one matching part is enough.)
          const verdict = explainPermission(request.toolName, request.input, 'default', { allow: options.approve }, { cwd: options.cwd, ...(permission ? { permission } : {}) });
          const rule = verdict.decision === 'auto' ? verdict.rule : undefined;
          decisions.push({ toolName: request.toolName, input: request.input, approved: rule !== undefined, ...(rule ? { rule } : {}) });
          return rule !== undefined;
        },
      };
      bind(ApprovalHandler).toConstantValue(handler);
      const module: ICommandModule = {
        name: 'guardian',
        systemCommands: [
          {
            name: 'guardian',
            description: 'Show the tool calls the guardian approved and refused',
            userInvocable: true,
            modelInvocable: false,
            safety: 'read-only',
            lifecycle: 'inline',
            execute: (context) => ({
              success: true,
              message: decisions.length === 0 ? 'No decisions yet.' : decisions.map((decision) => `${decision.approved ? 'approved' : 'refused'} ${decision.toolName}${decision.rule ? ` (${decision.rule})` : ''}`).join('\n'),
              data: { session: context.sessionId, approved: decisions.filter((decision) => decision.approved).length, refused: decisions.filter((decision) => !decision.approved).length },
            }),
          },
        ],
      };
      bind(CommandContribution).toConstantValue(module);
    },
  });
}
