import { ContextWindow, Provider, type ContextWindowFactory } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import {
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

/** Provides `ContextWindow`: a factory making one `ContextWindowTracker` per session. */
export function contextWindow(options: ContextWindowPluginOptions = {}): Plugin {
  // Fail at composition time, not on the first session.
  if (options.autoCompactThreshold !== undefined) validateAutoCompactThreshold(options.autoCompactThreshold);
  if (options.maxTokens !== undefined) new ContextWindowTracker({ maxTokens: options.maxTokens });
  return definePlugin({
    name: 'context-window',
    provides: [ContextWindow],
    register({ bind }) {
      bind(ContextWindow)
        .toResolvedValue(
          (provider: Provider | undefined): ContextWindowFactory =>
            ({ model }) =>
              new ContextWindowTracker({
                model,
                maxTokens: resolveContextWindowSize(model, provider, options),
                autoCompactThreshold: options.autoCompactThreshold,
              }),
          [{ serviceIdentifier: Provider, optional: true }],
        )
        .inSingletonScope();
    },
  });
}
