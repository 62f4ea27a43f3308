import { createToken } from './token.js';

/**
 * A way to reach sessions from outside the process: HTTP, WebSocket, MCP, ACP, headless
 * stdio (spec: ITransportAdapter). `TSession` is the interactive session type of the host
 * (`InteractiveSession` from `@tessera/kernel`); contracts do not depend on it.
 */
export interface ITransportAdapter<TSession = unknown> {
  /** `http`, `ws`, `mcp`, `headless`… */
  readonly name: string;
  attach(session: TSession): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Contribution point: transports a preset offers; the host starts the ones its settings enable. */
export const TransportContribution = createToken<ITransportAdapter>('TransportContribution');
