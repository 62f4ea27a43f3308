import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { checkHostAndOrigin, type HostValidationOptions } from './host-validation.js';
import type { McpConnection } from './mcp-connection.js';
import type { McpServerTransport } from './mcp-server-transport.js';

export interface McpHttpHandlerOptions extends HostValidationOptions {
  /** Most MCP sessions open at once (default 64); an `initialize` beyond it is answered 503. */
  maxSessions?: number;
  /**
   * Most MCP sessions one owner (a bearer token) holds at once (default 8), so one client cannot
   * take every slot; an `initialize` beyond it is answered 429. Not applied when the host names no owner.
   */
  maxSessionsPerOwner?: number;
  /**
   * Asked before an owner's MCP session starts a turn, with the turns that owner runs over MCP now:
   * a message refuses it. The host passes its per-token turn limit here, so MCP turns and HTTP
   * turns share it (`tessera serve` and `createTesseraServer` do).
   */
  turnGate?: (owner: string, mcpTurns: number) => string | undefined;
  /** Answer with one JSON body instead of an SSE stream (no progress notifications then). */
  enableJsonResponse?: boolean;
}

/**
 * `(request, owner?) => response` for a Web-standard server (Hono: `app.all('/mcp', (c) => handler(c.req.raw, owner))`).
 * `owner` is whoever the host authenticated (a bearer token's id): an MCP session belongs to the
 * owner that opened it, and a request of another owner is answered as if the session did not exist.
 */
export interface McpHttpHandler {
  /** `owner` that is not a string (an adapter's own second argument, such as @hono/node-server's bindings) names nobody. */
  (request: Request, owner?: string | object): Promise<Response>;
  /** Ends every MCP session (their Tessera sessions are saved). */
  close(): Promise<void>;
  /** MCP sessions open now. */
  readonly sessionCount: number;
  /** Turns `owner`'s MCP sessions run now. */
  runningTurns(owner: string): number;
}

interface HttpSession {
  transport: WebStandardStreamableHTTPServerTransport;
  connection: McpConnection;
  /** Who opened it (`undefined` when the host authenticates nobody). */
  owner: string | undefined;
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * Streamable HTTP for an MCP server transport, stateful: an `initialize` POST without an
 * `mcp-session-id` header starts an MCP session (its own connection, server and Tessera
 * sessions); later requests carry the id the response gave; `DELETE` with it ends the session.
 * Host and Origin are checked first (localhost names by default — DNS-rebinding protection).
 */
export function createMcpHttpHandler(mcp: McpServerTransport, options: McpHttpHandlerOptions = {}): McpHttpHandler {
  const sessions = new Map<string, HttpSession>();
  const maxSessions = options.maxSessions ?? 64;
  let pending = 0;

  const end = (id: string): void => {
    const session = sessions.get(id);
    sessions.delete(id);
    void session?.connection.close();
  };

  const maxPerOwner = options.maxSessionsPerOwner ?? 8;
  /** Sessions being started, per owner (counted with the open ones). */
  const pendingByOwner = new Map<string, number>();
  const heldBy = (owner: string): number => {
    let held = pendingByOwner.get(owner) ?? 0;
    for (const session of sessions.values()) if (session.owner === owner) held += 1;
    return held;
  };

  const start = async (request: Request, owner: string | undefined): Promise<Response> => {
    if (sessions.size + pending >= maxSessions) return jsonRpcError(503, -32000, `Too many MCP sessions are open (${maxSessions}); end one (DELETE) and try again.`);
    if (owner !== undefined && heldBy(owner) >= maxPerOwner) {
      return jsonRpcError(429, -32000, `This token holds ${maxPerOwner} MCP sessions, the most allowed; end one (DELETE with its mcp-session-id) and try again.`);
    }
    pending += 1;
    if (owner !== undefined) pendingByOwner.set(owner, (pendingByOwner.get(owner) ?? 0) + 1);
    let connection: McpConnection | undefined;
    try {
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        ...(options.enableJsonResponse === true ? { enableJsonResponse: true } : {}),
        onsessioninitialized: (id) => void sessions.set(id, { transport, connection: connection!, owner }),
        onsessionclosed: end,
      });
      // Closed any other way (the MCP transport stopped): forget the session. Kept by `connect`.
      transport.onclose = () => {
        if (transport.sessionId !== undefined && sessions.get(transport.sessionId)?.transport === transport) sessions.delete(transport.sessionId);
      };
      const gate = options.turnGate;
      connection = await mcp.connect(transport, gate && owner !== undefined ? { turnGate: () => gate(owner, runningTurns(owner)) } : {});
      const response = await transport.handleRequest(request);
      // Not an initialize request (the transport refused it): nothing to keep.
      if (transport.sessionId === undefined) await connection.close();
      return response;
    } catch (error) {
      await connection?.close();
      throw error;
    } finally {
      pending -= 1;
      if (owner !== undefined) {
        const left = (pendingByOwner.get(owner) ?? 1) - 1;
        if (left > 0) pendingByOwner.set(owner, left);
        else pendingByOwner.delete(owner);
      }
    }
  };

  function runningTurns(owner: string): number {
    let turns = 0;
    for (const session of sessions.values()) if (session.owner === owner) turns += session.connection.runningTurns;
    return turns;
  }

  const handler = async (request: Request, ownerArgument?: string | object): Promise<Response> => {
    // Only a string names an owner: a Node adapter may pass its own second argument (@hono/node-server's env).
    const owner = typeof ownerArgument === 'string' ? ownerArgument : undefined;
    const refused = checkHostAndOrigin(request, options);
    if (refused !== undefined) return jsonRpcError(403, -32000, refused);
    const id = request.headers.get('mcp-session-id');
    if (id === null) {
      if (request.method !== 'POST') return jsonRpcError(400, -32000, 'Bad Request: no mcp-session-id header; start a session with an initialize POST.');
      return start(request, owner);
    }
    const session = sessions.get(id);
    // Another owner's session is not found: its existence is not revealed.
    if (!session || session.owner !== owner) return jsonRpcError(404, -32001, 'Session not found; it ended or never existed. Start a new one with an initialize POST.');
    return session.transport.handleRequest(request);
  };

  return Object.defineProperties(handler, {
    close: {
      value: async (): Promise<void> => {
        const open = [...sessions.values()];
        sessions.clear();
        await Promise.all(open.map(async ({ transport, connection }) => {
          await connection.close();
          await transport.close().catch(() => undefined);
        }));
      },
    },
    sessionCount: { get: () => sessions.size },
    runningTurns: { value: runningTurns },
  }) as McpHttpHandler;
}
