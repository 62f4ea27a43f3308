import { ContextWindow, Provider, type ContextWindowFactory } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import {
  ContextWindowConfigurationError,
  ContextWindowTracker,
  validateAutoCompactThreshold,
  type TAutoCompactThreshold,
} from './context-window-tracker.js';
import { DEFAULT_CONTEXT_WINDOW, lookupModelContextWindow } from './model-windows.js';

export {
  ContextWindowConfigurationError,
  ContextWindowTracker,
  DEFAULT_AUTO_COMPACT_THRESHOLD,
  usageTotal,
  validateAutoCompactThreshold,
} from './context-window-tracker.js';
export type { ContextWindowTrackerOptions, ContextWindowTrackerState, TAutoCompactThreshold } from './context-window-tracker.js';
export { DEFAULT_CONTEXT_WINDOW, lookupModelContextWindow } from './model-windows.js';

export interface ContextWindowPluginOptions {
  /** Fixed window size for every session, overriding the provider and the model table. */
  maxTokens?: number;
  /** Window sizes by model id, consulted before the provider and the built-in table. */
  models?: Readonly<Record<string, number>>;
  /** The trackers' own default for `shouldAutoCompact()` without an argument. The Session passes its own. */
  autoCompactThreshold?: TAutoCompactThreshold;
}

/**
 * Resolves a session's window: explicit option, then `provider.getModelInfo(model)`, then
 * the built-in table, then 200k. A provider whose `getModelInfo` throws is treated as not
 * knowing the model.
 */
export function resolveContextWindowSize(
  model: string | undefined,
  provider: Provider | undefined,
  options: Pick<ContextWindowPluginOptions, 'maxTokens' | 'models'> = {},
): number {
  if (options.maxTokens !== undefined) return options.maxTokens;
  if (model && options.models?.[model] !== undefined) return options.models[model]!;
  let fromProvider: number | undefined;
  try {
    fromProvider = provider?.getModelInfo?.(model)?.contextWindow;
  } catch {
    fromProvider = undefined;
  }
  if (typeof fromProvider === 'number' && Number.isInteger(fromProvider) && fromProvider > 0) return fromProvider;
  return lookupModelContextWindow(model) ?? DEFAULT_CONTEXT_WINDOW;
}

/**
 * Provides `ContextWindow`: a factory making one `ContextWindowTracker` per session.
 *
 * The factory only checks and keeps `options`. The kernel resolves `ContextWindow` once per
 * session it creates, and each resolution sizes that session's windows from the `Provider`
 * bound at that moment (optional: without one, the options and the model table decide), so
 * a `rebind(Provider)` after `createKernel` reaches sessions created afterwards.
 */
export function contextWindow(options: ContextWindowPluginOptions = {}): Plugin {
  // Fail at composition time, not on the first session.
  const settings = checkOptions(options);
  return definePlugin({
    name: 'context-window',
    provides: [ContextWindow],
    optional: [Provider],
    register({ bind }) {
      // Transient on purpose: the factory is a closure over the provider bound when a session
      // is created, so it must be resolved again for each session.
      bind(ContextWindow).toResolvedValue(
        (provider: Provider | undefined): ContextWindowFactory =>
          ({ model }) =>
            new ContextWindowTracker({
              model,
              maxTokens: resolveContextWindowSize(model, provider, settings),
              autoCompactThreshold: settings.autoCompactThreshold,
            }),
        [{ serviceIdentifier: Provider, optional: true }],
      );
    },
  });
}

function checkOptions(options: ContextWindowPluginOptions): ContextWindowPluginOptions {
  if (typeof options !== 'object' || options === null) throw new ContextWindowConfigurationError('options', `expected an object, got ${String(options)}.`);
  if (options.autoCompactThreshold !== undefined) validateAutoCompactThreshold(options.autoCompactThreshold);
  const positive = (field: string, value: unknown): void => {
    if (!(typeof value === 'number' && Number.isInteger(value) && value > 0)) {
      throw new ContextWindowConfigurationError(field, `expected a positive integer number of tokens, got ${String(value)}.`);
    }
  };
  if (options.maxTokens !== undefined) positive('maxTokens', options.maxTokens);
  if (options.models !== undefined) {
    if (typeof options.models !== 'object' || options.models === null) throw new ContextWindowConfigurationError('models', 'expected { [modelId]: tokens }.');
    for (const [model, tokens] of Object.entries(options.models)) positive(`models.${model}`, tokens);
  }
  return { ...options, ...(options.models === undefined ? {} : { models: { ...options.models } }) };
}
