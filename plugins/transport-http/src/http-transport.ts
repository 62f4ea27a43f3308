import type { ITransportAdapter } from '@tessera/contracts';
import type { InteractiveSession, Plugin } from '@tessera/kernel';
import { SessionCluster, transportPlugin, type ApprovalRouter, type TransportHost } from '@tessera/session-hub';
import { TokenAuth, type TokenEntry } from './auth.js';
import { startServer, type RunningServer, type StartServerOptions } from './serve.js';
import { SessionHub, type SessionHubOptions } from './session-hub.js';

/** Something mounted at `/mcp` beside the HTTP API (`createMcpHttpHandler` over an MCP server transport). */
export interface HttpTransportMount {
  handle(request: Request, owner: string): Promise<Response>;
  close(): Promise<void>;
  /** Turns `owner` runs through the mount now: they count against the hub's per-token turn limit. */
  runningTurns?(owner: string): number;
}

export interface HttpTransportOptions extends Omit<StartServerOptions, 'hub' | 'auth' | 'mcpHandler'>, Omit<SessionHubOptions, 'sessions' | 'approvals'> {
  /** The bearer tokens (hashed) and the owners they name. */
  tokens: readonly TokenEntry[];
  /** Built from the same host (and this transport's hub, for the shared turn limit) when the transport starts, and served at `/mcp` behind the same tokens. */
  mcp?: (host: TransportHost, hub: SessionHub) => HttpTransportMount;
  /** Owner of sessions the host offers with `attach()` (default: the first token's id). */
  attachOwner?: string;
}

/**
 * The HTTP API (REST, the AI SDK UI message stream over SSE, WebSocket, OpenAPI, optionally MCP at
 * `/mcp`) as an `ITransportAdapter` named `http`: a `SessionHub` over the host's sessions,
 * listening from `start()` until `stop()`. `attach(session)` offers a session the host opened
 * to the `attachOwner`'s clients.
 */
export class HttpTransport implements ITransportAdapter<InteractiveSession> {
  readonly name = 'http';
  readonly hub: SessionHub;
  #server: RunningServer | undefined;
  #mount: HttpTransportMount | undefined;

  constructor(
    private readonly options: HttpTransportOptions,
    private readonly host: TransportHost,
  ) {
    // The options are the hub's and the server's together; each reads its own fields.
    // A kernel composed with a replica store (SessionCluster bound) shares its sessions with the other replicas.
    const cluster = options.cluster ?? host.kernel.getOptional(SessionCluster);
    this.hub = new SessionHub({ ...options, ...(cluster ? { cluster } : {}), sessions: host.sessions, approvals: host.approvals, externalTurns: (owner) => this.#mount?.runningTurns?.(owner) ?? 0 });
  }

  /** Where it listens (after `start()`). */
  get server(): RunningServer | undefined {
    return this.#server;
  }

  attach(session: InteractiveSession): void {
    const owner = this.options.attachOwner ?? this.options.tokens[0]?.id;
    if (owner === undefined) throw new Error('The http transport has no token, so no client could see an attached session; give tokens or attachOwner.');
    this.hub.offer(owner, session);
  }

  async start(): Promise<void> {
    if (this.#server) return;
    const { tokens, mcp, attachOwner: _owner, ...serverOptions } = this.options;
    this.#mount = mcp?.(this.host, this.hub);
    const mount = this.#mount;
    try {
      this.#server = await startServer({
        ...serverOptions,
        hub: this.hub,
        auth: new TokenAuth(tokens),
        ...(mount ? { mcpHandler: (request: Request, owner: string) => mount.handle(request, owner) } : {}),
      });
    } catch (error) {
      await mount?.close();
      this.#mount = undefined;
      throw error;
    }
  }

  /** Stops listening, ends the hub's sessions (saved) and whatever is mounted at `/mcp`. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    await server?.close();
    await this.#mount?.close();
    this.#mount = undefined;
  }
}

/** The HTTP transport as a plugin on `TransportContribution` (see `HttpTransport`); `approvals` as in `transportPlugin`. */
export function httpTransport(options: HttpTransportOptions, approvals?: ApprovalRouter): Plugin {
  return transportPlugin('http', (host) => new HttpTransport(options, host), approvals);
}
