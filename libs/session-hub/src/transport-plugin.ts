import { ApprovalHandler, TransportContribution, type ITransportAdapter } from '@tessera/contracts';
import { definePlugin, KernelRef, type InteractiveSession, type Kernel, type Plugin } from '@tessera/kernel';
import { ApprovalRouter } from './approval-router.js';
import { HostSessions, kernelSessionFactory, type SessionFactory } from './session-factory.js';

/** What a transport gets from its kernel when the host starts it. */
export interface TransportHost {
  kernel: Kernel;
  /** Sessions of that kernel: the host's (`HostSessions`) when bound, else `kernelSessionFactory(kernel)`. */
  sessions: SessionFactory;
  /** The kernel's `ApprovalHandler`, which must be an `ApprovalRouter` (as `serverPreset` binds it). */
  approvals: ApprovalRouter;
}

/**
 * A transport as the contribution point holds it: its name at once, the real adapter made from
 * the kernel when the host starts it (a plugin registers before the kernel exists). Sessions
 * attached before `start()` are handed over then.
 */
export class HostedTransport<TAdapter extends ITransportAdapter<InteractiveSession>> implements ITransportAdapter<InteractiveSession> {
  #adapter: TAdapter | undefined;
  readonly #pending: InteractiveSession[] = [];

  constructor(
    readonly name: string,
    private readonly host: () => TransportHost,
    private readonly make: (host: TransportHost) => TAdapter,
  ) {}

  /** The running adapter (after `start()`), for what only it offers (an HTTP server's URL). */
  get adapter(): TAdapter | undefined {
    return this.#adapter;
  }

  attach(session: InteractiveSession): void {
    if (this.#adapter) this.#adapter.attach(session);
    else this.#pending.push(session);
  }

  async start(): Promise<void> {
    if (!this.#adapter) {
      this.#adapter = this.make(this.host());
      for (const session of this.#pending.splice(0)) this.#adapter.attach(session);
    }
    await this.#adapter.start();
  }

  async stop(): Promise<void> {
    await this.#adapter?.stop();
  }
}

/**
 * A plugin that contributes one transport to `TransportContribution`: `make` builds its adapter
 * from the kernel (sessions, the approval router) when the host starts it. The host starts what
 * it wants (`kernel.getAll(TransportContribution)`); nothing listens before that. `approvals` is
 * the router the preset composed into the kernel's approval handler (`serverPreset` passes its
 * own; the handler bound may wrap it); without one, the bound `ApprovalHandler` must be a router.
 */
export function transportPlugin<TAdapter extends ITransportAdapter<InteractiveSession>>(name: string, make: (host: TransportHost) => TAdapter, approvals?: ApprovalRouter): Plugin {
  return definePlugin({
    name: `transport-${name}`,
    contributes: [TransportContribution],
    register({ bind }) {
      bind(TransportContribution)
        .toDynamicValue((container) => {
          const host = (): TransportHost => {
            const kernel = container.get(KernelRef) as Kernel;
            const router = approvals ?? kernel.getOptional(ApprovalHandler);
            if (!(router instanceof ApprovalRouter)) {
              throw new Error(`The ${name} transport routes permission asks to its clients: pass the ApprovalRouter the kernel's approval handler routes through (serverPreset does), or bind one as the ApprovalHandler.`);
            }
            return { kernel, sessions: kernel.getOptional(HostSessions) ?? kernelSessionFactory(kernel), approvals: router };
          };
          return new HostedTransport(name, host, make) as ITransportAdapter;
        })
        .inSingletonScope();
    },
  });
}

/** The transports a host started from `TransportContribution` (`startTransports`). */
export interface StartedTransports {
  readonly transports: readonly ITransportAdapter[];
  /** The running adapter of the transport named `name` (a `transportPlugin`'s), for what only it offers: an HTTP server's URL. */
  adapter<TAdapter extends ITransportAdapter<InteractiveSession>>(name: string): TAdapter | undefined;
  /** Stops them, the last started first; one that fails to stop does not keep the others running. */
  stop(): Promise<void>;
}

/**
 * Starts every transport contributed to `kernel`, in composition order. When one fails to
 * start, those already started are stopped (the last first) and the error is thrown.
 */
export async function startTransports(kernel: Kernel): Promise<StartedTransports> {
  const transports = kernel.getAll(TransportContribution);
  const started: ITransportAdapter[] = [];
  const stop = async (): Promise<void> => {
    for (const transport of started.splice(0).reverse()) await transport.stop().catch(() => undefined);
  };
  try {
    for (const transport of transports) {
      await transport.start();
      started.push(transport);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    transports,
    adapter: <TAdapter extends ITransportAdapter<InteractiveSession>>(name: string) => {
      const found = transports.find((transport) => transport.name === name);
      return found instanceof HostedTransport ? (found.adapter as TAdapter | undefined) : undefined;
    },
    stop,
  };
}

