import type { Provider, ProviderFactory, ProviderProfile } from '@tessera/contracts';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';

/**
 * Builds an `AnthropicProvider` from a settings profile (`type: "anthropic"`). `apiKey`,
 * `baseURL`, `model` and `timeout` come from the profile's own fields; `options` carries the
 * provider-owned extras (`thinkingBudget`, `promptCaching`, `webSearch`, `headers`, `maxTokens`,
 * `maxRetries`, `models`). `defaults` are applied underneath the profile.
 */
export class AnthropicProviderFactory implements ProviderFactory {
  readonly type = 'anthropic';

  constructor(private readonly defaults: AnthropicProviderOptions = {}) {}

  create(profile: ProviderProfile): Provider {
    const extras = (profile.options ?? {}) as Partial<AnthropicProviderOptions>;
    return new AnthropicProvider({
      ...this.defaults,
      ...pick(extras),
      ...(profile.apiKey === undefined ? {} : { apiKey: profile.apiKey }),
      ...(profile.baseURL === undefined ? {} : { baseURL: profile.baseURL }),
      ...(profile.model === undefined ? {} : { model: profile.model }),
      ...(profile.timeout === undefined ? {} : { timeout: profile.timeout }),
    });
  }
}

const PROFILE_OPTION_KEYS = [
  'authToken',
  'maxTokens',
  'thinkingBudget',
  'promptCaching',
  'webSearch',
  'headers',
  'maxRetries',
  'retryBaseDelayMs',
  'maxRetryDelayMs',
  'models',
] as const satisfies ReadonlyArray<keyof AnthropicProviderOptions>;

/** Only JSON-safe, documented keys pass from settings; `client`/`sleep` stay code-only. */
function pick(extras: Partial<AnthropicProviderOptions>): Partial<AnthropicProviderOptions> {
  const picked: Record<string, unknown> = {};
  for (const key of PROFILE_OPTION_KEYS) if (extras[key] !== undefined) picked[key] = extras[key];
  return picked as Partial<AnthropicProviderOptions>;
}
