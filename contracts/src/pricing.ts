import type { ProviderUsage } from './message.js';

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Public list prices by model name (the first pattern that matches wins). */
const PRICES: ReadonlyArray<readonly [RegExp, ModelPrice]> = [
  [/claude-(opus-4-[01]|opus-4$|opus-4-2|3-opus)/, { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 }],
  [/claude-opus-4-[5-9]/, { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 }],
  [/claude-(sonnet-4|3-7-sonnet|3-5-sonnet)/, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }],
  [/claude-haiku-4/, { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 }],
  [/claude-3-5-haiku/, { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 }],
  [/^gpt-4o-mini/, { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 }],
  [/^gpt-4o/, { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 0 }],
];

/** The list price of `model`, or `undefined` when Tessera does not know it (a gateway's alias, a local model). */
export function modelPrice(model: string): ModelPrice | undefined {
  for (const [pattern, price] of PRICES) if (pattern.test(model)) return price;
  return undefined;
}

/** What `usage` costs on `model` in USD; `undefined` when the model's price is not known. */
export function usageCostUsd(model: string, usage: ProviderUsage): number | undefined {
  const price = modelPrice(model);
  if (!price) return undefined;
  return (
    (usage.inputTokens * price.input + usage.outputTokens * price.output + (usage.cacheReadTokens ?? 0) * price.cacheRead + (usage.cacheWriteTokens ?? 0) * price.cacheWrite) /
    1_000_000
  );
}
