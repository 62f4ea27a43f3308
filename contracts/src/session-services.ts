import { createToken, type Token } from './token.js';

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
  /** The service bound to `token`; throws when nothing is bound. */
  get<T>(token: Token<T>): T;
  /** The service bound to `token`, or `undefined` when nothing is. */
  getOptional<T>(token: Token<T>): T | undefined;
  /** Every value bound to a contribution token; `[]` when none. */
  getAll<T>(token: Token<T>): T[];
  /** Releases what was made for this session alone (`SessionServiceFactory`); the session calls it last when it shuts down. */
  dispose?(): Promise<void>;
}

/** Services of a session made without a kernel: nothing is bound. */
export const noSessionServices: SessionServices = Object.freeze({
  get<T>(token: Token<T>): T {
    throw new Error(`No ${token.description ?? 'service'} is bound: this session was created without a kernel.`);
  },
  getOptional: () => undefined,
  getAll: () => [],
});

/** What a per-session service is made from. */
export interface SessionSeed {
  readonly sessionId: string;
  readonly cwd: string;
  /** The model the session starts with, when known. */
  readonly model?: string;
}

/**
 * Makes one service per session instead of one per kernel: a session's first request for
 * `token` calls `create`, and the value lives until the session shuts down (`dispose`).
 * It wins over a kernel-wide binding of the same token for that session, so a plugin can
 * give each session its own logger, checkpoint store or context window without touching the
 * kernel's `createSession`.
 */
export interface SessionServiceFactory<T = unknown> {
  readonly token: Token<T>;
  /** `services` resolves other tokens for the same session. */
  create(session: SessionSeed, services: SessionServices): T;
  /** Releases a value `create` made, when its session shuts down. */
  dispose?(value: T): void | Promise<void>;
}

/** Contribution point for per-session services. */
export const SessionServiceFactoryContribution = createToken<SessionServiceFactory>('SessionServiceFactory');

/**
 * One value a single session's services return for `token` instead of the kernel's binding
 * (`KernelSessionOptions.serviceOverrides`): the session's sandbox paths, say, while other
 * sessions of the same kernel keep the host's. Make one with `serviceOverride(token, value)`.
 */
export interface ServiceOverride<T = unknown> {
  /** The token the session asks for. */
  readonly token: Token<T>;
  /** What the session gets for it. */
  readonly value: T;
}

/** A `ServiceOverride`, typed by its token. */
export function serviceOverride<T>(token: Token<T>, value: T): ServiceOverride<T> {
  return { token, value };
}
