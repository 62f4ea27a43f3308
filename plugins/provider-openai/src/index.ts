import { Provider, ProviderFactory } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';
import { OpenAIProviderFactory } from './openai-provider-factory.js';

export { OpenAIProvider } from './openai-provider.js';
export type { OpenAIProviderOptions } from './openai-provider.js';
export { OpenAIProviderFactory } from './openai-provider-factory.js';
export { OpenAIProviderError } from './openai-provider-error.js';
export { ProviderError, RETRYABLE_CODES } from '@tessera/contracts';
export type { ProviderErrorCode } from '@tessera/contracts';
export { OPENAI_MODELS, lookupOpenAIModel } from './openai-model-catalogue.js';
export type { ModelCatalogue } from './openai-model-catalogue.js';
export { buildOpenAIRequest } from './openai-request.js';
export type { RetryPolicy, Sleep } from '@tessera/contracts';
export { createProviderFromProfile, providerFromProfile, ProviderProfileError } from './provider-from-profile.js';
export type { ProviderSelectionOptions } from './provider-from-profile.js';

/**
 * Provides `Provider` with an `OpenAIProvider` and contributes the `openai`
 * `ProviderFactory`. Pass an instance instead of options to keep a handle on it.
 */
export function openaiProvider(options: OpenAIProviderOptions | OpenAIProvider): Plugin {
  const provider = options instanceof OpenAIProvider ? options : new OpenAIProvider(options);
  return definePlugin({
    name: 'provider-openai',
    provides: [Provider],
    contributes: [ProviderFactory],
    register({ bind }) {
      bind(Provider).toConstantValue(provider);
      bind(ProviderFactory).toConstantValue(new OpenAIProviderFactory());
    },
  });
}

/**
 * Contributes only `ProviderFactory` for OpenAI-compatible profiles: `openai` by default, or
 * the given types (e.g. `['openai', 'lmstudio', 'deepseek']`), all on this transport.
 */
export function openaiProviderFactory(types: readonly string[] = ['openai'], defaults: Partial<OpenAIProviderOptions> = {}): Plugin {
  return definePlugin({
    name: `provider-openai-factory${types.length === 1 && types[0] === 'openai' ? '' : `:${types.join(',')}`}`,
    contributes: [ProviderFactory],
    register({ bind }) {
      for (const type of types) bind(ProviderFactory).toConstantValue(new OpenAIProviderFactory(type, defaults));
    },
  });
}
