import type { SessionServices, Token } from '@tessera/contracts';

/**
 * What `ContainerSessionServices` needs from a container: the kernel's `Container`, or the
 * resolution context a binding's builder receives (so a plugin can give a session it makes —
 * a subagent job's child, a per-session tool — the same view).
 */
export interface ServiceResolver {
  get<T>(token: Token<T>, options: { optional: true }): T | undefined;
  getAll<T>(token: Token<T>, options: { optional: true }): T[];
}

/**
 * One session's view of the kernel's container: each token is resolved on first use and kept,
 * so a rebind after `createKernel` reaches sessions created afterwards, and a running session
 * never sees a service change under it. Costs nothing until asked.
 */
export class ContainerSessionServices implements SessionServices {
  private readonly resolved = new Map<symbol, unknown>();
  private readonly all = new Map<symbol, unknown[]>();

  constructor(private readonly container: ServiceResolver) {}

  get<T>(token: Token<T>): T {
    const service = this.getOptional(token);
    if (service === undefined) {
      throw new Error(`No plugin provides ${token.description ?? 'this service'}; add one that does, or use getOptional.`);
    }
    return service;
  }

  getOptional<T>(token: Token<T>): T | undefined {
    if (this.resolved.has(token)) return this.resolved.get(token) as T | undefined;
    const service = this.container.get<T>(token, { optional: true });
    this.resolved.set(token, service);
    return service;
  }

  getAll<T>(token: Token<T>): T[] {
    let services = this.all.get(token);
    if (services === undefined) {
      services = this.container.getAll<T>(token, { optional: true });
      this.all.set(token, services);
    }
    return services as T[];
  }
}
