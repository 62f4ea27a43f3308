import * as acp from '@agentclientprotocol/sdk';
import { describeError } from '@tessera/contracts';
import { AcpAgent, type AcpAgentOptions } from './acp-agent.js';

export interface ServeAcpOptions extends AcpAgentOptions {
  /** Where the client's messages come from (a process's stdin). */
  input: NodeJS.ReadableStream | ReadableStream<Uint8Array>;
  /** Where the agent's messages go (a process's stdout): bytes, or a function taking text. */
  output: NodeJS.WritableStream | WritableStream<Uint8Array> | ((text: string) => void);
}

export interface AcpServer {
  agent: AcpAgent;
  connection: acp.AgentConnection;
  /**
   * Resolves when the client is gone (its input ended, or its output failed) or `close` was
   * called, once the sessions the agent opened are shut down.
   */
  closed: Promise<void>;
  /** Closes the connection and shuts every session the agent opened down (saving it). Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves ACP over a pair of byte streams (newline-delimited JSON-RPC), as an editor runs an
 * agent: `serveAcp({ sessions, approvals, input: process.stdin, output: process.stdout })`.
 * When the input ends the connection closes and the sessions the agent opened are shut down
 * (saved): nobody is left to see their turns or answer their permission asks.
 */
export function serveAcp(options: ServeAcpOptions): AcpServer {
  const { input, output, ...agentOptions } = options;
  const agent = new AcpAgent(agentOptions);
  const log = agentOptions.log ?? (() => undefined);
  const writable = toWritable(output, (error) => {
    log(`acp: the client's output failed (${describeError(error)}); closing the connection.`);
    connection.close(error);
  });
  const connection = agent.connect(acp.ndJsonStream(writable.stream, toReadable(input)));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      connection.close();
      await connection.closed.catch(() => undefined);
      writable.release();
      await agent.close();
    })();
    return closing;
  };
  return { agent, connection, closed: connection.closed.catch(() => undefined).then(close), close };
}

function toReadable(input: NodeJS.ReadableStream | ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  if (input instanceof ReadableStream) return input;
  const encoder = new TextEncoder();
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (error?: unknown): void => {
        if (done) return;
        done = true;
        input.off('data', onData);
        if (error === undefined) controller.close();
        else controller.error(error);
      };
      const onData = (chunk: string | Uint8Array): void => {
        if (!done) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : new Uint8Array(chunk));
      };
      input.on('data', onData);
      input.once('end', () => finish());
      input.once('close', () => finish());
      input.once('error', (error: unknown) => finish(error));
    },
    cancel() {
      done = true;
      input.pause();
    },
  });
}

/** `release` drops what `toWritable` attached to the output (it outlives the connection). */
function toWritable(
  output: NodeJS.WritableStream | WritableStream<Uint8Array> | ((text: string) => void),
  onError: (error: unknown) => void,
): { stream: WritableStream<Uint8Array>; release(): void } {
  const release = (): void => undefined;
  if (output instanceof WritableStream) return { stream: output, release };
  if (typeof output === 'function') {
    const decoder = new TextDecoder();
    return { stream: new WritableStream<Uint8Array>({ write: (chunk) => output(decoder.decode(chunk, { stream: true })) }), release };
  }
  // A failed write (EPIPE: the client stopped reading) also emits 'error' on the stream, which
  // ends the process when nobody listens; the client is gone, so the connection closes instead.
  output.on('error', onError);
  // Waits for each write to be handed to the OS (backpressure), never ends the stream: stdout
  // outlives the connection.
  let lastWrite: Promise<unknown> = Promise.resolve();
  const stream = new WritableStream<Uint8Array>({
    write: (chunk) => {
      const written = new Promise<void>((resolve, reject) => {
        output.write(chunk, (error?: Error | null) => (error ? reject(error) : resolve()));
      });
      lastWrite = written.catch(() => undefined);
      return written;
    },
  });
  return {
    stream,
    // A write's 'error' is emitted on a tick after its callback: the listener stays until then.
    release: () => void lastWrite.then(() => setImmediate(() => output.off('error', onError))),
  };
}
