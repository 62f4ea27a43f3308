import type { Provider } from './provider.js';
import { createToken } from './token.js';

/** A provider profile from settings (`providers.<name>`), after `$ENV:` substitution. */
export interface ProviderProfile {
  /** `anthropic`, `openai`, … — picks the factory. */
  type: string;
  model?: string;
  apiKey?: string;
  baseURL?: string;
  /** Milliseconds. */
  timeout?: number;
  options?: Record<string, unknown>;
}

/** Builds a Provider from a profile of its `type`. Provider plugins contribute one each. */
export interface ProviderFactory {
  readonly type: string;
  /** Builds a new provider from the profile; `profile.options` carries settings specific to the type. */
  create(profile: ProviderProfile): Provider;
}

/**
 * Contribution point: one factory per provider type, bound by `anthropicProviderFactory()`,
 * `openaiProviderFactory()`, …; `providerFromProfile()` picks the one whose `type` matches.
 */
export const ProviderFactory = createToken<ProviderFactory>('ProviderFactory');

/** What a model can take, for the context tracker. */
export interface ModelInfo {
  id: string;
  contextWindow: number;
  maxOutputTokens?: number;
}
