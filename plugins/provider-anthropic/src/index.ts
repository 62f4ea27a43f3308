import { Provider, ProviderFactory } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
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
export type { RetryPolicy, Sleep } from '@tessera/contracts';

/**
 * Provides `Provider` with an `AnthropicProvider` and contributes the `anthropic`
 * `ProviderFactory`. Pass an instance instead of options to keep a handle on it.
 */
export function anthropicProvider(options: AnthropicProviderOptions | AnthropicProvider = {}): Plugin {
  const provider = options instanceof AnthropicProvider ? options : new AnthropicProvider(options);
  return definePlugin({
    name: 'provider-anthropic',
    provides: [Provider],
    contributes: [ProviderFactory],
    register({ bind }) {
      bind(Provider).toConstantValue(provider);
      bind(ProviderFactory).toConstantValue(new AnthropicProviderFactory());
    },
  });
}

/**
 * Contributes only the `anthropic` `ProviderFactory`, for compositions where a settings
 * profile picks the provider (see `providerFromProfile` in `@tessera/plugin-provider-openai`).
 */
export function anthropicProviderFactory(defaults: AnthropicProviderOptions = {}): Plugin {
  return definePlugin({
    name: 'provider-anthropic-factory',
    contributes: [ProviderFactory],
    register({ bind }) {
      bind(ProviderFactory).toConstantValue(new AnthropicProviderFactory(defaults));
    },
  });
}
