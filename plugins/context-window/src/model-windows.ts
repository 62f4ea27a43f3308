/**
 * Context-window sizes (input + output tokens a model can hold) for models a coding agent
 * is commonly pointed at. Used when the provider cannot answer `getModelInfo()` itself.
 * Patterns are tried in order, so more specific ones come first. Figures are the vendors'
 * published defaults (no beta headers, no extended-context variants).
 */
const MODEL_WINDOWS: ReadonlyArray<readonly [RegExp, number]> = [
  // Anthropic
  [/claude-(opus|sonnet|haiku)-4/, 200_000],
  [/claude-(3-7|3-5|3)-/, 200_000],
  [/claude-(3\.7|3\.5)/, 200_000],
  [/claude-2/, 100_000],
  [/claude/, 200_000],
  // OpenAI
  [/gpt-5/, 400_000],
  [/gpt-4\.1/, 1_047_576],
  [/gpt-4o/, 128_000],
  [/gpt-4-turbo|gpt-4-1106|gpt-4-0125/, 128_000],
  [/gpt-4-32k/, 32_768],
  [/gpt-4/, 8_192],
  [/gpt-3\.5-turbo/, 16_385],
  [/(^|\/)o[134](-mini|-pro)?($|-)/, 200_000],
  [/gpt-oss/, 131_072],
  // Google
  [/gemini-1\.5-pro/, 2_097_152],
  [/gemini-(1\.5|2\.0|2\.5)/, 1_048_576],
  [/gemma-3/, 131_072],
  [/gemma-2/, 8_192],
  // Open-weight families (default context of the usual serving configuration)
  [/llama-?3\.[123]|llama-?4/, 131_072],
  [/llama-?3/, 8_192],
  [/qwen3-coder/, 262_144],
  [/qwen-?3/, 131_072],
  [/qwen-?2\.5/, 32_768],
  [/deepseek/, 131_072],
  [/codestral/, 262_144],
  [/devstral/, 131_072],
  [/mistral-large|mistral-medium|mistral-small|ministral/, 131_072],
  [/mixtral/, 32_768],
  [/mistral/, 32_768],
  [/phi-?4/, 16_384],
  [/phi-?3/, 131_072],
  [/kimi-k2/, 131_072],
  [/glm-4/, 131_072],
];

/** Used when neither the provider nor the table knows the model (the spec's default). */
export const DEFAULT_CONTEXT_WINDOW = 200_000;

/** The table's window for `model`, or `undefined` when no entry matches. */
export function lookupModelContextWindow(model: string | undefined): number | undefined {
  if (!model) return undefined;
  const id = model.toLowerCase();
  for (const [pattern, window] of MODEL_WINDOWS) if (pattern.test(id)) return window;
  return undefined;
}
