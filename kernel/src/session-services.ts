import {
  SessionServiceFactoryContribution,
  type SessionSeed,
  type SessionServiceFactory,
  type ServiceOverride,
  type SessionServices,
  type Token,
} from '@tessera/contracts';

/**
 * What `ContainerSessionServices` needs from a container: the kernel's `Container`, or the
 * resolution context a binding's builder receives (so a plugin can give a session it makes —
 * a subagent job's child, a per-session tool — the same view).
 */
export interface ServiceResolver {
  /** The service bound to `token`, or `undefined` when nothing is. */
  get<T>(token: Token<T>, options: { optional: true }): T | undefined;
  /** Every value bound to `token`; `[]` when none. */
  getAll<T>(token: Token<T>, options: { optional: true }): T[];
}

/**
 * One session's view of the kernel's container: each token is resolved on first use and kept,
 * so a rebind after `createKernel` reaches sessions created afterwards, and a running session
 * never sees a service change under it. Costs nothing until asked.
 *
 * Given a `seed`, tokens that a `SessionServiceFactory` contribution covers are made for this
 * session alone (and released by `dispose`); without one, everything comes from the container.
 * Given `overrides`, their tokens answer with the given values before anything else (a
 * sandboxed session's `SandboxPaths`); they are the caller's, never disposed here.
 */
export class ContainerSessionServices implements SessionServices {
  private readonly resolved = new Map<symbol, unknown>();
  private readonly all = new Map<symbol, unknown[]>();
  private factories: ReadonlyMap<symbol, SessionServiceFactory> | undefined;
  private readonly made: Array<{ factory: SessionServiceFactory; value: unknown }> = [];
  private readonly overrides: ReadonlyMap<symbol, unknown> | undefined;

  constructor(
    private readonly container: ServiceResolver,
    private readonly seed?: SessionSeed,
    overrides?: readonly ServiceOverride[],
  ) {
    // Later entries win, as in `KernelSessionOptions.serviceOverrides`.
    this.overrides = overrides === undefined || overrides.length === 0 ? undefined : new Map(overrides.map((override) => [override.token, override.value]));
  }

  /** The service for `token`; throws when nothing is bound. */
  get<T>(token: Token<T>): T {
    const service = this.getOptional(token);
    if (service === undefined) {
      throw new Error(`No plugin provides ${token.description ?? 'this service'}; add one that does, or use getOptional.`);
    }
    return service;
  }

  /** The service for `token` (made for this session when a factory covers it), or `undefined`. Kept after the first call. */
  getOptional<T>(token: Token<T>): T | undefined {
    if (this.resolved.has(token)) return this.resolved.get(token) as T | undefined;
    if (this.overrides?.has(token)) return this.overrides.get(token) as T;
    const factory = this.factoryFor(token);
    let service: T | undefined;
    if (factory) {
      // Recorded before `create` runs, so a factory that asks for its own token gets undefined, not a loop.
      this.resolved.set(token, undefined);
      service = factory.create(this.seed!, this) as T;
      this.made.push({ factory, value: service });
    } else {
      service = this.container.get<T>(token, { optional: true });
    }
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

  /** Releases per-session services, newest first. Failures are collected and rethrown together. */
  async dispose(): Promise<void> {
    const failures: unknown[] = [];
    for (const { factory, value } of this.made.splice(0).reverse()) {
      try {
        await factory.dispose?.(value);
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} per-session services failed to release`);
  }

  private factoryFor(token: symbol): SessionServiceFactory | undefined {
    if (this.seed === undefined) return undefined;
    if (this.factories === undefined) {
      const contributed = this.container.getAll<SessionServiceFactory>(SessionServiceFactoryContribution, { optional: true });
      this.factories = contributed.length === 0 ? EMPTY : new Map(contributed.map((factory) => [factory.token, factory]));
    }
    return this.factories.get(token);
  }
}

const EMPTY: ReadonlyMap<symbol, SessionServiceFactory> = new Map();
