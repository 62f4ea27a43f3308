import { describe, expect, it } from 'vitest';
import { modelPrice, usageCostUsd } from './pricing.js';

describe('model prices', () => {
  it('prices usage per million tokens, cache reads and writes included', () => {
    expect(usageCostUsd('claude-opus-4-5-20251101', { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 })).toBeCloseTo(5 + 25 + 0.5 + 6.25, 10);
    expect(usageCostUsd('claude-opus-4-1', { inputTokens: 2_000, outputTokens: 0 })).toBeCloseTo(0.03, 10);
    expect(usageCostUsd('gpt-4o-mini-2024-07-18', { inputTokens: 1_000_000, outputTokens: 0 })).toBeCloseTo(0.15, 10);
    // gpt-4o-mini is not priced as gpt-4o.
    expect(modelPrice('gpt-4o-mini')?.input).toBe(0.15);
    expect(modelPrice('gpt-4o')?.input).toBe(2.5);
  });

  it('knows no price for a model it has no list price for', () => {
    expect(modelPrice('llama3:8b')).toBeUndefined();
    expect(usageCostUsd('my-gateway/model', { inputTokens: 10, outputTokens: 10 })).toBeUndefined();
  });
});
