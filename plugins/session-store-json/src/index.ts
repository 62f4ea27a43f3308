import { Diagnostics, processWarningDiagnostics, SessionStore, type DiagnosticsReporter } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import { JsonSessionStore, skippedFileReport, type JsonSessionStoreOptions } from './json-session-store.js';

export { DEFAULT_SESSIONS_DIR, JsonSessionStore } from './json-session-store.js';
export type { JsonSessionStoreOptions } from './json-session-store.js';
export { migrateSessionHistory } from './migrate-session-history.js';
export type { MigrateSessionHistoryResult } from './migrate-session-history.js';
export { historyFromMessages, parseSessionRecord, SessionRecordError } from './session-record.js';
export type { JsonSessionRecord } from './session-record.js';
export { assertValidSessionId, InvalidSessionIdError, isValidSessionId } from './session-id.js';
export { writeFileAtomic } from './atomic-write.js';

/**
 * Provides `SessionStore`: one JSON file per session under `baseDir` (default
 * `~/.tessera/sessions`).
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own
 * `JsonSessionStore` when `SessionStore` is first resolved, and nothing touches the disk
 * before the first save. Files `list()` skips go to the kernel's `Diagnostics` reporter
 * (`TESSERA_SESSION_STORE`) unless `onDiagnostic` is given. Pass a store instance instead of
 * options to keep a handle on it: that instance is yours, bound as it is, and shared by every
 * kernel the value is composed into.
 */
export function jsonSessionStore(options: JsonSessionStoreOptions | JsonSessionStore = {}): Plugin {
  const given = options instanceof JsonSessionStore ? options : undefined;
  const settings: JsonSessionStoreOptions | undefined = given ? undefined : { ...(options as JsonSessionStoreOptions) };
  if (settings) checkOptions(settings);
  return definePlugin({
    name: 'session-store-json',
    provides: [SessionStore],
    optional: [Diagnostics],
    register({ bind }) {
      if (given) {
        bind(SessionStore).toConstantValue(given);
        return;
      }
      bind(SessionStore)
        .toResolvedValue(
          (diagnostics: DiagnosticsReporter | undefined) =>
            new JsonSessionStore({
              ...settings,
              onDiagnostic: settings?.onDiagnostic ?? ((diagnostic) => (diagnostics ?? processWarningDiagnostics).report(skippedFileReport(diagnostic))),
            }),
          [{ serviceIdentifier: Diagnostics, optional: true }],
        )
        .inSingletonScope();
    },
  });
}

function checkOptions(options: JsonSessionStoreOptions): void {
  const invalid = (option: string, problem: string): PluginOptionsError => new PluginOptionsError('jsonSessionStore', 'session-store-json', option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object or a JsonSessionStore');
  if (options.baseDir !== undefined && (typeof options.baseDir !== 'string' || options.baseDir === '')) throw invalid('baseDir', 'must be a non-empty path');
  if (options.onDiagnostic !== undefined && typeof options.onDiagnostic !== 'function') throw invalid('onDiagnostic', 'must be a function');
}
