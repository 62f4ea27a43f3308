export { FakeClock } from './fake-clock.js';
export { InMemorySessionStore } from './in-memory-session-store.js';
export { RecordingSessionLogger, SilentSessionLogger } from './session-loggers.js';
export type { RecordedLogEvent } from './session-loggers.js';
export { AllowAllPermissionPolicy, RecordingApprovalHandler } from './permission-fakes.js';
export { allowAllPermissions, fakeClock, inMemorySessionStore, recordingApprovals, silentSessionLogger } from './plugins.js';
export { ManualProvider } from './manual-provider.js';
