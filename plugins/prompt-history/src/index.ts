export { HistoryStorage, defaultHistoryPath, toFtsQuery, type HistoryEntry, type HistoryStorageOptions } from './history-storage.js';
export { promptHistory, PromptHistory } from './plugin.js';
