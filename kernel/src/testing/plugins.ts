import {
  ApprovalHandler,
  Clock,
  PermissionPolicy,
  SessionLogger,
  SessionStore,
  type ApprovalAnswer,
  type ApprovalRequest,
} from '@tessera/contracts';
import { definePlugin, type Plugin } from '../plugin.js';
import { FakeClock } from './fake-clock.js';
import { InMemorySessionStore } from './in-memory-session-store.js';
import { AllowAllPermissionPolicy, RecordingApprovalHandler } from './permission-fakes.js';
import { SilentSessionLogger } from './session-loggers.js';

// Each double is built by the container unless the test passes its own instance, so one
// plugin value composed into two kernels gives each kernel its own clock, store and logger.

/** Provides `Clock`: the given clock, or a new {@link FakeClock} per kernel. Reach it with `kernel.get(Clock)`. */
export function fakeClock(clock?: Clock): Plugin {
  return definePlugin({
    name: 'fake-clock',
    provides: [Clock],
    register({ bind }) {
      if (clock) bind(Clock).toConstantValue(clock);
      else bind(Clock).toResolvedValue(() => new FakeClock()).inSingletonScope();
    },
  });
}

/** Provides `SessionStore`: the given store, or a new {@link InMemorySessionStore} per kernel. */
export function inMemorySessionStore(store?: SessionStore): Plugin {
  return definePlugin({
    name: 'session-store-memory',
    provides: [SessionStore],
    register({ bind }) {
      if (store) bind(SessionStore).toConstantValue(store);
      else bind(SessionStore).toResolvedValue(() => new InMemorySessionStore()).inSingletonScope();
    },
  });
}

/** Provides `SessionLogger`: the given logger (a {@link RecordingSessionLogger}, say), or a {@link SilentSessionLogger}. */
export function silentSessionLogger(logger?: SessionLogger): Plugin {
  return definePlugin({
    name: 'session-logger-silent',
    provides: [SessionLogger],
    register({ bind }) {
      if (logger) bind(SessionLogger).toConstantValue(logger);
      else bind(SessionLogger).toResolvedValue(() => new SilentSessionLogger()).inSingletonScope();
    },
  });
}

/** Provides a `PermissionPolicy` that lets every tool call run ({@link AllowAllPermissionPolicy}). */
export function allowAllPermissions(): Plugin {
  return definePlugin({
    name: 'permissions-allow-all',
    provides: [PermissionPolicy],
    register({ bind }) {
      bind(PermissionPolicy).toResolvedValue(() => new AllowAllPermissionPolicy()).inSingletonScope();
    },
  });
}

/**
 * Provides `ApprovalHandler`: a {@link RecordingApprovalHandler} per kernel that answers with
 * `answer` (default `true`). Read its `requests` through `kernel.get(ApprovalHandler)`.
 */
export function recordingApprovals(
  answer?: ApprovalAnswer | ((request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>),
): Plugin {
  return definePlugin({
    name: 'approvals-recording',
    provides: [ApprovalHandler],
    register({ bind }) {
      bind(ApprovalHandler).toResolvedValue(() => new RecordingApprovalHandler(answer)).inSingletonScope();
    },
  });
}
