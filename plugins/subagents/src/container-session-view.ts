import type { SessionServices, Token } from '@tessera/contracts';

/**
 * The live lookups the kernel's container hands a binding's builder (`toDynamicValue`): each
 * call asks the container as it is now, so a rebind after `createKernel` is seen.
 */
export interface ContainerLookup {
  get<T>(token: Token<T>, options: { optional: true }): T | undefined;
  getAll<T>(token: Token<T>): T[];
}

/**
 * A session's view of the kernel's services over a container lookup, for the child sessions of
 * subagent jobs: the same rules as the kernel's own `session.services` (each token resolved on
 * first use and kept for the session's life, so a rebind reaches jobs started afterwards and a
 * running job never sees a service change under it). One is made per job.
 */
export class LookupSessionServices implements SessionServices {
  private readonly resolved = new Map<symbol, unknown>();
  private readonly all = new Map<symbol, unknown[]>();

  constructor(private readonly container: ContainerLookup) {}

  get<T>(token: Token<T>): T {
    const service = this.getOptional(token);
    if (service === undefined) throw new Error(`No ${token.description ?? 'service'} is bound in this kernel.`);
    return service;
  }

  getOptional<T>(token: Token<T>): T | undefined {
    if (this.resolved.has(token)) return this.resolved.get(token) as T | undefined;
    const service = this.container.get(token, { optional: true });
    this.resolved.set(token, service);
    return service;
  }

  getAll<T>(token: Token<T>): T[] {
    let services = this.all.get(token);
    if (services === undefined) {
      services = this.container.getAll(token);
      this.all.set(token, services);
    }
    return services as T[];
  }
}
