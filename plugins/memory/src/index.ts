export { memoryRoot, projectMemory, PROJECT_MEMORY_PLUGIN_NAME } from './project-memory-plugin.js';
export type { ProjectMemoryOptions } from './project-memory-plugin.js';
export { userLocalStorage, USER_LOCAL_STORAGE_PLUGIN_NAME } from './user-local-storage-plugin.js';
export type { UserLocalStorageOptions } from './user-local-storage-plugin.js';
export { DefaultProjectMemory } from './default-project-memory.js';
export type { DefaultProjectMemoryOptions } from './default-project-memory.js';
export { ProjectMemoryStore, MEMORY_DIRECTORY, MEMORY_INDEX_FILE, MEMORY_TOPICS_DIRECTORY } from './project-memory-store.js';
export type { ProjectMemoryStoreOptions, StoreAppendResult } from './project-memory-store.js';
export { PendingMemoryStore, PENDING_MEMORY_FILE } from './pending-memory-store.js';
export type { PendingMemoryStoreOptions } from './pending-memory-store.js';
export { MemoryPolicyEvaluator } from './memory-policy-evaluator.js';
export type { MemoryPolicyDecision } from './memory-policy-evaluator.js';
export { foldText, normalizeEntry, validateTopic, MAX_ENTRY_CHARS } from './memory-text.js';
export { DefaultUserLocalStorage, USER_LOCAL_MEMORY_FILE } from './default-user-local-storage.js';
export type { DefaultUserLocalStorageOptions } from './default-user-local-storage.js';
export { findRepositoryRoot, resolveUserLocalRoot } from './user-local-root.js';
export {
  InvalidMemoryEntryError,
  InvalidMemoryTopicError,
  InvalidUserLocalMemoryItemError,
  MemoryCandidateNotFoundError,
  PendingMemoryFileError,
  UserLocalMemoryFileError,
  UserLocalStorageRootError,
} from './memory-errors.js';
export type { UserLocalRootProblem } from './memory-errors.js';
