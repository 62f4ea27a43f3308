import { ProviderError, type ProviderErrorOptions } from '@tessera/contracts';

export type OpenAIProviderErrorOptions = Omit<ProviderErrorOptions, 'provider'> & {
  /** The provider's name (`openai`, or the profile's label such as `lmstudio`). */
  provider?: string;
};

/** A failed Chat Completions call: a `ProviderError` (provider `openai` unless named). */
export class OpenAIProviderError extends ProviderError {
  constructor(message: string, options: OpenAIProviderErrorOptions) {
    super(message, { ...options, provider: options.provider ?? 'openai' });
  }
}
