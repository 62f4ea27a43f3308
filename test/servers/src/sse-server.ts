import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One HTTP request the fake server received, body parsed as JSON when it is JSON. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * A fault injected instead of (or into) a scripted reply:
 * - `http`: answer with this status, JSON error body and headers (`retry-after`…);
 * - `reset`: destroy the connection before the first byte;
 * - `cut`: send the first `afterEvents` events, then destroy the connection;
 * - `end`: send the first `afterEvents` events, then end the response cleanly (truncated stream);
 * - `malformed`: send `afterEvents` events, then an event whose data is not JSON, then the rest;
 * - `stall`: send `afterEvents` events, then keep the connection open and silent until the client leaves.
 */
export type FakeFault =
  | { type: 'http'; status: number; body?: unknown; headers?: Record<string, string> }
  | { type: 'reset' }
  | { type: 'cut'; afterEvents: number }
  | { type: 'end'; afterEvents: number }
  | { type: 'malformed'; afterEvents: number }
  | { type: 'stall'; afterEvents: number };

/** One scripted reply: pre-encoded SSE frames, an optional fault and an optional delay between frames. */
export interface FakeReply {
  frames: string[];
  fault?: FakeFault;
  /** Slow stream: wait this long before every frame. */
  delayMs?: number;
  /** Response headers (e.g. `request-id`). */
  headers?: Record<string, string>;
}

export interface SseServerOptions {
  /** Path prefix the API lives under; other paths get 404. */
  path: string;
  /** Builds the body of an HTTP error reply for `http` faults without a body. */
  errorBody(status: number): unknown;
  /** The frame a `malformed` fault injects. */
  malformedFrame: string;
  requestIdHeader: string;
}

/**
 * A loopback HTTP server (127.0.0.1, ephemeral port) that answers each POST with the next
 * scripted reply as a `text/event-stream`, and records every request. Runs out of script →
 * HTTP 500 whose message says so, so a test that under-scripts fails loudly.
 */
export class SseServer {
  readonly requests: RecordedRequest[] = [];
  /** Scripted streams written to their end (a fault's cut or stall never counts). */
  served = 0;
  private readonly queue: FakeReply[] = [];
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private counter = 0;
  private url = '';

  constructor(private readonly options: SseServerOptions) {}

  /** Starts listening; resolves with the base URL (`http://127.0.0.1:PORT`). */
  async listen(): Promise<string> {
    const server = createServer((request, response) => void this.handle(request, response));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  get baseURL(): string {
    if (this.url === '') throw new Error('Fake server is not listening: await listen() first.');
    return this.url;
  }

  /** Queues replies, served in order, one per request. */
  enqueue(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  get pending(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Recorded verbatim: a test asserting on it will show what was sent.
    }
    const path = request.url ?? '/';
    this.requests.push({ method: request.method ?? 'GET', path, headers: { ...request.headers }, body });
    const requestId = `req_fake_${++this.counter}`;

    if (!path.startsWith(this.options.path)) {
      this.json(response, 404, this.options.errorBody(404), { [this.options.requestIdHeader]: requestId });
      return;
    }
    const reply = this.queue.shift();
    if (reply === undefined) {
      const error = this.options.errorBody(500) as { error?: { message?: string } };
      if (error.error) error.error.message = 'Fake server: no scripted reply left for this request.';
      this.json(response, 500, error, { [this.options.requestIdHeader]: requestId });
      return;
    }
    await this.serve(reply, response, requestId);
  }

  private async serve(reply: FakeReply, response: ServerResponse, requestId: string): Promise<void> {
    const { fault } = reply;
    const idHeader = { [this.options.requestIdHeader]: requestId };
    if (fault?.type === 'reset') {
      response.socket?.destroy();
      return;
    }
    if (fault?.type === 'http') {
      this.json(response, fault.status, fault.body ?? this.options.errorBody(fault.status), {
        ...idHeader,
        ...fault.headers,
      });
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...idHeader,
      ...reply.headers,
    });
    const frames = this.framesFor(reply);
    const limit = fault !== undefined && fault.type !== 'malformed' ? fault.afterEvents : frames.length;
    const sent = frames.slice(0, limit);
    if (reply.delayMs === undefined || reply.delayMs <= 0) {
      // One write: the client sees the stream as fast as it can parse it.
      if (sent.length > 0) response.write(sent.join(''));
    } else {
      for (const frame of sent) {
        await sleep(reply.delayMs);
        if (response.destroyed) return;
        response.write(frame);
      }
    }
    if (fault?.type === 'cut') {
      // The connection drops a moment after the last event, as a real cut would, so the client
      // has read those events when the error comes. Dropped in the same instant, on Node 24.22
      // the providers saw the error before the events (so "cut after output" looked like "cut
      // before output" and was retried). Plain fetch and http clients cut the same way deliver the
      // data first on Node 20 and 24 alike: where in the client stack it differs is not pinned down.
      await sleep(CUT_DELAY_MS);
      if (response.destroyed) return;
      response.socket?.end(() => response.socket?.destroy());
      return;
    }
    if (fault?.type === 'stall') return; // silent until the client disconnects
    response.end();
    this.served += 1;
  }

  private framesFor(reply: FakeReply): string[] {
    if (reply.fault?.type !== 'malformed') return reply.frames;
    const frames = [...reply.frames];
    frames.splice(reply.fault.afterEvents, 0, this.options.malformedFrame);
    return frames;
  }

  private json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  }
}

/** How long after its last event a `cut` stream drops the connection. */
const CUT_DELAY_MS = 100;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
