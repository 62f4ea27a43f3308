import type { Plugin } from '@tessera/kernel';
import { transportPlugin, type ApprovalRouter, type TransportHost } from '@tessera/session-hub';
import { createMcpHttpHandler, type McpHttpHandlerOptions } from './mcp-http-handler.js';
import { McpServerTransport, type McpServerTransportOptions } from './mcp-server-transport.js';

/** An MCP server transport's options, without what the host supplies (its sessions and approval router). */
export type McpTransportOptions = Omit<McpServerTransportOptions, 'sessions' | 'approvals'>;

/** MCP over stdio (`start()` serves one client on the process's stdin and stdout) as a plugin on `TransportContribution`. */
export function mcpTransport(options: McpTransportOptions, approvals?: ApprovalRouter): Plugin {
  return transportPlugin('mcp', (host) => new McpServerTransport({ ...options, sessions: host.sessions, approvals: host.approvals }), approvals);
}

/**
 * MCP over Streamable HTTP for the HTTP transport's `/mcp` (`httpTransport({ mcp: mcpHttpMount(…) })`):
 * an MCP server transport over the same host, behind the HTTP transport's tokens.
 */
export function mcpHttpMount(
  options: McpTransportOptions,
  http: McpHttpHandlerOptions = {},
): (host: TransportHost, hub?: { turnRefusal(owner: string, otherTurns: number): string | undefined }) => { handle(request: Request, owner: string): Promise<Response>; close(): Promise<void>; runningTurns(owner: string): number } {
  return (host, hub) => {
    // With the HTTP transport's hub, MCP turns share its per-token turn limit.
    const gate = http.turnGate ?? (hub ? (owner: string, turns: number) => hub.turnRefusal(owner, turns) : undefined);
    const handler = createMcpHttpHandler(new McpServerTransport({ ...options, sessions: host.sessions, approvals: host.approvals }), { ...http, ...(gate ? { turnGate: gate } : {}) });
    return { handle: (request, owner) => handler(request, owner), close: () => handler.close(), runningTurns: (owner) => handler.runningTurns(owner) };
  };
}
