export { HistoryStorage, defaultHistoryPath, toFtsQuery, type HistoryEntry, type HistoryStorageOptions } from './history-storage.js';
export { promptHistory } from './plugin.js';
