import type { ModelInfo } from '@tessera/contracts';

/** Context-window facts by model id; a user-supplied entry (option `models`) wins. */
export type ModelCatalogue = Record<string, Omit<ModelInfo, 'id'>>;

/**
 * Known Claude models. Every current Claude model takes a 200k-token context by default
 * (larger windows are opt-in betas), so unlisted `claude-` ids fall back to that window.
 */
export const ANTHROPIC_MODELS: ModelCatalogue = {
  'claude-opus-4-6': { contextWindow: 200_000 },
  'claude-sonnet-4-6': { contextWindow: 200_000 },
  'claude-opus-4-1': { contextWindow: 200_000, maxOutputTokens: 32_000 },
  'claude-opus-4-0': { contextWindow: 200_000, maxOutputTokens: 32_000 },
  'claude-sonnet-4-0': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'claude-sonnet-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'claude-haiku-4-5': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'claude-3-7-sonnet-latest': { contextWindow: 200_000, maxOutputTokens: 64_000 },
  'claude-3-5-haiku-latest': { contextWindow: 200_000, maxOutputTokens: 8_192 },
};

const CLAUDE_DEFAULT: Omit<ModelInfo, 'id'> = { contextWindow: 200_000 };

/** Looks a model up: exact id, then the id without a `-YYYYMMDD` date suffix, then the Claude default. */
export function lookupAnthropicModel(id: string, overrides: ModelCatalogue = {}): ModelInfo | undefined {
  const undated = id.replace(/-\d{8}$/, '');
  const entry = overrides[id] ?? overrides[undated] ?? ANTHROPIC_MODELS[id] ?? ANTHROPIC_MODELS[undated];
  if (entry !== undefined) return { id, ...entry };
  return id.startsWith('claude-') ? { id, ...CLAUDE_DEFAULT } : undefined;
}
