import type { ApprovalAnswer, ApprovalHandler, ApprovalRequest } from '@tessera/contracts';

/** One ask the terminal shows: the request and how to answer it. */
export interface PendingApproval {
  request: ApprovalRequest;
  answer(answer: ApprovalAnswer): void;
}

/**
 * The `ApprovalHandler` the interactive terminal composes: asks wait in order and are shown
 * one at a time by whoever `attach`es (the app). Before anything is attached, or after it
 * detached, an ask is refused with a reason the model sees. An ask whose signal aborts (Esc,
 * a closed session) is withdrawn from the screen and refused.
 */
export class TerminalApprovals implements ApprovalHandler {
  private readonly queue: PendingApproval[] = [];
  private presenter: ((pending: PendingApproval) => void) | undefined;
  private showing: PendingApproval | undefined;
  private withdraw: ((pending: PendingApproval) => void) | undefined;

  /** Shows asks through `present`; `withdrawn` is told when a shown ask was cancelled. */
  attach(present: (pending: PendingApproval) => void, withdrawn: (pending: PendingApproval) => void): () => void {
    this.presenter = present;
    this.withdraw = withdrawn;
    this.next();
    return () => {
      this.presenter = undefined;
      this.withdraw = undefined;
    };
  }

  /** Asks waiting behind the one on screen. */
  get waiting(): number {
    return this.queue.length;
  }

  requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer> {
    if (!this.presenter) return Promise.resolve({ behavior: 'deny', message: 'No terminal is attached to answer permission prompts.' });
    return new Promise<ApprovalAnswer>((resolve) => {
      let settled = false;
      const pending: PendingApproval = {
        request,
        answer: (answer) => {
          if (settled) return;
          settled = true;
          request.signal.removeEventListener('abort', onAbort);
          if (this.showing === pending) this.showing = undefined;
          resolve(answer);
          this.next();
        },
      };
      const onAbort = (): void => {
        const index = this.queue.indexOf(pending);
        if (index >= 0) this.queue.splice(index, 1);
        if (this.showing === pending) this.withdraw?.(pending);
        pending.answer(false);
      };
      if (request.signal.aborted) {
        resolve(false);
        return;
      }
      request.signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(pending);
      this.next();
    });
  }

  private next(): void {
    if (this.showing || !this.presenter) return;
    const pending = this.queue.shift();
    if (!pending) return;
    this.showing = pending;
    this.presenter(pending);
  }
}
