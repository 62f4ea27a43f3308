import type { ModelInfo } from '@tessera/contracts';

/** Context-window facts by model id; a user-supplied entry (option `models`) wins. */
export type ModelCatalogue = Record<string, Omit<ModelInfo, 'id'>>;

/** OpenAI models with published windows. Local and third-party models come from options. */
export const OPENAI_MODELS: ModelCatalogue = {
  'gpt-4o': { contextWindow: 128_000, maxOutputTokens: 16_384 },
  'gpt-4o-mini': { contextWindow: 128_000, maxOutputTokens: 16_384 },
  'gpt-4.1': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  'gpt-4.1-mini': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  'gpt-4.1-nano': { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  o3: { contextWindow: 200_000, maxOutputTokens: 100_000 },
  'o4-mini': { contextWindow: 200_000, maxOutputTokens: 100_000 },
};

/** Exact id, then the id without a `-YYYY-MM-DD` snapshot suffix. */
export function lookupOpenAIModel(id: string, overrides: ModelCatalogue = {}): ModelInfo | undefined {
  const base = id.replace(/-\d{4}-\d{2}-\d{2}$/, '');
  const entry = overrides[id] ?? overrides[base] ?? OPENAI_MODELS[id] ?? OPENAI_MODELS[base];
  return entry === undefined ? undefined : { id, ...entry };
}
