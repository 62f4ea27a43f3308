import { isAbsolute, resolve } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { RequestError } from '@agentclientprotocol/sdk';
import { describeError, type PermissionMode } from '@tessera/contracts';
import { ResumeSessionCwdMismatchError, type InteractiveSession } from '@tessera/kernel';
import type { ApprovalRouter, SessionFactory } from '@tessera/session-hub';
import { AcpSession, type AcpPeer } from './acp-session.js';

export interface AcpAgentOptions {
  /** Opens and lists the host's sessions (`composeHost(…).sessions`). */
  sessions: SessionFactory;
  /** The router composed as the kernel's `ApprovalHandler`: each session's asks go to its client. */
  approvals: ApprovalRouter;
  /** `agentInfo` in `initialize` (default `tessera`). */
  agentInfo?: acp.Implementation;
  /** Modes a client may switch to; default every permission mode but `bypassPermissions`. */
  modes?: readonly PermissionMode[];
  /** Diagnostics (never the protocol channel); default: dropped. */
  log?: (message: string) => void;
}

const DEFAULT_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'dontAsk'];

/**
 * The ACP agent side of Tessera: `initialize`, `session/new|load|list|close|set_mode|prompt`,
 * `session/cancel` and `authenticate` over one client connection, each session an
 * `AcpSession` over an `InteractiveSession` from the host's `SessionFactory`. Parameters are
 * checked by the SDK's schemas before a handler runs; a handler's `RequestError` is the client's
 * JSON-RPC error, and nothing a client sends ends the process.
 */
export class AcpAgent {
  readonly app: acp.AgentApp;
  private readonly sessions = new Map<string, AcpSession>();
  /** Sessions the host handed over (`attach`): served, never shut down by the agent. */
  private readonly attached = new Map<string, InteractiveSession>();
  private readonly unroutes = new Map<string, () => void>();
  /** Stored sessions being opened for `session/load`, by id: a second load waits for the first. */
  private readonly loading = new Map<string, Promise<AcpSession>>();
  /** Every open in flight: `close` waits for them, so a session opened as the client left is ended too. */
  private readonly opening = new Set<Promise<unknown>>();
  private readonly log: (message: string) => void;
  private readonly modes: readonly PermissionMode[];
  private peer: AcpPeer | undefined;

  constructor(private readonly options: AcpAgentOptions) {
    this.log = options.log ?? (() => undefined);
    this.modes = options.modes ?? DEFAULT_MODES;
    this.app = acp
      .agent({ name: 'tessera' })
      .onConnect((connection) => {
        this.peer = peerOf(connection.client);
      })
      .onRequest(acp.methods.agent.initialize, ({ params }) => this.initialize(params))
      .onRequest(acp.methods.agent.authenticate, () => ({}))
      .onRequest(acp.methods.agent.session.new, ({ params }) => this.newSession(params))
      .onRequest(acp.methods.agent.session.load, ({ params }) => this.loadSession(params))
      .onRequest(acp.methods.agent.session.list, ({ params }) => this.listSessions(params))
      .onRequest(acp.methods.agent.session.close, async ({ params }) => {
        await this.closeSession(this.session(params.sessionId));
        return {};
      })
      .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
        this.session(params.sessionId).setMode(params.modeId);
        return {};
      })
      .onRequest(acp.methods.agent.session.prompt, async ({ params }) => ({ stopReason: await this.session(params.sessionId).prompt(params.prompt) }))
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => this.sessions.get(params.sessionId)?.cancel());
  }

  /** Serves one client over `stream` (newline-delimited JSON, e.g. `ndJsonStream`). */
  connect(stream: acp.Stream): acp.AgentConnection {
    return this.app.connect(stream);
  }

  /** Offers a session the host opened: a client reaches it with `session/load` and its id. */
  attach(session: InteractiveSession): void {
    this.attached.set(session.getSessionId(), session);
  }

  /** Ends every session: those the agent opened are shut down (and saved). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.opening]);
    await Promise.all([...this.sessions.values()].map((session) => this.closeSession(session)));
  }

  private initialize(_params: acp.InitializeRequest): acp.InitializeResponse {
    return {
      // v1 is the only version: a client asking for it gets it; any other gets the latest Tessera has.
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { list: {}, close: {} },
      },
      authMethods: [],
      agentInfo: this.options.agentInfo ?? { name: 'tessera', title: 'Tessera', version: '0.1.0' },
    };
  }

  private async newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    const cwd = checkCwd(params.cwd);
    this.noteMcpServers(params.mcpServers);
    const session = await this.track(this.open({ cwd }, 'create a session'));
    this.afterResponse(session);
    return { sessionId: session.sessionId, modes: session.modeState() };
  }

  private async loadSession(params: acp.LoadSessionRequest): Promise<acp.LoadSessionResponse> {
    const cwd = checkCwd(params.cwd);
    this.noteMcpServers(params.mcpServers);
    let session = this.sessions.get(params.sessionId);
    checkFolder(params.sessionId, session?.interactive ?? this.attached.get(params.sessionId), params.cwd);
    if (!session) {
      const attached = this.attached.get(params.sessionId);
      if (attached) session = this.adopt(attached);
      else {
        session = await this.loadStored(params.sessionId, cwd);
        // A load that joined another's open asked with its own cwd.
        checkFolder(params.sessionId, session.interactive, params.cwd);
      }
    }
    await session.replay();
    this.afterResponse(session);
    return { modes: session.modeState() };
  }

  /**
   * Opens a stored session once however many loads of it arrive before it is open: two opens
   * would make two live copies of one session, and the first would never be shut down.
   */
  private loadStored(sessionId: string, cwd: string): Promise<AcpSession> {
    let loading = this.loading.get(sessionId);
    if (!loading) {
      loading = this.track(
        (async () => {
          const stored = await this.options.sessions.list();
          if (!stored.some((entry) => entry.id === sessionId)) {
            throw new RequestError(-32002, `No stored session "${sessionId}"; session/list shows the sessions that can be loaded.`, { sessionId });
          }
          return this.open({ cwd, resumeSessionId: sessionId }, `load session ${sessionId}`);
        })(),
      ).finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, loading);
    }
    return loading;
  }

  private async listSessions(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const stored = await this.options.sessions.list(params.cwd ?? undefined);
    return {
      sessions: stored.map((entry) => ({ sessionId: entry.id, cwd: entry.cwd, title: entry.name ?? (entry.firstPrompt.split('\n')[0] || null), updatedAt: entry.updatedAt })),
    };
  }

  private async open(request: { cwd: string; resumeSessionId?: string }, what: string): Promise<AcpSession> {
    let interactive: InteractiveSession;
    try {
      interactive = await this.options.sessions.open(request);
    } catch (error) {
      // Another folder's session: the client asked for something it may not have, not a server fault.
      if ((error as { code?: unknown }).code === 'resume_cwd_mismatch') throw RequestError.invalidParams({ cwd: request.cwd }, describeError(error));
      throw RequestError.internalError({ cwd: request.cwd }, `Could not ${what}: ${describeError(error)}`);
    }
    return this.adopt(interactive);
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.opening.add(work);
    const settled = (): void => void this.opening.delete(work);
    work.then(settled, settled);
    return work;
  }

  private adopt(interactive: InteractiveSession): AcpSession {
    if (!this.peer) throw RequestError.internalError(undefined, 'The ACP connection is not open.');
    const session = new AcpSession(interactive, this.peer, { modes: this.modes, log: this.log });
    this.sessions.set(session.sessionId, session);
    this.unroutes.set(session.sessionId, this.options.approvals.route(session.sessionId, session));
    return session;
  }

  private async closeSession(session: AcpSession): Promise<void> {
    this.sessions.delete(session.sessionId);
    this.unroutes.get(session.sessionId)?.();
    this.unroutes.delete(session.sessionId);
    try {
      await session.close({ shutdown: !this.attached.has(session.sessionId) });
    } catch (error) {
      this.log(`acp: session ${session.sessionId} did not shut down cleanly: ${describeError(error)}`);
    }
  }

  private session(sessionId: string): AcpSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw new RequestError(-32002, `Session "${sessionId}" is not open on this connection; create it with session/new or load it with session/load.`, { sessionId });
    return session;
  }

  /** Commands are advertised once the client has the session id (after the response). */
  private afterResponse(session: AcpSession): void {
    setImmediate(() => void session.advertiseCommands());
  }

  private noteMcpServers(servers: readonly acp.McpServer[]): void {
    if (servers.length === 0) return;
    this.log(`acp: ignoring ${servers.length} MCP server(s) from the client (${servers.map((server) => server.name).join(', ')}); configure MCP servers in Tessera's settings or .mcp.json instead.`);
  }
}

/** A session open here (or the host's) is another folder's just as a stored one is. */
function checkFolder(sessionId: string, live: InteractiveSession | undefined, cwd: string): void {
  if (live && resolve(live.getSession().cwd) !== resolve(cwd)) {
    throw RequestError.invalidParams({ cwd }, new ResumeSessionCwdMismatchError(sessionId, live.getSession().cwd, cwd).message);
  }
}

function checkCwd(cwd: string): string {
  if (!isAbsolute(cwd)) throw RequestError.invalidParams({ cwd }, `cwd must be an absolute path, got "${cwd}".`);
  return cwd;
}

function peerOf(client: acp.AgentContext): AcpPeer {
  return {
    sessionUpdate: (notification) => client.notify(acp.methods.client.session.update, notification),
    requestPermission: (request, signal) => client.request(acp.methods.client.session.requestPermission, request, { cancellationSignal: signal }),
  };
}

/** Creates the agent; `connect` it to a stream, or use `serveAcp` for stdio. */
export function acpAgent(options: AcpAgentOptions): AcpAgent {
  return new AcpAgent(options);
}
