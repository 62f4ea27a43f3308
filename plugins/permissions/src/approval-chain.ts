import { runApprovalChain, type ApprovalAnswer, type ApprovalHandler, type ApprovalRequest } from '@tessera/contracts';

/** A UI callback deciding one tool call: `true`, `false`, or `'allow-session'`. */
export type PermissionHandler = (toolName: string, input: unknown, request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;

/** The fallback asker (a terminal prompt, for instance). */
export type PromptForApproval = (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;

export interface ApprovalChainOptions {
  permissionHandler?: PermissionHandler;
  /** Used when no `permissionHandler` option is given (the bound `ApprovalHandler` service). */
  approvalHandler?: ApprovalHandler;
  promptForApproval?: PromptForApproval;
}

export type ApprovalOutcome =
  | { answer: ApprovalAnswer; via: 'permissionHandler' | 'approvalHandler' | 'promptForApproval' }
  | { answer: false; via: 'none' | 'aborted' | 'error'; reason: string };

/**
 * The approval strategy chain: the first configured of `permissionHandler`, the bound
 * `ApprovalHandler`, `promptForApproval` answers; with none configured the call is
 * denied. Never throws: an abort or a failing handler is a refusal with a reason. The
 * asking itself is the contracts' one chain (`runApprovalChain`).
 */
export async function requestApproval(options: ApprovalChainOptions, request: ApprovalRequest): Promise<ApprovalOutcome> {
  const { permissionHandler, approvalHandler, promptForApproval } = options;
  const outcome = await runApprovalChain(request, [
    permissionHandler && { via: 'permissionHandler', ask: (asked) => permissionHandler(asked.toolName, asked.input, asked) },
    approvalHandler && { via: 'approvalHandler', ask: (asked) => approvalHandler.requestApproval(asked) },
    promptForApproval && { via: 'promptForApproval', ask: promptForApproval },
  ]);
  return outcome as ApprovalOutcome;
}
