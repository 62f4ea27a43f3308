import { createKernel, type Kernel, type PluginInput } from '@tessera/kernel';
import { cliPreset, type CliPresetOptions } from '@tessera/preset-cli';
import { httpTransport, type HttpTransport, type HttpTransportOptions, type RunningServer, type SessionHub, type StartServerOptions, type TokenEntry } from '@tessera/plugin-transport-http';
import { mcpHttpMount, mcpTransport, type McpTransportOptions } from '@tessera/plugin-transport-mcp';
import { acpTransportPlugin, type AcpTransportOptions } from '@tessera/plugin-transport-acp';
import { ApprovalRouter, fairRoundsPlugin, startTransports, type StartedTransports } from '@tessera/session-hub';

export interface ServerPresetOptions extends Omit<CliPresetOptions, 'approvalHandler'> {
  /** The router the kernel's `ApprovalHandler` becomes (a new one by default). */
  approvals?: ApprovalRouter;
  /**
   * The transports to offer, each a plugin on `TransportContribution` (the host starts them with
   * `kernel.getAll(TransportContribution)`): `http` (REST, SSE, WebSocket, OpenAPI; `mcp` in its
   * options mounts MCP at `/mcp`), `mcp` (MCP over stdio), `acp` (ACP over stdio). None by default.
   */
  transports?: { http?: HttpTransportOptions; mcp?: McpTransportOptions; acp?: AcpTransportOptions };
}

/**
 * The CLI's plugin set for a server: the same plugins (tools, permissions, hooks, stores,
 * commands, MCP client, bundle plugins…) with every permission ask routed to the client that
 * owns the session, sessions taking turns on the event loop after each model reply
 * (`fairRoundsPlugin`), so a new client's prompt never waits for whole turns, and the transports
 * asked for. Pure: nothing is read, built or started until the kernel is created and the host
 * starts the transports.
 */
export function serverPreset(options: ServerPresetOptions): { plugins: PluginInput[]; approvals: ApprovalRouter } {
  const approvals = options.approvals ?? new ApprovalRouter();
  const { approvals: _given, transports = {}, ...rest } = options;
  const offered = [
    ...(transports.http ? [httpTransport(transports.http, approvals)] : []),
    ...(transports.mcp ? [mcpTransport(transports.mcp, approvals)] : []),
    ...(transports.acp ? [acpTransportPlugin(transports.acp, approvals)] : []),
  ];
  return { plugins: cliPreset({ ...rest, approvalHandler: approvals, plugins: [...(rest.plugins ?? []), fairRoundsPlugin(), ...offered] }), approvals };
}

export { kernelSessionFactory } from '@tessera/session-hub';

export interface TesseraServerOptions extends Omit<ServerPresetOptions, 'transports'>, Omit<StartServerOptions, 'hub' | 'auth' | 'mcpHandler'> {
  tokens: readonly TokenEntry[];
  /** Sessions work only inside these folders (default: `cwd`). */
  allowedRoots?: readonly string[];
  permissionTimeoutMs?: number;
  allowBypassPermissions?: boolean;
  /** Most live sessions one token may hold (`429 too_many_sessions` beyond). */
  maxSessionsPerOwner?: number;
  /** Most turns one token may run at once (`429 too_many_turns` beyond). */
  maxConcurrentTurnsPerOwner?: number;
  /** Serve MCP at `/mcp`. Default true. */
  mcpServer?: boolean;
}

/**
 * The whole server in one call: the kernel from `serverPreset` with the HTTP transport (SSE,
 * WebSocket, OpenAPI, and MCP at `/mcp`), every contributed transport started, and the HTTP one's
 * address and hub returned.
 */
export async function createTesseraServer(options: TesseraServerOptions): Promise<RunningServer & { kernel: Kernel; hub: SessionHub }> {
  const { tokens, allowedRoots, permissionTimeoutMs, allowBypassPermissions, maxSessionsPerOwner, maxConcurrentTurnsPerOwner, mcpServer: mcpOption, port, hostname, websocket, rateLimitPerMinute, corsOrigins, maxBodyBytes, keepAliveMs, abortOnDisconnect, maxBufferedBytes, ...presetOptions } = options;
  const roots = [...(allowedRoots ?? [options.cwd])];
  // As `tessera serve`: on a non-loopback hostname the Host header is the deployment's to vouch for; CORS origins are the MCP Origins too.
  const loopback = hostname === undefined || ['127.0.0.1', 'localhost', '::1'].includes(hostname);
  const http: HttpTransportOptions = {
    tokens,
    allowedRoots: roots,
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
    ...(allowBypassPermissions === undefined ? {} : { allowBypassPermissions }),
    ...(maxSessionsPerOwner === undefined ? {} : { maxSessionsPerOwner }),
    ...(maxConcurrentTurnsPerOwner === undefined ? {} : { maxConcurrentTurnsPerOwner }),
    ...(port === undefined ? {} : { port }),
    ...(hostname === undefined ? {} : { hostname }),
    ...(websocket === undefined ? {} : { websocket }),
    ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }),
    ...(corsOrigins === undefined ? {} : { corsOrigins }),
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    ...(keepAliveMs === undefined ? {} : { keepAliveMs }),
    ...(abortOnDisconnect === undefined ? {} : { abortOnDisconnect }),
    ...(maxBufferedBytes === undefined ? {} : { maxBufferedBytes }),
    ...(mcpOption === false ? {} : { mcp: mcpHttpMount({ cwd: roots[0]!, ...(permissionTimeoutMs === undefined ? {} : { approvalTimeoutMs: permissionTimeoutMs }) }, { ...(loopback ? {} : { allowedHosts: ['*'] }), ...(corsOrigins ? { allowedOrigins: corsOrigins } : {}) }) }),
  };
  const { plugins } = serverPreset({ ...presetOptions, transports: { http } });
  const kernel = await createKernel({ plugins });
  let transports: StartedTransports;
  try {
    transports = await startTransports(kernel);
  } catch (error) {
    await kernel.shutdown();
    throw error;
  }
  const adapter = transports.adapter<HttpTransport>('http');
  const server = adapter?.server;
  if (!adapter || !server) {
    await transports.stop();
    await kernel.shutdown();
    throw new Error('createTesseraServer: the http transport did not start.');
  }
  return {
    url: server.url,
    port: server.port,
    kernel,
    hub: adapter.hub,
    close: async () => {
      await transports.stop();
      await kernel.shutdown();
    },
  };
}
