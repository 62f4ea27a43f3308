export { ApprovalRouter } from './approval-router.js';
export {
  SessionBusyError,
  SessionCluster,
  SessionControlError,
  type ClusterControlHandler,
  type ClusterControlOptions,
  type ClusterControlReply,
  type ClusterTurnEvent,
  type SessionLease,
  type SessionLockOptions,
  type StoredSessionHead,
} from './session-cluster.js';
export { HostSessions, hostSessionsPlugin, kernelSessionFactory, type SessionDefaults, type SessionFactory, type SessionOpenOptions } from './session-factory.js';
export { FAIR_ROUNDS_PLUGIN_NAME, fairRoundsPlugin } from './fair-rounds.js';
export { HostedTransport, startTransports, transportPlugin, type StartedTransports, type TransportHost } from './transport-plugin.js';
