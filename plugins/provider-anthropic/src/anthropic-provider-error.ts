import { ProviderError, type ProviderErrorOptions } from '@tessera/contracts';

export type AnthropicProviderErrorOptions = Omit<ProviderErrorOptions, 'provider'>;

/** A failed Anthropic call: a `ProviderError` whose provider is `anthropic`. */
export class AnthropicProviderError extends ProviderError {
  constructor(message: string, options: AnthropicProviderErrorOptions) {
    super(message, { ...options, provider: 'anthropic' });
  }
}
