import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeError, isValidSessionId, type ICommandInfo } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import type { ApprovalRouter, SessionFactory } from '@tessera/session-hub';
import { McpApprovals, type ApprovalCall } from './mcp-approvals.js';
import { abortInput, commandInput, promptInput, promptOutput } from './mcp-tool-schemas.js';
import { runCommandCall, runPromptTurn, toolError, type ToolCallExtra } from './prompt-turn.js';
import type { SessionOwners } from './session-owners.js';

/** What a connection needs from the transport that made it. */
export interface McpConnectionOptions {
  sessions: SessionFactory;
  approvals: ApprovalRouter;
  owners: SessionOwners;
  cwd: string;
  serverInfo: { name: string; version: string };
  instructions?: string;
  model?: string;
  appendSystemPrompt?: string;
  allowResume: boolean;
  approvalTimeoutMs: number;
  /**
   * Most sessions this connection holds at once (default 16). Starting one more ends the least
   * recently used idle one (it is saved, as at the connection's end); when every one is running
   * a turn, the new one is refused.
   */
  maxSessions?: number;
  /**
   * Asked before each turn (`prompt`) this connection starts: a message refuses it (a per-token
   * limit the host keeps across its transports). Turns then running here count in `runningTurns`.
   */
  turnGate?: () => string | undefined;
  /** The commands to offer before a session exists. */
  commands?: () => readonly ICommandInfo[];
  /** Told once when the connection starts closing. */
  onClose?: () => void;
}

interface OwnedSession {
  session: InteractiveSession;
  /** Attached by the host (`adopt`): the connection serves it but never ends it. */
  hostOwned: boolean;
  /** The MCP tool call running in the session, if any: permission asks go through it. */
  call: ApprovalCall | undefined;
  /**
   * Tool calls holding the session now (`use`): from the moment `resolve` found or opened it until
   * the call ends. A held session is not ended to make room meanwhile.
   */
  busy: number;
  unroute: () => void;
}

/** `command_compact`; characters MCP clients refuse in names become `_`. */
export function mcpCommandToolName(command: string): string {
  return `command_${command.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}

const PROMPT_DESCRIPTION =
  'Ask the Tessera coding agent to do something: it runs one turn (reading files, running tools, editing) in its working directory and answers with its final text, a summary of its tool calls and a session id. Pass that sessionId to continue the same conversation. With a progressToken, the text streams as progress notifications.';

/**
 * One MCP client session: its `McpServer` (tools `prompt`, `abort` and `command_<name>`) and
 * the Tessera sessions it opened. Those sessions are its own — another connection's ids are
 * refused as unknown — and end (saved) when the connection closes.
 */
export class McpConnection {
  readonly server: McpServer;
  private readonly owned = new Map<string, OwnedSession>();
  private readonly commandTools = new Map<string, RegisteredTool>();
  /** Sessions being opened (or resumed) for a tool call: each holds the room `makeRoom` took for it. */
  private opening = 0;
  /** The session the client used last: `command_*` calls without a sessionId run there. */
  private lastSessionId: string | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: McpConnectionOptions) {
    this.server = new McpServer(options.serverInfo, {
      capabilities: { tools: { listChanged: true } },
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    });
    this.server.registerTool(
      'prompt',
      { title: 'Ask the Tessera agent', description: PROMPT_DESCRIPTION, inputSchema: promptInput, outputSchema: promptOutput, annotations: { destructiveHint: true, openWorldHint: true } },
      (args, extra) => this.prompt(args.prompt, args.sessionId, extra),
    );
    this.server.registerTool(
      'abort',
      { title: 'Stop a running turn', description: 'Stops the turn running in a session this MCP client started (the `prompt` call answers with what the turn produced so far).', inputSchema: abortInput, annotations: { idempotentHint: true } },
      (args) => this.abort(args.sessionId),
    );
    this.syncCommandTools(options.commands?.() ?? []);
    this.server.server.onclose = () => void this.close();
  }

  /** Serves this connection over `transport` (stdio, one Streamable HTTP session, in-memory). */
  connect(transport: Transport): Promise<void> {
    return this.server.connect(transport);
  }

  /** The ids of the sessions this connection owns. */
  sessionIds(): string[] {
    return [...this.owned.keys()];
  }

  /**
   * Serves `session` (opened by the host) to this connection's client as one of its own. It stays
   * the host's (`ITransportAdapter.attach`): closing the connection releases it without ending it,
   * and it is never ended to make room.
   */
  adopt(session: InteractiveSession): void {
    const id = session.getSessionId();
    if (this.owned.has(id)) return;
    if (!this.options.owners.claim(id, this)) throw new Error(`Session ${id} already belongs to another MCP connection.`);
    this.own(session, { hostOwned: true });
  }

  /** Ends every session the connection opened (each is saved), releases the host's, and closes the server. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.options.onClose?.();
      const sessions = [...this.owned.values()];
      this.owned.clear();
      await Promise.all(
        sessions.map(async (owned) => {
          owned.unroute();
          this.options.owners.release(owned.session.getSessionId(), this);
          if (!owned.hostOwned) await owned.session.shutdown({ reason: 'other' }).catch(() => undefined);
        }),
      );
      await this.server.close().catch(() => undefined);
    })();
    return this.closing;
  }

  // ------------------------------------------------------------------ tools

  /** Turns (`prompt` calls) running in this connection now, those still opening their session included. */
  get runningTurns(): number {
    return this.turns;
  }

  private turns = 0;

  private async prompt(prompt: string, sessionId: string | undefined, extra: ToolCallExtra): Promise<CallToolResult> {
    const refused = this.options.turnGate?.();
    if (refused !== undefined) return toolError(refused);
    // Counted from the gate on, before any wait (opening the session): a prompt arriving
    // meanwhile is checked against this one, so two cannot both pass the last free turn.
    this.turns += 1;
    try {
      return await this.use(sessionId, async (found) => {
        if (found.session.isExecuting() || found.call) return toolError(`Session ${found.session.getSessionId()} is already running a turn; wait for its result, or stop it with the abort tool.`);
        return this.during(found, extra, () => runPromptTurn(found.session, prompt, extra));
      });
    } finally {
      this.turns -= 1;
    }
  }

  private abort(sessionId: string): CallToolResult {
    const owned = this.owned.get(sessionId);
    if (!owned) return toolError(unknownSession(sessionId));
    if (!owned.session.isExecuting()) return { content: [{ type: 'text', text: `No turn is running in session ${sessionId}.` }] };
    owned.session.abort();
    return { content: [{ type: 'text', text: `Stopping the turn in session ${sessionId}.` }] };
  }

  private async command(name: string, args: string | undefined, sessionId: string | undefined, extra: ToolCallExtra): Promise<CallToolResult> {
    return this.use(sessionId ?? this.lastSessionId, async (found) => {
      if (found.call) return toolError(`Session ${found.session.getSessionId()} is running a turn; run /${name} after it, or stop it with the abort tool.`);
      return this.during(found, extra, () => runCommandCall(found.session, name, args ?? ''));
    });
  }

  /**
   * Runs `work` on the session `resolve` finds or opens for `sessionId` (a tool error when there
   * is none), holding it as `SessionHub.use` holds a copy: from the moment it is found or owned
   * until `work` ends, so a concurrent call making room never ends it in between.
   */
  private async use(sessionId: string | undefined, work: (owned: OwnedSession) => Promise<CallToolResult>): Promise<CallToolResult> {
    const found = await this.resolve(sessionId);
    if (typeof found === 'string') return toolError(found);
    try {
      return await work(found);
    } finally {
      found.busy -= 1;
    }
  }

  /** Runs `work` as the session's current call (permission asks are sent through it). */
  private async during(owned: OwnedSession, extra: ToolCallExtra, work: () => Promise<CallToolResult>): Promise<CallToolResult> {
    owned.call = { requestId: extra.requestId };
    const id = owned.session.getSessionId();
    this.lastSessionId = id;
    // Map order is use order: the first idle entry is the one to end when room is needed.
    if (this.owned.get(id) === owned) {
      this.owned.delete(id);
      this.owned.set(id, owned);
    }
    try {
      return await work();
    } finally {
      owned.call = undefined;
    }
  }

  /** One model-invocable command per tool; tools for new commands are added (clients are told). */
  private syncCommandTools(commands: readonly ICommandInfo[]): void {
    for (const command of commands) {
      if (!command.modelInvocable) continue;
      const name = mcpCommandToolName(command.name);
      if (this.commandTools.has(name) || name === 'command_') continue;
      const description = `Run Tessera's /${command.name} command in a session: ${command.description}${command.argumentHint ? ` Arguments: ${command.argumentHint}.` : ''}`;
      const tool = this.server.registerTool(name, { title: `/${command.name}`, description, inputSchema: commandInput }, (args, extra) => this.command(command.name, args.args, args.sessionId, extra));
      this.commandTools.set(name, tool);
    }
  }

  // ------------------------------------------------------------------ sessions

  /**
   * An owned session, a new one (no id), a resumed stored one (when allowed), or why not. A
   * session returned is held for the caller (`busy`, taken before any wait), who lets go of it.
   */
  private async resolve(sessionId: string | undefined): Promise<OwnedSession | string> {
    if (this.closing) return 'This MCP session is closing.';
    if (sessionId !== undefined) {
      const owned = this.owned.get(sessionId);
      if (owned) {
        owned.busy += 1;
        return owned;
      }
      if (!isValidSessionId(sessionId)) return `"${sessionId}" is not a session id (1–128 letters, digits, ".", "_" or "-"). Omit sessionId to start a new session.`;
      // Resuming never takes a session another connection holds: the answer is the same as for an unknown id.
      if (!this.options.allowResume) return unknownSession(sessionId);
    }
    const slot = await this.makeRoom();
    if (typeof slot === 'string') return slot;
    try {
      return await (sessionId === undefined ? this.start(slot) : this.resume(sessionId, slot));
    } finally {
      slot();
    }
  }

  /** A new session, owned for the calling tool call in the room `slot` holds. */
  private async start(slot: () => void): Promise<OwnedSession | string> {
    let session: InteractiveSession;
    try {
      session = await this.open({});
    } catch (error) {
      return `Could not start a session: ${describeError(error)}`;
    }
    if (this.closing) {
      await session.shutdown().catch(() => undefined);
      return 'This MCP session is closing.';
    }
    if (!this.options.owners.claim(session.getSessionId(), this)) {
      await session.shutdown().catch(() => undefined);
      return `Session ${session.getSessionId()} is already held by another MCP connection.`;
    }
    return this.own(session, { slot });
  }

  /** The stored session `sessionId`, resumed and owned for the calling tool call in the room `slot` holds. */
  private async resume(sessionId: string, slot: () => void): Promise<OwnedSession | string> {
    if (!this.options.owners.claim(sessionId, this)) return unknownSession(sessionId);
    try {
      const resumed = await this.open({ resumeSessionId: sessionId });
      if (!this.closing) return this.own(resumed, { slot });
      await resumed.shutdown().catch(() => undefined);
      this.options.owners.release(sessionId, this);
      return 'This MCP session is closing.';
    } catch (error) {
      this.options.owners.release(sessionId, this);
      return `${unknownSession(sessionId)} (${describeError(error)})`;
    }
  }

  /**
   * Room for one more session, taken for the caller at once: the returned function gives it back
   * (`own` does when the session fills it), so concurrent calls never share it. Below
   * `maxSessions` (sessions being opened count), nothing to do. At it, the least recently used
   * session that no call holds and that runs no turn is ended (saved). A message when every
   * session is in use.
   */
  private async makeRoom(): Promise<(() => void) | string> {
    const max = this.options.maxSessions ?? 16;
    if (this.owned.size + this.opening < max) return this.reserve();
    for (const [id, owned] of this.owned) {
      if (owned.hostOwned || owned.busy > 0 || owned.call || owned.session.isExecuting()) continue;
      this.owned.delete(id);
      if (this.lastSessionId === id) this.lastSessionId = undefined;
      owned.unroute();
      this.options.owners.release(id, this);
      const slot = this.reserve();
      await owned.session.shutdown({ reason: 'other' }).catch(() => undefined);
      return slot;
    }
    return `This MCP session holds ${this.owned.size + this.opening} sessions (at most ${max}), each in use by a tool call or turn, or attached by the host; wait for one to finish, or stop one with the abort tool.`;
  }

  /** Counts one more session as being opened until the returned function is called (idempotent). */
  private reserve(): () => void {
    this.opening += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.opening -= 1;
    };
  }

  private open(extra: { resumeSessionId?: string }): Promise<InteractiveSession> {
    const { cwd, model, appendSystemPrompt } = this.options;
    return this.options.sessions.open({
      cwd,
      ...extra,
      ...(model === undefined ? {} : { model }),
      ...(appendSystemPrompt === undefined ? {} : { appendSystemPrompt }),
    });
  }

  /**
   * Serves `session` to this connection's client. With `slot`, it was opened for a tool call: it
   * fills the room `slot` holds (given back in the same step) and is held for that call.
   */
  private own(session: InteractiveSession, options: { hostOwned?: boolean; slot?: () => void } = {}): OwnedSession {
    const id = session.getSessionId();
    const owned: OwnedSession = { session, hostOwned: options.hostOwned === true, call: undefined, busy: options.slot ? 1 : 0, unroute: () => undefined };
    const approvals = new McpApprovals({ server: this.server.server, currentCall: () => owned.call, timeoutMs: this.options.approvalTimeoutMs });
    owned.unroute = this.options.approvals.route(id, approvals);
    this.owned.set(id, owned);
    options.slot?.();
    this.syncCommandTools(session.listCommands());
    return owned;
  }
}

function unknownSession(sessionId: string): string {
  return `No session "${sessionId}" in this MCP session. A session id works only in the MCP session that started it; omit sessionId to start a new session.`;
}
