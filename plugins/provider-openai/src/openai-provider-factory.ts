import type { Provider, ProviderFactory, ProviderProfile } from '@tessera/contracts';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';

const PROFILE_OPTION_KEYS = [
  'name',
  'maxTokens',
  'streamUsage',
  'extraBody',
  'headers',
  'maxRetries',
  'retryBaseDelayMs',
  'maxRetryDelayMs',
  'contextWindow',
  'models',
] as const satisfies ReadonlyArray<keyof OpenAIProviderOptions>;

/**
 * Builds an `OpenAIProvider` from a settings profile. `apiKey`, `baseURL`, `model` and
 * `timeout` come from the profile's fields; `options` carries the documented extras
 * (`name`, `maxTokens`, `streamUsage`, `extraBody`, `headers`, `maxRetries`, `contextWindow`,
 * `models`). `type` defaults to `openai`; pass another (`lmstudio`, `deepseek`…) to serve
 * profiles of that type with the same transport.
 */
export class OpenAIProviderFactory implements ProviderFactory {
  constructor(
    readonly type: string = 'openai',
    private readonly defaults: Partial<OpenAIProviderOptions> = {},
  ) {}

  create(profile: ProviderProfile): Provider {
    const extras = (profile.options ?? {}) as Partial<OpenAIProviderOptions>;
    const picked: Record<string, unknown> = {};
    for (const key of PROFILE_OPTION_KEYS) if (extras[key] !== undefined) picked[key] = extras[key];
    const model = profile.model ?? this.defaults.model;
    return new OpenAIProvider({
      ...(this.type === 'openai' ? {} : { name: this.type }),
      ...this.defaults,
      ...(picked as Partial<OpenAIProviderOptions>),
      ...(profile.apiKey === undefined ? {} : { apiKey: profile.apiKey }),
      ...(profile.baseURL === undefined ? {} : { baseURL: profile.baseURL }),
      ...(profile.timeout === undefined ? {} : { timeout: profile.timeout }),
      ...(model === undefined ? {} : { model }),
    });
  }
}
