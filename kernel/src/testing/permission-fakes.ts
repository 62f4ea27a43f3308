import type {
  ApprovalAnswer,
  ApprovalHandler,
  ApprovalRequest,
  PermissionPolicy,
  PermissionVerdict,
} from '@tessera/contracts';

/** Lets every tool call run. The test preset's policy. */
export class AllowAllPermissionPolicy implements PermissionPolicy {
  /** Always `auto`. */
  evaluate(): PermissionVerdict {
    return { decision: 'auto', reason: 'allow-all policy' };
  }
}

/**
 * Answers approval requests from a fixed answer or a function, and records each request.
 * A request whose signal aborts while the answer is pending rejects with the abort reason.
 */
export class RecordingApprovalHandler implements ApprovalHandler {
  readonly requests: ApprovalRequest[] = [];

  constructor(
    private readonly answer: ApprovalAnswer | ((request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>) = true,
  ) {}

  /** Records the request in `requests`, then resolves with the configured answer (default `true`). */
  requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer> {
    this.requests.push(request);
    const { signal } = request;
    if (signal.aborted) return Promise.reject(signal.reason);
    const answer = typeof this.answer === 'function' ? this.answer(request) : this.answer;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve(answer).then(
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
}
