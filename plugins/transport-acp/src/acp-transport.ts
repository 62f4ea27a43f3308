import type { ITransportAdapter } from '@tessera/contracts';
import type { InteractiveSession, Plugin } from '@tessera/kernel';
import { transportPlugin, type ApprovalRouter } from '@tessera/session-hub';
import { serveAcp, type AcpServer, type ServeAcpOptions } from './serve-acp.js';

/**
 * ACP as an `ITransportAdapter` named `acp`: `start()` serves the client over the given streams,
 * `stop()` closes the connection and shuts down the sessions the client opened. A session
 * attached with `attach` (or `session.attachTransport(adapter)`) is offered to the client under
 * its id (`session/load`) and stays the host's: stopping never shuts it down.
 */
export class AcpTransport implements ITransportAdapter<InteractiveSession> {
  readonly name = 'acp';
  private server: AcpServer | undefined;
  private readonly pending: InteractiveSession[] = [];

  constructor(private readonly options: ServeAcpOptions) {}

  attach(session: InteractiveSession): void {
    if (this.server) this.server.agent.attach(session);
    else this.pending.push(session);
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.server = serveAcp(this.options);
    for (const session of this.pending.splice(0)) this.server.agent.attach(session);
  }

  /** Resolves when the client's input ended (the editor closed the agent) and the sessions it opened were shut down. */
  get closed(): Promise<void> {
    return this.server?.closed ?? Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}

export function acpTransport(options: ServeAcpOptions): AcpTransport {
  return new AcpTransport(options);
}

/** ACP's options without what the host supplies (its sessions and approval router); the streams default to stdin and stdout. */
export type AcpTransportOptions = Omit<ServeAcpOptions, 'sessions' | 'approvals' | 'input' | 'output'> & Partial<Pick<ServeAcpOptions, 'input' | 'output'>>;

/** ACP (an editor's agent over stdio) as a plugin on `TransportContribution`. */
export function acpTransportPlugin(options: AcpTransportOptions = {}, approvals?: ApprovalRouter): Plugin {
  return transportPlugin('acp', (host) => new AcpTransport({ input: process.stdin, output: process.stdout, ...options, sessions: host.sessions, approvals: host.approvals }), approvals);
}
