import { Provider, ProviderFactory } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { AnthropicProvider, checkAnthropicProviderOptions, type AnthropicProviderOptions } from './anthropic-provider.js';
import { AnthropicProviderFactory } from './anthropic-provider-factory.js';

export { AnthropicProvider } from './anthropic-provider.js';
export type { AnthropicProviderOptions, AnthropicWebSearchOptions } from './anthropic-provider.js';
export { AnthropicProviderFactory } from './anthropic-provider-factory.js';
export { AnthropicProviderError } from './anthropic-provider-error.js';
export { ProviderError, RETRYABLE_CODES } from '@tessera/contracts';
export type { ProviderErrorCode } from '@tessera/contracts';
export { ANTHROPIC_MODELS, lookupAnthropicModel } from './anthropic-model-catalogue.js';
export type { ModelCatalogue } from './anthropic-model-catalogue.js';
export { buildAnthropicRequest } from './anthropic-request.js';
export type { RetryPolicy, Sleep } from '@tessera/provider-kit';

/**
 * Provides `Provider` with an `AnthropicProvider` and contributes the `anthropic`
 * `ProviderFactory`.
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own provider
 * when `Provider` is first resolved, so the same plugin value composes into several kernels.
 * The API key is read then, not here; without one the provider's first call fails with an
 * `auth` error that says what to set. Pass an instance instead of options to keep a handle on
 * it: that instance is yours, bound as it is, and shared by every kernel the value is
 * composed into.
 */
export function anthropicProvider(options: AnthropicProviderOptions | AnthropicProvider = {}): Plugin {
  const given = options instanceof AnthropicProvider ? options : undefined;
  const settings: AnthropicProviderOptions | undefined = given ? undefined : { ...(options as AnthropicProviderOptions) };
  if (settings) checkAnthropicProviderOptions(settings);
  return definePlugin({
    name: 'provider-anthropic',
    provides: [Provider],
    contributes: [ProviderFactory],
    register({ bind }) {
      if (given) bind(Provider).toConstantValue(given);
      else bind(Provider).toResolvedValue(() => new AnthropicProvider(settings)).inSingletonScope();
      bind(ProviderFactory).toResolvedValue(() => new AnthropicProviderFactory()).inSingletonScope();
    },
  });
}

/**
 * Contributes only the `anthropic` `ProviderFactory`, for compositions where a settings
 * profile picks the provider (see `providerFromProfile` in `@tessera/plugin-provider-openai`).
 * `defaults` are checked here and applied underneath each profile.
 */
export function anthropicProviderFactory(defaults: AnthropicProviderOptions = {}): Plugin {
  const kept: AnthropicProviderOptions = { ...defaults };
  checkAnthropicProviderOptions(kept);
  return definePlugin({
    name: 'provider-anthropic-factory',
    contributes: [ProviderFactory],
    register({ bind }) {
      bind(ProviderFactory).toResolvedValue(() => new AnthropicProviderFactory(kept)).inSingletonScope();
    },
  });
}
