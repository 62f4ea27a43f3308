import { SseServer, type FakeReply, type RecordedRequest, type SseServerOptions } from './sse-server.js';

/**
 * What the fake Anthropic and OpenAI servers share: a loopback SSE server, the recorded
 * requests, and the fault queue. Subclasses add their API's turn format (`reply`) and error
 * body (`fail`).
 */
export abstract class FakeApiServer {
  protected readonly server: SseServer;

  constructor(options: SseServerOptions) {
    this.server = new SseServer(options);
  }

  /** Starts listening on 127.0.0.1 (a free port); resolves with the server's origin. */
  listen(): Promise<string> {
    return this.server.listen();
  }

  get requests(): RecordedRequest[] {
    return this.server.requests;
  }

  /** Scripted replies streamed to their end so far. */
  get served(): number {
    return this.server.served;
  }

  /** Request bodies only, in order. */
  get bodies(): Array<Record<string, unknown>> {
    return this.server.requests.map((request) => request.body as Record<string, unknown>);
  }

  /** Replies queued and not yet served. */
  get pending(): number {
    return this.server.pending;
  }

  /** Queues a connection reset before the first byte. */
  reset(): this {
    this.server.enqueue({ frames: [], fault: { type: 'reset' } });
    return this;
  }

  /** Queues raw frames verbatim (for protocol edge cases). */
  raw(reply: FakeReply): this {
    this.server.enqueue(reply);
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** Queues an HTTP error reply with the given body. */
  protected enqueueHttpError(status: number, body: unknown, headers: Record<string, string> | undefined): this {
    this.server.enqueue({ frames: [], fault: { type: 'http', status, body, headers } });
    return this;
  }
}
