import type { AssistantMessage, Provider, ProviderRequest } from '@tessera/contracts';

/**
 * A provider driven step by step from a test: each `stream()` call waits until the test
 * sends deltas and finishes (or aborts) it.
 */
export class ManualProvider implements Provider {
  readonly name = 'manual';
  readonly calls: Array<{
    request: ProviderRequest;
    /** Streams `text` to the caller (`request.onTextDelta`) and adds it to the reply. */
    delta(text: string): void;
    /** Resolves the call with the text streamed so far; fields of `message` override the defaults. */
    finish(message?: Partial<AssistantMessage>): void;
    /** Rejects the call with `error`. */
    fail(error: unknown): void;
  }> = [];
  private waiters: Array<() => void> = [];

  constructor(private readonly onAbort: 'resolve' | 'reject' = 'resolve') {}

  /** Records the call in `calls` and waits for the test to finish, fail or abort it. */
  stream(request: ProviderRequest): Promise<AssistantMessage> {
    return new Promise((resolve, reject) => {
      let text = '';
      const abort = (): void => {
        if (this.onAbort === 'reject') reject(new DOMException('Aborted', 'AbortError'));
        else
          resolve({
            role: 'assistant',
            content: text ? [{ type: 'text', text }] : [],
            state: 'interrupted',
            stopReason: 'aborted',
          });
      };
      request.signal.addEventListener('abort', abort, { once: true });
      this.calls.push({
        request,
        delta: (chunk) => {
          text += chunk;
          request.onTextDelta?.(chunk);
        },
        finish: (message = {}) =>
          resolve({ role: 'assistant', content: text ? [{ type: 'text', text }] : [], state: 'complete', stopReason: 'end_turn', ...message }),
        fail: reject,
      });
      for (const waiter of this.waiters.splice(0)) waiter();
    });
  }

  /** Resolves once the provider has received `count` calls. */
  async waitForCall(count = 1): Promise<(typeof this.calls)[number]> {
    while (this.calls.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.calls[count - 1]!;
  }
}
