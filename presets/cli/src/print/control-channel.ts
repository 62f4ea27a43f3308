/**
 * The CLI's side of the stream-json control protocol: requests it sends to the host
 * (`can_use_tool`, `hook_callback`) and their answers, with timeouts and cancellation.
 * Requests the host sends are answered by the caller (`respond` / `respondError`).
 */

export class ControlRequestError extends Error {
  constructor(
    message: string,
    readonly reason: 'error' | 'timeout' | 'cancelled' | 'closed',
  ) {
    super(message);
  }
}

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(error: ControlRequestError): void;
  timer: NodeJS.Timeout | undefined;
}

export class ControlChannel {
  private nextId = 0;
  private readonly pending = new Map<string, Pending>();
  private closed = false;

  constructor(private readonly write: (message: Record<string, unknown>) => void) {}

  /**
   * Sends `request` and resolves with the host's `response` payload. Rejects on an error reply,
   * after `timeoutMs` (the request is then withdrawn with `control_cancel_request`), on `signal`,
   * and when the channel closes (stdin ended).
   */
  request(request: Record<string, unknown>, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new ControlRequestError('the host has closed its input, so it cannot be asked', 'closed'));
    const requestId = `tessera_${++this.nextId}`;
    return new Promise((resolve, reject) => {
      const { signal, timeoutMs } = options;
      const cancel = (error: ControlRequestError): void => {
        if (!this.pending.has(requestId)) return;
        this.settle(requestId);
        this.write({ type: 'control_cancel_request', request_id: requestId });
        reject(error);
      };
      const onAbort = (): void => cancel(new ControlRequestError('the request was cancelled', 'cancelled'));
      const timer =
        timeoutMs === undefined || !Number.isFinite(timeoutMs)
          ? undefined
          : setTimeout(() => cancel(new ControlRequestError(`the host did not answer within ${Math.round(timeoutMs / 1000)} s`, 'timeout')), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(requestId, {
        resolve: (value) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
        timer,
      });
      if (signal?.aborted) return onAbort();
      this.write({ type: 'control_request', request_id: requestId, request });
    });
  }

  /** A `control_response` line from the host. Answers to withdrawn or unknown ids are dropped. */
  handleResponse(message: Record<string, unknown>): void {
    const response = message.response as Record<string, unknown> | undefined;
    const requestId = typeof response?.request_id === 'string' ? response.request_id : undefined;
    if (requestId === undefined) return;
    const pending = this.settle(requestId);
    if (!pending) return;
    if (response!.subtype === 'error') pending.reject(new ControlRequestError(typeof response!.error === 'string' ? response!.error : 'the host answered with an error', 'error'));
    else pending.resolve(isRecord(response!.response) ? response!.response : {});
  }

  /** Stdin ended: nothing pending can be answered any more. */
  close(): void {
    this.closed = true;
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new ControlRequestError('the host closed its input before answering', 'closed'));
  }

  get outstanding(): number {
    return this.pending.size;
  }

  respond(requestId: string, response: Record<string, unknown> = {}): void {
    this.write({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
  }

  respondError(requestId: string, error: string, code?: string): void {
    this.write({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error, ...(code === undefined ? {} : { error_code: code }) } });
  }

  private settle(requestId: string): Pending | undefined {
    const pending = this.pending.get(requestId);
    if (!pending) return undefined;
    this.pending.delete(requestId);
    clearTimeout(pending.timer);
    return pending;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
