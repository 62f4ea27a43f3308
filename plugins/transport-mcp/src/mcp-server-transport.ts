import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ICommandInfo, ITransportAdapter } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import type { ApprovalRouter, SessionFactory } from '@tessera/session-hub';
import { McpConnection } from './mcp-connection.js';
import { SessionOwners } from './session-owners.js';
import { serveMcpStdio, type McpStdioOptions, type McpStdioServer } from './serve-mcp-stdio.js';

export interface McpServerTransportOptions {
  /** Opens the sessions MCP clients work in (`composeHost(...).sessions` in the CLI). */
  sessions: SessionFactory;
  /** The host's approval handler: each session's asks are routed to the MCP client that owns it. */
  approvals: ApprovalRouter;
  /** The working directory of every session opened over MCP (absolute). */
  cwd: string;
  /** Server name and version in the MCP handshake (default `tessera`, `0.0.0`). */
  name?: string;
  version?: string;
  /** Shown to the client as the server's `instructions`. */
  instructions?: string;
  /** Model for new sessions (the host's default otherwise). */
  model?: string;
  /** Appended to the system prompt of new sessions. */
  appendSystemPrompt?: string;
  /**
   * The commands to offer as `command_<name>` tools before any session exists (model-invocable
   * ones become tools). Tools for commands a session lists later are added when it opens.
   */
  commands?: () => readonly ICommandInfo[];
  /**
   * Let `sessionId` name a stored session that no connection holds, resuming it (default
   * false: only sessions this MCP session started). Turn it on for a single local client
   * (stdio), never for a server others can reach.
   */
  allowResume?: boolean;
  /** How long a permission prompt (elicitation) waits for the user (default 10 minutes). */
  approvalTimeoutMs?: number;
  /**
   * Most Tessera sessions one MCP connection holds (default 16): one more ends the least
   * recently used idle one (saved first).
   */
  maxSessionsPerConnection?: number;
  /** Streams `start()` serves (default: the process's stdin and stdout). */
  stdio?: McpStdioOptions;
}

/**
 * A Tessera host as an MCP server (transport `mcp`): every MCP client connection gets its own
 * `McpServer` with the tools `prompt`, `abort` and one `command_<name>` per model-invocable
 * command, and its own sessions. `start()` serves one client over stdio; `createMcpHttpHandler`
 * serves many over Streamable HTTP through `connect()`.
 */
export class McpServerTransport implements ITransportAdapter<InteractiveSession> {
  readonly name = 'mcp';
  private readonly owners = new SessionOwners();
  private readonly connections = new Set<McpConnection>();
  private readonly attached: InteractiveSession[] = [];
  private stdio: McpStdioServer | undefined;

  constructor(private readonly options: McpServerTransportOptions) {}

  /** A new connection (its own server and sessions); closing it ends its sessions. */
  createConnection(extra: { turnGate?: () => string | undefined } = {}): McpConnection {
    const options = this.options;
    const connection = new McpConnection({
      ...(extra.turnGate ? { turnGate: extra.turnGate } : {}),
      sessions: options.sessions,
      approvals: options.approvals,
      owners: this.owners,
      cwd: options.cwd,
      serverInfo: { name: options.name ?? 'tessera', version: options.version ?? '0.0.0' },
      allowResume: options.allowResume === true,
      approvalTimeoutMs: options.approvalTimeoutMs ?? 10 * 60_000,
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: options.appendSystemPrompt }),
      ...(options.commands === undefined ? {} : { commands: options.commands }),
      ...(options.maxSessionsPerConnection === undefined ? {} : { maxSessions: options.maxSessionsPerConnection }),
      onClose: () => void this.connections.delete(connection),
    });
    this.connections.add(connection);
    return connection;
  }

  /** A new connection served over `transport`. */
  async connect(transport: Transport, extra: { turnGate?: () => string | undefined } = {}): Promise<McpConnection> {
    const connection = this.createConnection(extra);
    try {
      await connection.connect(transport);
    } catch (error) {
      await connection.close();
      throw error;
    }
    return connection;
  }

  /**
   * Hands a session the host opened to the stdio client: it can continue it by id (and
   * `command_*` calls run in it until the client uses another). Attach before or after `start()`.
   */
  attach(session: InteractiveSession): void {
    if (this.stdio) this.stdio.connection.adopt(session);
    else this.attached.push(session);
  }

  /** Serves one client over stdio (`options.stdio`, else the process's stdin and stdout). */
  async start(): Promise<void> {
    if (this.stdio) return;
    this.stdio = await serveMcpStdio(this, this.options.stdio);
    for (const session of this.attached.splice(0)) this.stdio.connection.adopt(session);
  }

  /** Resolves when the stdio client has gone (stdin ended or the transport closed). */
  whenStdioClosed(): Promise<void> {
    return this.stdio?.closed ?? Promise.resolve();
  }

  /** Closes every connection; their sessions end and are saved. */
  async stop(): Promise<void> {
    await Promise.all([...this.connections].map((connection) => connection.close()));
  }
}

/** The MCP server transport for a host; see `McpServerTransport`. */
export function mcpServerTransport(options: McpServerTransportOptions): McpServerTransport {
  return new McpServerTransport(options);
}
