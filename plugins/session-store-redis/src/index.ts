export { SessionConflictError, SessionRecordCorruptError, SessionStoreUnavailableError } from './errors.js';
export { redisSessionStore, type RedisSessionStoreOptions } from './plugin.js';
export { connectionProblem, type RedisConnection } from './redis-connection.js';
export { RedisSessionCluster, type RedisSessionClusterOptions } from './redis-session-cluster.js';
export { SessionLeaseLostError } from './redis-session-lock.js';
export { RedisSessionStore, type RedisSessionStoreConfig } from './redis-session-store.js';
export { createSessionKeys, isValidPrefix, type SessionKeys } from './session-keys.js';
