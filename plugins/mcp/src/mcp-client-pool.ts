import { dirname } from 'node:path';
import type { DiagnosticReport, DiagnosticsReporter, McpServerDeclaration, McpServerSource, Tool, ToolSource } from '@tessera/contracts';
import { McpError } from './mcp-errors.js';
import type { McpConnection, McpConnectionSettings } from './mcp-connection.js';
import { createMcpTool } from './mcp-tool.js';
import type { McpAuthorize, McpLog, McpProjectApproval, McpProjectApprovalSettings, McpPromptInfo, McpServerDeclared, McpServerState, McpServerStatus } from './mcp-types.js';
import { gatherDeclarations, projectApproval } from './resolve-servers.js';
import { assignServerPrefixes, assignToolNames, serverKey } from './tool-names.js';

export interface McpClientPoolOptions {
  /** Where servers are declared: `.mcp.json`, settings, `--mcp-config`, bundle plugins… */
  sources: readonly McpServerSource[];
  /** Which `.mcp.json` servers may start. Default: none until approved (`approveProjectServer`). */
  approval?: McpProjectApprovalSettings | McpProjectApproval;
  /** For `${VAR}` expansion and the `MCP_*` variables. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** How long the first tools listing of a session waits for servers still connecting. Default `MCP_TIMEOUT` or 5,000 ms. */
  startupTimeoutMs?: number;
  /** One connection attempt (a server's start-up) may take this long before it counts as failed. Default `MCP_TIMEOUT` or 30,000 ms. */
  connectTimeoutMs?: number;
  /** A tool call is cancelled after this long. Default `MCP_TOOL_TIMEOUT` or 600,000 ms. */
  toolTimeoutMs?: number;
  restart?: Partial<McpConnectionSettings['restart']>;
  /** OAuth for remote servers; `false` turns it off. */
  oauth?: false | { directory: string; redirectUrl?: string; authorize?: McpAuthorize };
  clientInfo?: { name: string; version: string };
  /** Where server stderr and failures go. Default: warnings and errors to `diagnostics`, the rest dropped. */
  log?: McpLog;
  diagnostics?: DiagnosticsReporter;
  /** How long `headersHelper` may run. Default 10,000 ms. */
  headersHelperTimeoutMs?: number;
  /**
   * How long the servers of a session that ended (`release`) stay for it. A host that ends a copy
   * of a session and opens the same id again (a server replica reopening a copy another replica
   * saved over) keeps its servers instead of starting them again. Default 30,000 ms; 0 releases
   * at once.
   */
  releaseGraceMs?: number;
  fetch?: typeof fetch;
}

interface SessionRef {
  readonly sessionId: string;
  readonly cwd: string;
}

/** One server as one session sees it: a connection, or a reason it has none. */
interface ServerEntry {
  declaration: McpServerDeclaration;
  prefix: string;
  connection?: McpConnection;
  status?: Extract<McpServerStatus, 'needs approval' | 'disabled'>;
}

interface SessionView {
  session: SessionRef;
  entries: ServerEntry[];
  waited: boolean;
}

const positive = (text: string | undefined): number | undefined => {
  const value = text === undefined ? Number.NaN : Number(text);
  return Number.isFinite(value) && value > 0 ? value : undefined;
};

/**
 * The MCP client: turns server declarations into live connections, shares them between sessions
 * that declare the same server, and offers their tools through a `ToolSource`, their prompts as
 * commands and their state to `/mcp`. Start-up is lazy and parallel: the first tools listing of
 * a session waits at most `startupTimeoutMs`; servers that come up later join before the next
 * model call.
 */
export class McpClientPool {
  private readonly connections = new Map<string, McpConnection>();
  private readonly views = new Map<string, SessionView>();
  /** Views being (re)built, per session. The old view stays visible to `/mcp` until its rebuild is ready. */
  private readonly building = new Map<string, Promise<SessionView>>();
  private readonly listeners = new Set<() => void>();
  /** `.mcp.json` servers approved at run time, as `<project folder>\0<name>`: an approval holds for that project only. */
  private readonly approved = new Set<string>();
  private readonly reported = new Set<string>();
  private readonly settings: Omit<McpConnectionSettings, 'cwd'>;
  private readonly startupTimeoutMs: number;
  private readonly toolTimeoutMs: number;
  private closed = false;
  private readonly unsubscribes: Array<() => void> = [];

  constructor(private readonly options: McpClientPoolOptions) {
    const env = options.env ?? process.env;
    this.startupTimeoutMs = options.startupTimeoutMs ?? positive(env.MCP_TIMEOUT) ?? 5_000;
    this.toolTimeoutMs = options.toolTimeoutMs ?? positive(env.MCP_TOOL_TIMEOUT) ?? 600_000;
    const log: McpLog = options.log ?? ((entry) => {
      if (entry.severity !== 'info') options.diagnostics?.report({ severity: entry.severity, code: entry.code, message: entry.message, source: 'mcp', ...(entry.file ? { file: entry.file } : {}) });
    });
    this.settings = {
      env,
      clientInfo: options.clientInfo ?? { name: 'tessera', version: '0.1.0' },
      // MCP_TIMEOUT is the server start-up timeout in Claude Code, so it bounds each attempt too.
      connectTimeoutMs: options.connectTimeoutMs ?? positive(env.MCP_TIMEOUT) ?? 30_000,
      restart: { initialDelayMs: 500, maxDelayMs: 30_000, maxAttempts: 6, ...options.restart },
      oauth: options.oauth === false || options.oauth === undefined ? undefined : { redirectUrl: 'http://127.0.0.1:33418/callback', ...options.oauth },
      helperTimeoutMs: options.headersHelperTimeoutMs ?? 10_000,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      log: (entry) => {
        try {
          log(entry);
        } catch {
          // A logger that throws must not break a connection.
        }
      },
      onChange: () => this.emit(),
    };
    for (const source of options.sources) {
      const unsubscribe = source.onChange?.(() => this.rebuildViews());
      if (unsubscribe) this.unsubscribes.push(unsubscribe);
    }
  }

  /** The `ToolSource` sessions read MCP tools from. */
  readonly toolSource: ToolSource = {
    name: 'mcp',
    tools: (session) => this.tools(session),
    onChange: (listener) => this.onChange(listener),
  };

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Declares and starts this session's servers without waiting for them (a host may call it as
   * soon as it knows the working directory, before the first prompt).
   */
  async connect(session: SessionRef): Promise<void> {
    await this.view(session);
  }

  /** The MCP tools for a session; waits (boundedly) for servers still connecting the first time. */
  async tools(session: SessionRef): Promise<Tool[]> {
    const view = await this.view(session);
    if (!view.waited) {
      view.waited = true;
      await this.waitForStart(view);
    }
    const tools: Tool[] = [];
    const taken = new Set<string>();
    const entries = [...view.entries].sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
    for (const entry of entries) {
      const connection = entry.connection;
      if (!connection || connection.tools.length === 0) continue;
      const names = assignToolNames(entry.prefix, connection.tools.map((tool) => tool.name), taken);
      for (const info of connection.tools) {
        const name = names.get(info.name)!;
        taken.add(name);
        tools.push(createMcpTool(connection, info, name, () => this.toolTimeoutMs));
      }
    }
    return tools;
  }

  /** Every server any session declared, with its state (the `/mcp` listing). */
  servers(): McpServerState[] {
    const states = new Map<string, McpServerState>();
    for (const view of this.views.values()) {
      for (const entry of view.entries) {
        // Two projects' `.mcp.json` may use one name for different servers: each is its own line.
        const key = `${entry.prefix}|${entry.declaration.scope}|${entry.declaration.file ?? ''}`;
        if (!states.has(key)) states.set(key, this.stateOf(entry));
      }
    }
    return [...states.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * The servers a session in `session.cwd` would get, without starting any (and without loading
   * the MCP SDK): each once, the stronger scope winning a clash, with whether it may start
   * (`enabled`, or a `.mcp.json` server's `needs approval` / `disabled`). What `tessera doctor`
   * lists. Problems in the config files go to the pool's log as they do for a session.
   */
  async declared(session: SessionRef): Promise<McpServerDeclared[]> {
    const report = (entry: DiagnosticReport) => this.reportOnce(entry);
    const winners = await gatherDeclarations(this.options.sources, session, report);
    return winners
      .map((declaration): McpServerDeclared => {
        return {
          name: declaration.name,
          scope: declaration.scope,
          transport: declaration.spec.type,
          status: this.startStatus(declaration, session.cwd, report),
          ...(declaration.file === undefined ? {} : { file: declaration.file }),
          ...(declaration.plugin === undefined ? {} : { plugin: declaration.plugin }),
        };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** What `/mcp` reads from `getCommandHostAdapters().mcp`. */
  adapter(): { servers(): McpServerState[]; approve(name: string): void; reconnect(name: string): Promise<void> } {
    return { servers: () => this.servers(), approve: (name) => this.approveProjectServer(name), reconnect: (name) => this.reconnect(name) };
  }

  /**
   * Lets a `.mcp.json` server start (a host's approval dialog), in one project only, as Claude
   * Code records it per project: the folder of `project.cwd`, or without it every folder whose
   * sessions list the server as `needs approval` now. The servers start at once; sessions pick
   * up their tools before their next model call.
   */
  approveProjectServer(name: string, project?: { cwd: string }): void {
    const folders = project
      ? [project.cwd]
      : [...this.views.values()].flatMap((view) => view.entries.filter((entry) => entry.status === 'needs approval' && entry.declaration.name === name).map((entry) => projectFolder(entry.declaration, view.session.cwd)));
    for (const folder of folders) this.approved.add(`${folder}\u0000${name}`);
    this.rebuildViews();
  }

  /**
   * Forgets a session that ended (the plugin calls it on `sessionEnd`). Servers no other session
   * uses are closed.
   */
  release(sessionId: string): void {
    clearTimeout(this.releasing.get(sessionId));
    const grace = this.options.releaseGraceMs ?? 30_000;
    if (grace <= 0 || this.closed) {
      this.releasing.delete(sessionId);
      this.releaseNow(sessionId);
      return;
    }
    // Used again before then (`view`), the session keeps its servers.
    const timer = setTimeout(() => {
      this.releasing.delete(sessionId);
      this.releaseNow(sessionId);
    }, grace);
    timer.unref();
    this.releasing.set(sessionId, timer);
  }

  /** Sessions that ended, each with the timer that releases it after the grace. */
  private readonly releasing = new Map<string, NodeJS.Timeout>();

  private releaseNow(sessionId: string): void {
    this.views.delete(sessionId);
    this.building.delete(sessionId);
    this.closeUnused();
  }

  /** The live connection of a server by its declared name (the connected one when several sessions declare it). */
  connection(name: string): McpConnection | undefined {
    const candidates = [...this.connections.values()].filter((connection) => connection.name === name);
    return candidates.find((connection) => connection.status === 'connected') ?? candidates[0];
  }

  async reconnect(name: string): Promise<void> {
    await Promise.all([...this.connections.values()].filter((connection) => connection.name === name).map((connection) => connection.reconnect()));
  }

  /** The prompts of every connected server, with the command name each gets (`mcp__<server>__<prompt>`). */
  prompts(): Array<{ command: string; server: string; prompt: McpPromptInfo; connection: McpConnection }> {
    const seen = new Set<McpConnection>();
    const list: Array<{ command: string; server: string; prompt: McpPromptInfo; connection: McpConnection }> = [];
    for (const view of this.views.values()) {
      for (const entry of view.entries) {
        const connection = entry.connection;
        if (!connection || seen.has(connection) || connection.status !== 'connected') continue;
        seen.add(connection);
        const names = assignToolNames(entry.prefix, connection.prompts.map((prompt) => prompt.name));
        for (const prompt of connection.prompts) list.push({ command: names.get(prompt.name)!, server: connection.name, prompt, connection });
      }
    }
    return list.sort((a, b) => (a.command < b.command ? -1 : 1));
  }

  /** The resources of every connected server. */
  resources(): Array<{ server: string; uri: string; name?: string; mimeType?: string; description?: string }> {
    const seen = new Set<McpConnection>();
    const list: Array<{ server: string; uri: string; name?: string; mimeType?: string; description?: string }> = [];
    for (const connection of this.connections.values()) {
      if (seen.has(connection) || connection.status !== 'connected') continue;
      seen.add(connection);
      for (const resource of connection.resources) list.push({ server: connection.name, ...resource });
    }
    return list;
  }

  /** Reads one resource from the named server. */
  async readResource(server: string, uri: string): Promise<unknown> {
    const connection = this.connection(server);
    if (!connection) throw new Error(`No MCP server is named "${server}"; /mcp lists the configured ones.`);
    return connection.readResource(uri);
  }

  /** Closes every server. Afterwards nothing starts: `tools()` and `connect()`, and any still resolving, reject with `mcp_closed`. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.releasing.values()) clearTimeout(timer);
    this.releasing.clear();
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    const connections = [...this.connections.values()];
    this.connections.clear();
    this.views.clear();
    this.building.clear();
    await Promise.all(connections.map((connection) => connection.close()));
  }

  private async view(session: SessionRef): Promise<SessionView> {
    if (this.closed) throw closedError();
    // A session that ended and is used again (the same id reopened) is not released.
    const releasing = this.releasing.get(session.sessionId);
    if (releasing !== undefined) {
      clearTimeout(releasing);
      this.releasing.delete(session.sessionId);
    }
    return this.building.get(session.sessionId) ?? this.views.get(session.sessionId) ?? this.build(session);
  }

  /** Resolves a session's servers afresh and starts them; the newest build of a session wins. */
  private build(session: SessionRef): Promise<SessionView> {
    let build: Promise<SessionView> | undefined;
    build = (async () => {
      const { entries, Connection } = await this.resolve(session);
      // Checked after every wait: a pool closed meanwhile must not start anything.
      if (this.closed) throw closedError();
      if (this.building.get(session.sessionId) !== build) {
        // A newer build answers; a session released meanwhile gets nothing and keeps nothing.
        return this.building.get(session.sessionId) ?? { session, entries: [], waited: true };
      }
      const view: SessionView = {
        session,
        entries: entries.map((entry) => (entry.status ? entry : { ...entry, connection: this.connectionFor(Connection!, entry.declaration, session.cwd) })),
        waited: false,
      };
      this.building.delete(session.sessionId);
      this.views.set(session.sessionId, view);
      for (const entry of view.entries) void entry.connection?.start();
      this.closeUnused();
      return view;
    })();
    const current = build;
    this.building.set(session.sessionId, current);
    current.catch(() => {
      if (this.building.get(session.sessionId) === current) this.building.delete(session.sessionId);
    });
    return current;
  }

  /** A source changed or a server was approved: every known session's view is built again now. */
  private rebuildViews(): void {
    for (const view of [...this.views.values()]) this.build(view.session).catch(() => undefined);
    this.emit();
  }

  /** Closes the connections no session's view holds any more: servers no longer declared, or whose sessions all ended. */
  private closeUnused(): void {
    // A build in flight may be about to take one of them back.
    if (this.closed || this.building.size > 0) return;
    const used = new Set([...this.views.values()].flatMap((view) => view.entries.flatMap((entry) => (entry.connection ? [entry.connection] : []))));
    for (const [key, connection] of this.connections) {
      if (used.has(connection)) continue;
      this.connections.delete(key);
      void connection.close();
    }
  }

  private async resolve(session: SessionRef): Promise<{ entries: ServerEntry[]; Connection: typeof McpConnection | undefined }> {
    const report = (entry: DiagnosticReport) => this.reportOnce(entry);
    const winners = await gatherDeclarations(this.options.sources, session, report);
    // The MCP SDK loads only when a server is configured: a run without one never pays for it.
    const Connection = winners.length === 0 ? undefined : (await import('./mcp-connection.js')).McpConnection;
    const prefixes = assignServerPrefixes(winners);
    const entries = winners.map((declaration): ServerEntry => {
      const prefix = prefixes.get(serverKey(declaration))!;
      const status = this.startStatus(declaration, session.cwd, report);
      return status === 'enabled' ? { declaration, prefix } : { declaration, prefix, status };
    });
    return { entries, Connection };
  }

  /** Whether a session may start the server: only a `.mcp.json` one can wait for approval or be disabled. */
  private startStatus(declaration: McpServerDeclaration, cwd: string, report: (entry: DiagnosticReport) => void): McpServerDeclared['status'] {
    if (declaration.scope !== 'project') return 'enabled';
    const approvedHere = this.approved.has(`${projectFolder(declaration, cwd)}\u0000${declaration.name}`);
    const decision = projectApproval(this.options.approval, declaration, cwd, approvedHere, report);
    return decision === 'approved' ? 'enabled' : decision === 'denied' ? 'disabled' : 'needs approval';
  }

  private connectionFor(Connection: typeof McpConnection, declaration: McpServerDeclaration, cwd: string): McpConnection {
    const key = JSON.stringify([serverKey(declaration), declaration.scope, declaration.spec, declaration.spec.type === 'stdio' ? cwd : '']);
    let connection = this.connections.get(key);
    if (!connection) {
      connection = new Connection(declaration, { ...this.settings, cwd });
      this.connections.set(key, connection);
    }
    return connection;
  }

  private async waitForStart(view: SessionView): Promise<void> {
    const pending = view.entries.flatMap((entry) => (entry.connection ? [entry.connection.start()] : []));
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(pending), new Promise<void>((resolve) => (timer = setTimeout(resolve, this.startupTimeoutMs)))]);
    clearTimeout(timer);
  }

  private stateOf(entry: ServerEntry): McpServerState {
    const connection = entry.connection;
    const spec = entry.declaration.spec;
    const toolNames = connection ? [...assignToolNames(entry.prefix, connection.tools.map((tool) => tool.name)).values()] : [];
    const error = connection?.lastError ?? (entry.status === 'needs approval' ? `Declared in ${entry.declaration.file ?? '.mcp.json'}; approve it (enabledMcpjsonServers or enableAllProjectMcpServers) to start it.` : undefined);
    return {
      name: entry.declaration.plugin ? `plugin:${entry.declaration.plugin}:${entry.declaration.name}` : entry.declaration.name,
      status: entry.status ?? connection?.status ?? 'connecting',
      tools: toolNames.length,
      ...(error === undefined ? {} : { error }),
      scope: entry.declaration.scope,
      transport: spec.type,
      ...(entry.declaration.plugin ? { plugin: entry.declaration.plugin } : {}),
      ...(entry.declaration.file ? { file: entry.declaration.file } : {}),
      prompts: connection?.prompts.length ?? 0,
      resources: connection?.resources.length ?? 0,
      ...(connection?.startupMs === undefined ? {} : { startupMs: Math.round(connection.startupMs) }),
      toolNames,
    };
  }

  private reportOnce(report: DiagnosticReport): void {
    const key = `${report.code}|${report.file ?? ''}|${report.message}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.settings.log({ severity: report.severity, code: report.code, message: report.file && !report.message.includes(report.file) ? `${report.file}: ${report.message}` : report.message, ...(report.file ? { file: report.file } : {}) });
  }

  private emit(): void {
    if (this.closed) return;
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A listener that throws must not stop the others.
      }
    }
  }
}

/** The project a `.mcp.json` declaration belongs to: the folder of its file, else the session's. */
function projectFolder(declaration: McpServerDeclaration, cwd: string): string {
  return declaration.file === undefined ? cwd : dirname(declaration.file);
}

function closedError(): McpError {
  return new McpError('mcp_closed', '*', 'The MCP client pool is closed (its kernel shut down); no server is started. Use a new kernel to reach MCP servers again.');
}
