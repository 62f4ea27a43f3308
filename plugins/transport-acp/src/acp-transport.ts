import type { ITransportAdapter } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
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

  /** Resolves when the client's input ended (the editor closed the agent). */
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
