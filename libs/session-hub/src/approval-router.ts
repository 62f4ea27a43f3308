import type { ApprovalAnswer, ApprovalHandler, ApprovalRequest } from '@tessera/contracts';

/**
 * The `ApprovalHandler` a multi-session host composes: each ask goes to the handler registered
 * for its session (the client that owns it: an HTTP stream, an ACP editor, an MCP caller). With
 * none registered, the ask is refused with a reason the model sees.
 */
export class ApprovalRouter implements ApprovalHandler {
  private readonly routes = new Map<string, ApprovalHandler>();

  constructor(private readonly fallback?: ApprovalHandler) {}

  /** Sends `sessionId`'s asks to `handler` until the returned function is called. */
  route(sessionId: string, handler: ApprovalHandler): () => void {
    this.routes.set(sessionId, handler);
    return () => {
      if (this.routes.get(sessionId) === handler) this.routes.delete(sessionId);
    };
  }

  requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const handler = this.routes.get(request.sessionId) ?? this.fallback;
    if (!handler) return Promise.resolve({ behavior: 'deny', message: 'No client is connected to answer this permission request.' });
    return handler.requestApproval(request);
  }
}
