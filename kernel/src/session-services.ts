import type { SessionServices, Token } from '@tessera/contracts';
import type { Container } from 'inversify';

/**
 * One session's view of the kernel's container: each token is resolved on first use and kept,
 * so a rebind after `createKernel` reaches sessions created afterwards, and a running session
 * never sees a service change under it. Costs nothing until asked.
 */
export class ContainerSessionServices implements SessionServices {
  private readonly resolved = new Map<symbol, unknown>();
  private readonly all = new Map<symbol, unknown[]>();

  constructor(private readonly container: Container) {}

  get<T>(token: Token<T>): T {
    if (this.resolved.has(token)) return this.resolved.get(token) as T;
    const service = this.container.get<T>(token);
    this.resolved.set(token, service);
    return service;
  }

  getOptional<T>(token: Token<T>): T | undefined {
    if (this.resolved.has(token)) return this.resolved.get(token) as T | undefined;
    const service = this.container.isBound(token) ? this.container.get<T>(token) : undefined;
    this.resolved.set(token, service);
    return service;
  }

  getAll<T>(token: Token<T>): T[] {
    let services = this.all.get(token);
    if (services === undefined) {
      services = this.container.isBound(token) ? this.container.getAll<T>(token) : [];
      this.all.set(token, services);
    }
    return services as T[];
  }
}
