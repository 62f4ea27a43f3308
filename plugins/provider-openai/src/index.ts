import { Provider, ProviderFactory, TesseraError } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { checkOpenAIProviderOptions, OpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';
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
export type { RetryPolicy, Sleep } from '@tessera/provider-kit';
export { createProviderFromProfile, providerFromProfile, ProviderProfileError } from './provider-from-profile.js';
export type { ProviderSelectionOptions } from './provider-from-profile.js';

/**
 * Provides `Provider` with an `OpenAIProvider` and contributes the `openai`
 * `ProviderFactory`.
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own provider
 * when `Provider` is first resolved, so the same plugin value composes into several kernels.
 * `OPENAI_API_KEY` is read then, not here; without a key (or a `baseURL` for a local server)
 * the provider's first call fails with an `auth` error that says what to set. Pass an instance
 * instead of options to keep a handle on it: that instance is yours, bound as it is, and
 * shared by every kernel the value is composed into.
 */
export function openaiProvider(options: OpenAIProviderOptions | OpenAIProvider = {}): Plugin {
  const given = options instanceof OpenAIProvider ? options : undefined;
  const settings: OpenAIProviderOptions | undefined = given ? undefined : { ...(options as OpenAIProviderOptions) };
  if (settings) checkOpenAIProviderOptions(settings);
  return definePlugin({
    name: 'provider-openai',
    provides: [Provider],
    contributes: [ProviderFactory],
    register({ bind }) {
      if (given) bind(Provider).toConstantValue(given);
      else bind(Provider).toResolvedValue(() => new OpenAIProvider(settings)).inSingletonScope();
      bind(ProviderFactory).toResolvedValue(() => new OpenAIProviderFactory()).inSingletonScope();
    },
  });
}

/**
 * Contributes only `ProviderFactory` for OpenAI-compatible profiles: `openai` by default, or
 * the given types (e.g. `['openai', 'lmstudio', 'deepseek']`), all on this transport.
 * `types` and `defaults` are checked here; each kernel builds its own factories.
 */
export function openaiProviderFactory(types: readonly string[] = ['openai'], defaults: Partial<OpenAIProviderOptions> = {}): Plugin {
  if (!Array.isArray(types) || types.length === 0 || types.some((type) => typeof type !== 'string' || type === '')) {
    throw new TesseraError(`openaiProviderFactory: types must be a non-empty list of profile types (got ${JSON.stringify(types)}).`, {
      code: 'invalid_plugin_options',
      category: 'configuration',
      recoverable: false,
      details: { plugin: 'provider-openai-factory', option: 'types' },
    });
  }
  const kept: readonly string[] = [...types];
  const keptDefaults: Partial<OpenAIProviderOptions> = { ...defaults };
  checkOpenAIProviderOptions(keptDefaults);
  return definePlugin({
    name: `provider-openai-factory${kept.length === 1 && kept[0] === 'openai' ? '' : `:${kept.join(',')}`}`,
    contributes: [ProviderFactory],
    register({ bind }) {
      for (const type of kept) bind(ProviderFactory).toResolvedValue(() => new OpenAIProviderFactory(type, keptDefaults)).inSingletonScope();
    },
  });
}
