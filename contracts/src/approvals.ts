import { createAbortError, describeError } from './errors.js';
import type { ApprovalAnswer, ApprovalHandler, ApprovalRequest } from './permissions.js';
import { createToken } from './token.js';

/** One way to ask: a name for messages and the function that asks. */
export interface ApprovalAsker {
  /** Who answered, in outcomes: `permissionHandler`, `approvalHandler`, `promptForApproval`, a plugin's own name… */
  readonly via: string;
  /** Asks for an answer; may throw or reject, which the chain turns into a refusal. */
  ask(request: ApprovalRequest): ApprovalAnswer | Promise<ApprovalAnswer>;
}

/** The answer and who gave it; a refusal the chain made itself (no asker, abort, failure) carries a reason. */
export type ApprovalOutcome =
  | { answer: ApprovalAnswer; via: string }
  | { answer: false; via: 'none' | 'aborted' | 'error'; reason: string };

/**
 * The one approval chain every plugin uses when a tool call needs a person's yes: the first
 * asker present answers (a plugin's own option, then the bound `ApprovalHandler`); with none,
 * the call is refused. Never throws: an abort while waiting or a failing asker is a refusal
 * with a reason, and a forgotten prompt never holds the turn past the request's signal.
 */
export interface Approvals {
  /** Asks the first present asker of `askers`, else the bound handler, and resolves with the outcome. */
  request(request: ApprovalRequest, askers?: readonly (ApprovalAsker | undefined)[]): Promise<ApprovalOutcome>;
}

/**
 * The approval chain plugins ask through. The kernel binds an {@link ApprovalChain} over the bound
 * `ApprovalHandler` unless a plugin binds its own; resolved afresh per session.
 */
export const Approvals = createToken<Approvals>('Approvals');

/** Resolves when the signal aborts first. */
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

/** Runs the chain once: `askers` first (those present), then `handler`. */
export async function runApprovalChain(
  request: ApprovalRequest,
  askers: readonly (ApprovalAsker | undefined)[],
  handler?: ApprovalHandler,
): Promise<ApprovalOutcome> {
  const asker =
    askers.find((candidate): candidate is ApprovalAsker => candidate !== undefined) ??
    (handler ? { via: 'approvalHandler', ask: (asked: ApprovalRequest) => handler.requestApproval(asked) } : undefined);
  if (!asker) return { answer: false, via: 'none', reason: 'no approval handler is configured, so calls that need approval are denied' };
  try {
    const answer = await raceAbort(Promise.resolve().then(() => asker.ask(request)), request.signal);
    return { answer: normalizeAnswer(answer), via: asker.via };
  } catch (error) {
    if (request.signal.aborted) return { answer: false, via: 'aborted', reason: 'the turn was aborted while waiting for approval' };
    return { answer: false, via: 'error', reason: `the approval handler failed: ${describeError(error)}` };
  }
}

/** Anything but the known answer shapes is a refusal. */
function normalizeAnswer(answer: unknown): ApprovalAnswer {
  if (answer === true || answer === 'allow-session') return answer;
  if (typeof answer === 'object' && answer !== null) {
    const verdict = answer as { behavior?: unknown; message?: unknown; updatedInput?: unknown; remember?: unknown; interrupt?: unknown };
    if (verdict.behavior === 'allow') {
      return { behavior: 'allow', ...(verdict.updatedInput === undefined ? {} : { updatedInput: verdict.updatedInput }), ...(verdict.remember === true ? { remember: true } : {}) };
    }
    if (verdict.behavior === 'deny') {
      return { behavior: 'deny', ...(typeof verdict.message === 'string' && verdict.message !== '' ? { message: verdict.message } : {}), ...(verdict.interrupt === true ? { interrupt: true } : {}) };
    }
  }
  return false;
}

/** The default `Approvals`: the chain over the `ApprovalHandler` it was built with (if any). */
export class ApprovalChain implements Approvals {
  constructor(private readonly handler?: ApprovalHandler) {}

  /** Runs the chain once with `askers` first, then this chain's handler. */
  request(request: ApprovalRequest, askers: readonly (ApprovalAsker | undefined)[] = []): Promise<ApprovalOutcome> {
    return runApprovalChain(request, askers, this.handler);
  }
}
