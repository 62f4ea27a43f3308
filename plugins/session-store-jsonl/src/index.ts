export * from './entries.js';
export { buildSessionContext, createBranchSummaryMessage, createCompactionSummaryMessage, createCustomMessage, getPath, type SessionContext } from './context.js';
export { migrateToCurrentVersion, generateEntryId } from './migrations.js';
export { parseJsonlLenient, JsonlParser, type JsonlParseResult, type JsonlProblem } from './jsonl.js';
export { loadEntriesFromFile, readSessionFile, type SessionFileLoad } from './session-loader.js';
export { SessionManager, type SessionManagerOptions, type NewSessionOptions } from './session-manager.js';
export type { CompactionExtras, SessionInitFields } from './session-append-methods.js';
export type { SessionTreeNode } from './session-tree.js';
export type { SessionInfo } from './session-listing.js';
export { LIST_PREFIX_BYTES, LIST_TAIL_BYTES } from './session-listing.js';
export type { SessionStorage, SessionStorageWriter, SessionStorageStat, SessionStorageWriterOptions } from './session-storage.js';
export { FileSessionStorage } from './file-session-storage.js';
export { MemorySessionStorage } from './memory-session-storage.js';
export { FileBlobStore, MemoryBlobStore, parseBlobRef, isBlobRef, BLOB_REF_PREFIX, type BlobStore } from './blob-store.js';
export { MAX_PERSIST_CHARS, TRUNCATION_NOTICE, BLOB_THRESHOLD_CHARS, serializeEntry, truncateForPersistence, type RedactText } from './persist-transform.js';
export { defaultAgentDir, encodeCwd, sessionDirFor, sessionFileName } from './paths.js';
export {
  SessionVersionTooNewError,
  SessionEntryNotFoundError,
  SessionPersistenceError,
  InvalidSessionPathPartError,
  InvalidSessionFileError,
  SessionNotFoundError,
  SessionExistsError,
} from './errors.js';
export { JsonlSessionStore, type JsonlSessionStoreOptions, type SessionSnapshot } from './jsonl-session-store.js';
export { JsonlSessionTree } from './jsonl-session-tree.js';
export { LEAF_MARKER_TYPE } from './leaf-marker.js';
export { jsonlSessionStore } from './plugin.js';
export { RECORD_META_TYPE, HISTORY_EVENT_TYPE } from './record-mapping.js';
