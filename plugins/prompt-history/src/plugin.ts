import { createToken, describeError, Diagnostics, processWarningDiagnostics, type DiagnosticsReporter } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, Stage, type Plugin } from '@tessera/kernel';
import { HistoryStorage, type HistoryStorageOptions } from './history-storage.js';

/** The kernel's prompt history (a `HistoryStorage`), provided by `promptHistory()`. */
export const PromptHistory = createToken<HistoryStorage>('PromptHistory');

/**
 * Provides `PromptHistory` and records every prompt a kernel session submits in it. It
 * observes `userPromptSubmit` (it never changes the prompt).
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own
 * `HistoryStorage` when a session submits its first prompt (the database is not opened, and
 * no directory made, before that) and closes it when the kernel shuts down. Failed inserts go
 * to the kernel's `Diagnostics` reporter (`TESSERA_HISTORY_WARNING`) unless `onWarning` is
 * given. Read the history with `kernel.get(PromptHistory)` (which opens it).
 *
 * Pass a `HistoryStorage` instead of options to read it elsewhere (a prompt picker): that
 * instance is yours, bound as it is and shared by every kernel the value is composed into;
 * the kernel waits for its pending inserts at shutdown but does not close it.
 *
 * Only sessions made by a kernel are recorded (they reach `PromptHistory` through their
 * services); a session built without one, such as a subagent's, is not.
 */
export function promptHistory(options: HistoryStorageOptions | HistoryStorage = {}): Plugin {
  const given = options instanceof HistoryStorage ? options : undefined;
  const settings: HistoryStorageOptions | undefined = given ? undefined : { ...(options as HistoryStorageOptions) };
  if (settings) checkOptions(settings);
  return definePlugin({
    name: 'prompt-history',
    provides: [PromptHistory],
    optional: [Diagnostics],
    register({ bind, hooks }) {
      if (given) bind(PromptHistory).toConstantValue(given);
      else {
        bind(PromptHistory)
          .toResolvedValue(
            (diagnostics: DiagnosticsReporter | undefined) =>
              new HistoryStorage({
                ...settings,
                onWarning:
                  settings?.onWarning ??
                  ((message) => (diagnostics ?? processWarningDiagnostics).report({ severity: 'warning', code: 'TESSERA_HISTORY_WARNING', message, source: 'prompt-history' })),
              }),
            [{ serviceIdentifier: Diagnostics, optional: true }],
          )
          .inSingletonScope()
          .onDeactivation((storage) => storage.close());
      }
      hooks.userPromptSubmit.tap({ name: 'prompt-history', stage: Stage.Observe }, ({ prompt, rawPrompt, session }) => {
        try {
          // What the user typed (recall brings back `/audit src`, not the skill prompt behind it).
          session.services.getOptional(PromptHistory)?.add(rawPrompt ?? prompt, session.cwd);
        } catch (error) {
          // The database could not be opened: recording is best effort, the turn goes on.
          (session.services.getOptional(Diagnostics) ?? processWarningDiagnostics).report({
            severity: 'warning',
            code: 'TESSERA_HISTORY_WARNING',
            message: `Could not open the prompt history: ${describeError(error)}`,
            source: 'prompt-history',
          });
        }
        return {};
      });
    },
    async shutdown() {
      await given?.flush();
    },
  });
}

function checkOptions(options: HistoryStorageOptions): void {
  const invalid = (option: string, problem: string): PluginOptionsError => new PluginOptionsError('promptHistory', 'prompt-history', option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object or a HistoryStorage');
  if (options.path !== undefined && (typeof options.path !== 'string' || options.path === '')) throw invalid('path', 'must be a non-empty path (or ":memory:")');
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') throw invalid('onWarning', 'must be a function');
}
