import * as acp from '@agentclientprotocol/sdk';
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
  /** Resolves when the client is gone (its input ended) or `close` was called. */
  closed: Promise<void>;
  /** Closes the connection and shuts every session the agent opened down (saving it). Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves ACP over a pair of byte streams (newline-delimited JSON-RPC), as an editor runs an
 * agent: `serveAcp({ sessions, approvals, input: process.stdin, output: process.stdout })`.
 * When the input ends the connection closes; call `close()` to end the sessions.
 */
export function serveAcp(options: ServeAcpOptions): AcpServer {
  const { input, output, ...agentOptions } = options;
  const agent = new AcpAgent(agentOptions);
  const connection = agent.connect(acp.ndJsonStream(toWritable(output), toReadable(input)));
  let closing: Promise<void> | undefined;
  return {
    agent,
    connection,
    closed: connection.closed.catch(() => undefined),
    close() {
      closing ??= (async () => {
        connection.close();
        await connection.closed.catch(() => undefined);
        await agent.close();
      })();
      return closing;
    },
  };
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

function toWritable(output: NodeJS.WritableStream | WritableStream<Uint8Array> | ((text: string) => void)): WritableStream<Uint8Array> {
  if (output instanceof WritableStream) return output;
  if (typeof output === 'function') {
    const decoder = new TextDecoder();
    return new WritableStream<Uint8Array>({ write: (chunk) => output(decoder.decode(chunk, { stream: true })) });
  }
  // Waits for each write to be handed to the OS (backpressure), never ends the stream: stdout
  // outlives the connection.
  return new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) => {
        output.write(chunk, (error?: Error | null) => (error ? reject(error) : resolve()));
      }),
  });
}
