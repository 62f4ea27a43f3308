import { isApproved, type ApprovalAnswer, type ApprovalHandler, type ApprovalRequest } from '@tessera/contracts';
import type { TBackgroundTaskRunnerEvent } from '@tessera/plugin-background';

type TEmit = (event: TBackgroundTaskRunnerEvent) => void;

/**
 * Routes approval requests of subagent child sessions through their job, so the task
 * enters `waiting_permission` while the question is open and returns to `running` when it is
 * answered. The permissions plugin asks the bound `ApprovalHandler`; the subagents plugin binds
 * `wrap(original)` there, and the in-process runner registers each child session id for the
 * lifetime of its job. Requests from other sessions pass straight through to the original.
 */
export class SubagentApprovalRouter {
  private readonly jobs = new Map<string, TEmit>();
  private sequence = 0;

  /** Marks `sessionId` as a subagent child whose approvals report on its job. Returns the undo. */
  register(sessionId: string, emit: TEmit): () => void {
    this.jobs.set(sessionId, emit);
    return () => {
      if (this.jobs.get(sessionId) === emit) this.jobs.delete(sessionId);
    };
  }

  isChildSession(sessionId: string): boolean {
    return this.jobs.has(sessionId);
  }

  /**
   * A handler that forwards to `inner` (the parent's approver). With no inner handler a child
   * request is refused, exactly as the approval chain refuses when nothing is configured.
   */
  wrap(inner: ApprovalHandler | undefined): ApprovalHandler {
    return {
      requestApproval: (request) => this.requestApproval(inner, request),
    };
  }

  private async requestApproval(inner: ApprovalHandler | undefined, request: ApprovalRequest): Promise<ApprovalAnswer> {
    const emit = this.jobs.get(request.sessionId);
    if (!emit) {
      if (!inner) return false;
      return inner.requestApproval(request);
    }
    this.sequence += 1;
    const requestId = `${request.toolCallId || 'approval'}#${this.sequence}`;
    const description = request.suggestedRule ?? request.toolName;
    // emit never throws (the manager reports impossible edges itself); a late event is dropped.
    emit({ type: 'permission_request', requestId, toolName: request.toolName, description });
    let answer: ApprovalAnswer = false;
    try {
      answer = inner ? await inner.requestApproval(request) : false;
      return answer;
    } finally {
      // Also on a throwing or aborted approver: the task must never stay in waiting_permission.
      emit({ type: 'permission_decision', requestId, allowed: isApproved(answer) });
    }
  }
}
