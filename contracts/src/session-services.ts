import type { Token } from './token.js';

/**
 * The services one session sees. The kernel resolves each token from its container the first
 * time the session asks for it and keeps the answer for the session's life, so
 * `kernel.container.rebind(token)` after `createKernel` takes effect for sessions created
 * afterwards while a running session keeps the instances it started with.
 *
 * Hook taps reach it as `context.session.services`: a plugin that needs another plugin's
 * service per call asks here instead of capturing an instance at boot.
 */
export interface SessionServices {
  get<T>(token: Token<T>): T;
  getOptional<T>(token: Token<T>): T | undefined;
  /** Every value bound to a contribution token; `[]` when none. */
  getAll<T>(token: Token<T>): T[];
}

/** Services of a session made without a kernel: nothing is bound. */
export const noSessionServices: SessionServices = Object.freeze({
  get<T>(token: Token<T>): T {
    throw new Error(`No ${token.description ?? 'service'} is bound: this session was created without a kernel.`);
  },
  getOptional: () => undefined,
  getAll: () => [],
});
