import { Diagnostics, processWarningDiagnostics, SessionStore, SessionTree, type DiagnosticReport, type DiagnosticsReporter } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import { JsonlSessionStore, type JsonlSessionStoreOptions } from './jsonl-session-store.js';
import { JsonlSessionTree } from './jsonl-session-tree.js';

/**
 * Provides `SessionStore` and `SessionTree` backed by JSONL session trees, both over one
 * `JsonlSessionStore` per kernel. Replaces the in-memory store in `testPreset({ replace })`.
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own
 * `JsonlSessionStore` when `SessionStore` or `SessionTree` is first resolved (nothing touches
 * the disk before the first write), and closes it when the kernel shuts down. Warnings
 * (`onWarning`) go to the kernel's `Diagnostics` reporter (`TESSERA_SESSION_WARNING`) unless
 * `onWarning` is given.
 *
 * Pass a store instance instead of options to keep a handle on it: that instance is yours,
 * bound as it is (both tokens use it) and shared by every kernel the value is composed into;
 * the kernel only closes its open files at shutdown (`close()`; the store stays usable,
 * later saves reopen them).
 */
export function jsonlSessionStore(options: JsonlSessionStoreOptions | JsonlSessionStore = {}): Plugin {
  const given = options instanceof JsonlSessionStore ? options : undefined;
  const settings: JsonlSessionStoreOptions | undefined = given ? undefined : { ...(options as JsonlSessionStoreOptions) };
  if (settings) checkOptions(settings);
  const diagnostics = [{ serviceIdentifier: Diagnostics, optional: true }] as const;
  return definePlugin({
    name: 'session-store-jsonl',
    provides: [SessionStore, SessionTree],
    optional: [Diagnostics],
    register({ bind }) {
      if (given) {
        bind(SessionStore).toConstantValue(given);
        bind(SessionTree).toConstantValue(new JsonlSessionTree(given));
        return;
      }
      // This kernel's store, built by whichever token is resolved first.
      let store: JsonlSessionStore | undefined;
      let closedWithSessionStore = false;
      const build = (reporter: DiagnosticsReporter | undefined): JsonlSessionStore =>
        (store ??= new JsonlSessionStore({
          ...settings,
          onWarning: settings?.onWarning ?? ((message, details) => (reporter ?? processWarningDiagnostics).report(sessionWarningReport(message, details))),
        }));
      bind(SessionStore)
        .toResolvedValue((reporter: DiagnosticsReporter | undefined) => {
          closedWithSessionStore = true;
          return build(reporter);
        }, [...diagnostics])
        .inSingletonScope()
        // Sessions save during kernel shutdown before services are released, so closing here loses nothing.
        .onDeactivation((resolved) => (resolved as JsonlSessionStore).close());
      bind(SessionTree)
        .toResolvedValue((reporter: DiagnosticsReporter | undefined) => new JsonlSessionTree(build(reporter)), [...diagnostics])
        .inSingletonScope()
        // Closed once: by the SessionStore binding when that was resolved, else here.
        .onDeactivation((tree) => (closedWithSessionStore ? undefined : (tree as JsonlSessionTree).store.close()));
    },
    async shutdown() {
      await given?.close();
    },
  });
}

function checkOptions(options: JsonlSessionStoreOptions): void {
  const invalid = (option: string, problem: string): PluginOptionsError => new PluginOptionsError('jsonlSessionStore', 'session-store-jsonl', option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object or a JsonlSessionStore');
  if (options.agentDir !== undefined && (typeof options.agentDir !== 'string' || options.agentDir === '')) throw invalid('agentDir', 'must be a non-empty path');
  if (options.terminalId !== undefined && options.terminalId !== null && typeof options.terminalId !== 'string') throw invalid('terminalId', 'must be a string or null');
  for (const option of ['onWarning', 'redact'] as const) {
    if (options[option] !== undefined && typeof options[option] !== 'function') throw invalid(option, 'must be a function');
  }
}

/**
 * A store warning as a `Diagnostics` report (`TESSERA_SESSION_WARNING`). The file and line
 * travel in their own fields, so a message that starts with them loses that prefix.
 */
export function sessionWarningReport(message: string, details: Record<string, unknown> = {}): DiagnosticReport {
  const file = typeof details.file === 'string' ? details.file : undefined;
  const line = typeof details.line === 'number' ? details.line : undefined;
  const text = file !== undefined && message.startsWith(`${file}:`) ? message.slice(file.length).replace(/^(:\d+)?: /, '') : message;
  return {
    severity: 'warning',
    code: 'TESSERA_SESSION_WARNING',
    source: 'session-store-jsonl',
    message: text,
    ...(file === undefined ? {} : { file }),
    ...(line === undefined ? {} : { line }),
  };
}
