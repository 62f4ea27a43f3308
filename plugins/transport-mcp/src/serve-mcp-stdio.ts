import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpConnection } from './mcp-connection.js';
import type { McpServerTransport } from './mcp-server-transport.js';

export interface McpStdioOptions {
  /** Where JSON-RPC messages come from (default `process.stdin`). */
  stdin?: Readable;
  /** Where they go (default `process.stdout`): nothing else may write to it. */
  stdout?: Writable;
}

export interface McpStdioServer {
  connection: McpConnection;
  /** Resolves once the client has gone: stdin ended or closed, or the transport closed. The connection is closed then. */
  closed: Promise<void>;
}

/**
 * Serves one MCP client over stdio: one connection, closed (its sessions ended and saved) when
 * stdin ends — the way an MCP client stops a stdio server.
 */
export async function serveMcpStdio(transport: McpServerTransport, options: McpStdioOptions = {}): Promise<McpStdioServer> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const connection = await transport.connect(new StdioServerTransport(stdin, stdout));
  const closed = new Promise<void>((resolve) => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      stdin.off('end', finish);
      stdin.off('close', finish);
      void connection.close().then(resolve, resolve);
    };
    stdin.once('end', finish);
    stdin.once('close', finish);
    const previous = connection.server.server.onclose;
    connection.server.server.onclose = () => {
      previous?.();
      finish();
    };
  });
  return { connection, closed };
}
