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

export function fakeClock(clock: Clock = new FakeClock()): Plugin {
  return definePlugin({
    name: 'fake-clock',
    provides: [Clock],
    register({ bind }) {
      bind(Clock).toConstantValue(clock);
    },
  });
}

export function inMemorySessionStore(store: SessionStore = new InMemorySessionStore()): Plugin {
  return definePlugin({
    name: 'session-store-memory',
    provides: [SessionStore],
    register({ bind }) {
      bind(SessionStore).toConstantValue(store);
    },
  });
}

export function silentSessionLogger(logger: SessionLogger = new SilentSessionLogger()): Plugin {
  return definePlugin({
    name: 'session-logger-silent',
    provides: [SessionLogger],
    register({ bind }) {
      bind(SessionLogger).toConstantValue(logger);
    },
  });
}

export function allowAllPermissions(): Plugin {
  return definePlugin({
    name: 'permissions-allow-all',
    provides: [PermissionPolicy],
    register({ bind }) {
      bind(PermissionPolicy).toConstantValue(new AllowAllPermissionPolicy());
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
      bind(ApprovalHandler).toConstantValue(new RecordingApprovalHandler(answer));
    },
  });
}
