import { createKernel, type Kernel, type PluginInput } from '@tessera/kernel';
import { cliPreset, type CliPresetOptions } from '@tessera/preset-cli';
import { SessionHub, startServer, TokenAuth, type RunningServer, type StartServerOptions, type TokenEntry } from '@tessera/plugin-transport-http';
import { createMcpHttpHandler, mcpServerTransport } from '@tessera/plugin-transport-mcp';
import { ApprovalRouter, fairRoundsPlugin, kernelSessionFactory } from '@tessera/session-hub';

export interface ServerPresetOptions extends Omit<CliPresetOptions, 'approvalHandler'> {
  /** The router the kernel's `ApprovalHandler` becomes (a new one by default). */
  approvals?: ApprovalRouter;
}

/**
 * The CLI's plugin set for a server: the same plugins (tools, permissions, hooks, stores,
 * commands, MCP client, bundle plugins…) with every permission ask routed to the client that
 * owns the session, and sessions taking turns on the event loop after each model reply
 * (`fairRoundsPlugin`), so a new client's prompt never waits for whole turns. Pure: nothing is
 * read or built until the kernel is created.
 */
export function serverPreset(options: ServerPresetOptions): { plugins: PluginInput[]; approvals: ApprovalRouter } {
  const approvals = options.approvals ?? new ApprovalRouter();
  const { approvals: _given, ...rest } = options;
  return { plugins: cliPreset({ ...rest, approvalHandler: approvals, plugins: [...(rest.plugins ?? []), fairRoundsPlugin()] }), approvals };
}

export { kernelSessionFactory } from '@tessera/session-hub';

export interface TesseraServerOptions extends ServerPresetOptions, Omit<StartServerOptions, 'hub' | 'auth' | 'mcpHandler'> {
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

/** The whole server in one call: kernel, hub, HTTP (SSE, WebSocket, OpenAPI) and MCP at `/mcp`. */
export async function createTesseraServer(options: TesseraServerOptions): Promise<RunningServer & { kernel: Kernel; hub: SessionHub }> {
  const { tokens, allowedRoots, permissionTimeoutMs, allowBypassPermissions, maxSessionsPerOwner, maxConcurrentTurnsPerOwner, mcpServer: mcpOption, port, hostname, websocket, rateLimitPerMinute, corsOrigins, maxBodyBytes, keepAliveMs, abortOnDisconnect, maxBufferedBytes, ...presetOptions } = options;
  const { plugins, approvals } = serverPreset(presetOptions);
  const kernel = await createKernel({ plugins });
  const sessions = kernelSessionFactory(kernel);
  const roots = [...(allowedRoots ?? [options.cwd])];
  const hub = new SessionHub({
    sessions,
    approvals,
    allowedRoots: roots,
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
    ...(allowBypassPermissions === undefined ? {} : { allowBypassPermissions }),
    ...(maxSessionsPerOwner === undefined ? {} : { maxSessionsPerOwner }),
    ...(maxConcurrentTurnsPerOwner === undefined ? {} : { maxConcurrentTurnsPerOwner }),
  });
  // As `tessera serve`: on a non-loopback hostname the Host header is the deployment's to vouch for; CORS origins are the MCP Origins too.
  const loopback = hostname === undefined || ['127.0.0.1', 'localhost', '::1'].includes(hostname);
  const mcp = mcpOption === false ? undefined : createMcpHttpHandler(mcpServerTransport({ sessions, approvals, cwd: roots[0]! }), {
    ...(loopback ? {} : { allowedHosts: ['*'] }),
    ...(corsOrigins ? { allowedOrigins: corsOrigins } : {}),
  });
  try {
    const server = await startServer({
      hub,
      auth: new TokenAuth(tokens),
      ...(port === undefined ? {} : { port }),
      ...(hostname === undefined ? {} : { hostname }),
      ...(websocket === undefined ? {} : { websocket }),
      ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }),
      ...(corsOrigins === undefined ? {} : { corsOrigins }),
      ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
      ...(keepAliveMs === undefined ? {} : { keepAliveMs }),
      ...(abortOnDisconnect === undefined ? {} : { abortOnDisconnect }),
      ...(maxBufferedBytes === undefined ? {} : { maxBufferedBytes }),
      ...(mcp ? { mcpHandler: (request: Request, owner: string) => mcp(request, owner) } : {}),
    });
    return {
      ...server,
      kernel,
      hub,
      close: async () => {
        await server.close();
        await mcp?.close();
        await kernel.shutdown();
      },
    };
  } catch (error) {
    await mcp?.close();
    await kernel.shutdown();
    throw error;
  }
}
