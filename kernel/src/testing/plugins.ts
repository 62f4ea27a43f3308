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

export function allowAllPermissions(): Plugin {
  return definePlugin({
    name: 'permissions-allow-all',
    provides: [PermissionPolicy],
    register({ bind }) {
      bind(PermissionPolicy).toResolvedValue(() => new AllowAllPermissionPolicy()).inSingletonScope();
    },
  });
}

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
