import { InteractiveSession, type InteractiveSessionOptions, type IResumableSession, type Kernel } from '@tessera/kernel';
import { copyWith, createToken, SessionStore } from '@tessera/contracts';
import { definePlugin, KernelRef, type Plugin } from '@tessera/kernel';

/** How a transport opens sessions without knowing the preset behind them. */
export interface SessionOpenOptions {
  /** The session's working directory (absolute; the host checks it against its allowed roots). */
  cwd: string;
  /** Continue a stored session. */
  resumeSessionId?: string;
  /** A new session's id (a client that names its own). */
  sessionId?: string;
  model?: string;
  /** Text appended to the system prompt (an editor's or a caller's instructions). */
  appendSystemPrompt?: string;
}

/**
 * The sessions a host offers its transports: `open` composes nothing new (one kernel serves
 * every session), `list` reads the store.
 */
export interface SessionFactory {
  open(options: SessionOpenOptions): Promise<InteractiveSession>;
  list(cwd?: string): Promise<IResumableSession[]>;
  /** Removes a stored session (its transcript) for good. Optional: without it a host can only end sessions. */
  delete?(id: string): Promise<void>;
}

/** What every session a factory opens shares (a model, a permission mode, command host adapters…). */
export type SessionDefaults = Partial<Omit<InteractiveSessionOptions, 'kernel' | 'session' | 'cwd' | 'resumeSessionId' | 'sessionId'>>;

/**
 * The factory over one kernel: each `open` is a new `InteractiveSession` (resumed when asked),
 * ready before it is returned; `list` reads the kernel's store.
 */
export function kernelSessionFactory(kernel: Kernel, defaults: SessionDefaults = {}): SessionFactory {
  return {
    async open(request) {
      const model = request.model ?? defaults.model;
      const append = request.appendSystemPrompt ?? defaults.appendSystemPrompt;
      // copyWith: Node 20 adds the fields after a spread copy slowly (docs/adr/0003).
      const session = new InteractiveSession(copyWith(defaults, {
        kernel,
        cwd: request.cwd,
        ...(request.resumeSessionId === undefined ? {} : { resumeSessionId: request.resumeSessionId }),
        ...(request.sessionId === undefined ? {} : { sessionId: request.sessionId }),
        ...(model === undefined ? {} : { model }),
        ...(append === undefined ? {} : { appendSystemPrompt: append }),
      }));
      await session.whenReady();
      return session;
    },
    list: (cwd) => InteractiveSession.listResumableSessions(kernel, cwd),
    async delete(id) {
      await kernel.getOptional(SessionStore)?.delete(id);
    },
  };
}

/**
 * The host's session factory, when the host has defaults for every session (a model, a
 * permission mode, command host adapters): transports started from `TransportContribution` open
 * their sessions through it. Optional: without it they use `kernelSessionFactory(kernel)`.
 */
export const HostSessions = createToken<SessionFactory>('HostSessions');

/**
 * Binds `HostSessions` to `kernelSessionFactory(kernel, defaults)` for the kernel it is composed
 * into; `defaults` may be computed from that kernel (adapters over its services).
 */
export function hostSessionsPlugin(defaults: SessionDefaults | ((kernel: Kernel) => SessionDefaults)): Plugin {
  return definePlugin({
    name: 'host-sessions',
    provides: [HostSessions],
    register({ bind }) {
      bind(HostSessions)
        .toDynamicValue((container) => {
          const kernel = container.get(KernelRef) as Kernel;
          return kernelSessionFactory(kernel, typeof defaults === 'function' ? defaults(kernel) : defaults);
        })
        .inSingletonScope();
    },
  });
}

