import { createToken } from './token.js';

/**
 * A way to reach sessions from outside the process: HTTP, WebSocket, MCP, ACP, headless
 * stdio (spec: ITransportAdapter). `TSession` is the interactive session type of the host
 * (`InteractiveSession` from `@tessera/kernel`); contracts do not depend on it.
 */
export interface ITransportAdapter<TSession = unknown> {
  /** `http`, `ws`, `mcp`, `headless`… */
  readonly name: string;
  /** Offers a session to the transport's clients. The session stays the host's: the transport never shuts it down. */
  attach(session: TSession): void;
  /** Starts serving (listening, reading stdio); sessions attached earlier are offered from then on. */
  start(): Promise<void>;
  /** Stops serving and closes client connections. */
  stop(): Promise<void>;
}

/** Contribution point: transports a preset offers; the host starts the ones its settings enable. */
export const TransportContribution = createToken<ITransportAdapter>('TransportContribution');
