import { createAbortError, describeError, type ApprovalAnswer, type ApprovalHandler, type ApprovalRequest } from '@tessera/contracts';

/**
 * The same approval strategy chain the permissions plugin uses — `permissionHandler`, then
 * the bound `ApprovalHandler`, then `promptForApproval`, else deny — for hooks that answer
 * `permissionDecision: "ask"`. Kept local so this package does not depend on the
 * permissions plugin; bind one `ApprovalHandler` and both plugins ask the same UI.
 */
export interface HookApprovalOptions {
  permissionHandler?: (toolName: string, input: unknown, request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
  approvalHandler?: ApprovalHandler;
  promptForApproval?: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
}

/** Resolves to `true` when approved; otherwise a reason. Never throws; honours the request's signal. */
export async function askForApproval(options: HookApprovalOptions, request: ApprovalRequest): Promise<true | string> {
  const { permissionHandler, approvalHandler, promptForApproval } = options;
  let ask: (() => ApprovalAnswer | Promise<ApprovalAnswer>) | undefined;
  if (permissionHandler) ask = () => permissionHandler(request.toolName, request.input, request);
  else if (approvalHandler) ask = () => approvalHandler.requestApproval(request);
  else if (promptForApproval) ask = () => promptForApproval(request);
  if (!ask) return 'a hook asked for approval but no approval handler is configured';
  const { signal } = request;
  try {
    if (signal.aborted) throw createAbortError();
    const answer = await new Promise<ApprovalAnswer>((resolve, reject) => {
      const onAbort = (): void => reject(createAbortError());
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(ask)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
    return answer === true || answer === 'allow-session' ? true : 'the user declined';
  } catch (error) {
    return signal.aborted ? 'the turn was aborted while waiting for approval' : `the approval handler failed: ${describeError(error)}`;
  }
}
