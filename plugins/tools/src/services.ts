import type { Token } from '@tessera/contracts';

/**
 * The live lookups the kernel's container hands a binding's builder (`toDynamicValue`): each
 * call asks the container as it is now, so a rebind after `createKernel` is seen.
 */
export interface ContainerLookup {
  get<T>(token: Token<T>, options: { optional: true }): T | undefined;
}

/** Looks a token up; `undefined` when nothing is bound. */
export type ServiceLookup = <T>(token: Token<T>) => T | undefined;

/**
 * One tool instance's view of the kernel's services: each token is looked up the first time
 * the tool uses it and kept for the tool's life. The tool plugins build a tool instance for
 * every session (and every subagent job), so this is that session's view, with the rules of
 * `session.services`: nothing is resolved until used, a rebind reaches sessions created
 * afterwards, and a running session never sees a service change under it. (`ToolContext`
 * carries no session services, which is why the tools look the container up themselves.)
 */
export function lazyLookup(container: ContainerLookup): ServiceLookup {
  const seen = new Map<symbol, unknown>();
  return <T>(token: Token<T>): T | undefined => {
    if (seen.has(token)) return seen.get(token) as T | undefined;
    const service = container.get(token, { optional: true });
    seen.set(token, service);
    return service;
  };
}
