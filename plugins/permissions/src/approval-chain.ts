import { createAbortError, describeError, type ApprovalAnswer, type ApprovalHandler, type ApprovalRequest } from '@tessera/contracts';

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

/** Resolves when the signal aborts first, so a forgotten prompt never holds a turn. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(createAbortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(createAbortError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The approval strategy chain: the first configured of `permissionHandler`, the bound
 * `ApprovalHandler`, `promptForApproval` answers; with none configured the call is
 * denied. Never throws: an abort or a failing handler is a refusal with a reason.
 */
export async function requestApproval(options: ApprovalChainOptions, request: ApprovalRequest): Promise<ApprovalOutcome> {
  const { permissionHandler, approvalHandler, promptForApproval } = options;
  const via = permissionHandler ? 'permissionHandler' : approvalHandler ? 'approvalHandler' : promptForApproval ? 'promptForApproval' : undefined;
  if (!via) return { answer: false, via: 'none', reason: 'no approval handler is configured, so calls that need approval are denied' };
  try {
    const pending = Promise.resolve().then(() =>
      via === 'permissionHandler'
        ? permissionHandler!(request.toolName, request.input, request)
        : via === 'approvalHandler'
          ? approvalHandler!.requestApproval(request)
          : promptForApproval!(request),
    );
    const answer = await raceAbort(pending, request.signal);
    return { answer: answer === 'allow-session' ? 'allow-session' : answer === true, via };
  } catch (error) {
    if (request.signal.aborted) return { answer: false, via: 'aborted', reason: 'the turn was aborted while waiting for approval' };
    return { answer: false, via: 'error', reason: `the approval handler failed: ${describeError(error)}` };
  }
}
