import { SessionStore } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { JsonSessionStore, type JsonSessionStoreOptions } from './json-session-store.js';

export { DEFAULT_SESSIONS_DIR, JsonSessionStore } from './json-session-store.js';
export type { JsonSessionStoreOptions } from './json-session-store.js';
export { migrateSessionHistory } from './migrate-session-history.js';
export type { MigrateSessionHistoryResult } from './migrate-session-history.js';
export { historyFromMessages, parseSessionRecord, SessionRecordError } from './session-record.js';
export type { JsonSessionRecord } from './session-record.js';
export { assertValidSessionId, InvalidSessionIdError, isValidSessionId } from './session-id.js';
export { writeFileAtomic } from './atomic-write.js';

/** Provides `SessionStore`: one JSON file per session under `baseDir` (default `~/.tessera/sessions`). */
export function jsonSessionStore(options: JsonSessionStoreOptions = {}): Plugin {
  return definePlugin({
    name: 'session-store-json',
    provides: [SessionStore],
    register({ bind }) {
      bind(SessionStore).toConstantValue(new JsonSessionStore(options));
    },
  });
}
