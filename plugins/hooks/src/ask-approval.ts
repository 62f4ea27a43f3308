import { isApproved, runApprovalChain, type ApprovalAnswer, type ApprovalHandler, type ApprovalRequest } from '@tessera/contracts';

/**
 * The same approval strategy chain the permissions plugin uses — `permissionHandler`, then
 * the bound `ApprovalHandler`, then `promptForApproval`, else deny — for hooks that answer
 * `permissionDecision: "ask"`, run by the contracts' one chain (`runApprovalChain`); bind
 * one `ApprovalHandler` and both plugins ask the same UI.
 */
export interface HookApprovalOptions {
  permissionHandler?: (toolName: string, input: unknown, request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
  approvalHandler?: ApprovalHandler;
  promptForApproval?: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
}

/** Resolves to `true` when approved; otherwise a reason. Never throws; honours the request's signal. */
export async function askForApproval(options: HookApprovalOptions, request: ApprovalRequest): Promise<true | string> {
  const { permissionHandler, approvalHandler, promptForApproval } = options;
  const outcome = await runApprovalChain(request, [
    permissionHandler && { via: 'permissionHandler', ask: (asked) => permissionHandler(asked.toolName, asked.input, asked) },
    approvalHandler && { via: 'approvalHandler', ask: (asked) => approvalHandler.requestApproval(asked) },
    promptForApproval && { via: 'promptForApproval', ask: promptForApproval },
  ]);
  if (isApproved(outcome.answer)) return true;
  if (typeof outcome.answer === 'object' && outcome.answer.behavior === 'deny' && outcome.answer.message) return outcome.answer.message;
  if ('reason' in outcome) return outcome.via === 'none' ? 'a hook asked for approval but no approval handler is configured' : outcome.reason;
  return 'the user declined';
}
