import { describe, expect, it } from 'vitest';
import type { AssistantMessage, Message } from '@tessera/contracts';
import { ContextWindowConfigurationError, ContextWindowTracker, usageTotal } from './context-window-tracker.js';
import { DEFAULT_CONTEXT_WINDOW, lookupModelContextWindow } from './model-windows.js';

const user = (text: string): Message => ({ role: 'user', content: text });
const reply = (text: string, usage?: AssistantMessage['usage']): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  state: 'complete',
  ...(usage ? { usage } : {}),
});
const estimate = (messages: Message[]): number =>
  Math.ceil(messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0) / 4);

describe('ContextWindowTracker', () => {
  it('estimates ceil(JSON length / 4) when no provider usage is known', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 1_000 });
    const history = [user('x'.repeat(400))];
    const state = tracker.updateFromHistory(history);
    expect(state).toMatchObject({ usedTokens: estimate(history), maxTokens: 1_000, exact: false });
    expect(state.usedPercentage).toBe(Math.round((estimate(history) / 1_000) * 10_000) / 100);
    expect(state.remainingPercentage).toBeCloseTo(100 - state.usedPercentage, 2);
    expect(tracker.getState()).toBe(state);
    expect(tracker.getContextState()).toBe(state);
  });

  it('treats usage on the last message as exact, including cached input', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 10_000 });
    const usage = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 3_000, cacheWriteTokens: 7 };
    const state = tracker.updateFromHistory([user('hi'), reply('hello', usage)]);
    expect(state).toMatchObject({ usedTokens: 3_127, exact: true });
    expect(usageTotal(usage)).toBe(3_127);
  });

  it('after later metadata-free messages uses max(estimate, latest usage), never a sum of usages', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 100_000 });
    const history: Message[] = [user('a'), reply('b', { inputTokens: 5_000, outputTokens: 10 }), user('c'), reply('d', { inputTokens: 6_000, outputTokens: 10 }), user('e')];
    expect(tracker.updateFromHistory(history)).toMatchObject({ usedTokens: 6_010, exact: false });
    const big = [...history, user('y'.repeat(100_000))];
    expect(tracker.updateFromHistory(big)).toMatchObject({ usedTokens: estimate(big), exact: false });
  });

  it('counts incrementally and rescans when the history is replaced', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 100_000 });
    const history: Message[] = [user('one')];
    tracker.updateFromHistory(history);
    history.push(reply('two'), user('three'));
    expect(tracker.updateFromHistory(history).usedTokens).toBe(estimate(history));
    const replaced: Message[] = [reply('[Context Summary] short')];
    expect(tracker.updateFromHistory(replaced).usedTokens).toBe(estimate(replaced));
    const shrunk = history.slice(0, 1);
    expect(tracker.updateFromHistory(shrunk).usedTokens).toBe(estimate(shrunk));
  });

  it('does not serialise an already counted message again', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 100_000 });
    let reads = 0;
    const counted = { role: 'user', get content() { reads += 1; return 'watched'; } } as unknown as Message;
    const history: Message[] = [counted];
    tracker.updateFromHistory(history);
    for (let round = 0; round < 10; round++) {
      history.push(user(`round ${round}`));
      tracker.updateFromHistory(history);
    }
    expect(reads).toBe(2); // the image check and JSON.stringify, once
  });

  it('counts an image as a fixed cost instead of its base64 length', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 100_000 });
    const image: Message = { role: 'user', content: [{ type: 'image', data: 'A'.repeat(1_000_000), mediaType: 'image/png' }] };
    expect(tracker.updateFromHistory([image]).usedTokens).toBeLessThan(2_000);
  });

  it('shouldAutoCompact compares against the threshold fraction; false never compacts', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 100 });
    tracker.updateFromHistory([reply('x', { inputTokens: 83, outputTokens: 0 })]);
    expect(tracker.shouldAutoCompact()).toBe(false);
    expect(tracker.shouldAutoCompact(0.83)).toBe(true);
    tracker.updateFromHistory([reply('x', { inputTokens: 84, outputTokens: 0 })]);
    expect(tracker.shouldAutoCompact()).toBe(true);
    expect(tracker.shouldAutoCompact(false)).toBe(false);
    tracker.setAutoCompactThreshold(false);
    expect(tracker.getAutoCompactThreshold()).toBe(false);
    expect(tracker.shouldAutoCompact()).toBe(false);
  });

  it('rejects thresholds outside (0, 1] and bad window sizes with a typed error', () => {
    for (const bad of [0, -0.1, 1.01, Number.NaN, '0.5']) {
      expect(() => new ContextWindowTracker({ autoCompactThreshold: bad as number })).toThrow(ContextWindowConfigurationError);
      expect(() => new ContextWindowTracker().setAutoCompactThreshold(bad as number)).toThrow(/autoCompactThreshold/);
      expect(() => new ContextWindowTracker().shouldAutoCompact(bad as number)).toThrow(/\(0, 1\]/);
    }
    expect(() => new ContextWindowTracker({ autoCompactThreshold: 1 })).not.toThrow();
    expect(() => new ContextWindowTracker({ maxTokens: 0 })).toThrow(/maxTokens/);
  });

  it('caps the percentage at 100 and reset() forgets everything', () => {
    const tracker = new ContextWindowTracker({ maxTokens: 10 });
    expect(tracker.updateFromHistory([reply('x', { inputTokens: 50, outputTokens: 0 })]).usedPercentage).toBe(100);
    tracker.reset();
    expect(tracker.getState()).toMatchObject({ usedTokens: 0, usedPercentage: 0, exact: false });
    expect(tracker.updateFromHistory([user('a')]).usedTokens).toBe(estimate([user('a')]));
  });
});

describe('model window table', () => {
  it('knows Claude, GPT and common open models, and falls back to 200k', () => {
    expect(lookupModelContextWindow('claude-sonnet-4-5')).toBe(200_000);
    expect(lookupModelContextWindow('claude-3-5-haiku-latest')).toBe(200_000);
    expect(lookupModelContextWindow('gpt-4o-mini')).toBe(128_000);
    expect(lookupModelContextWindow('gpt-4.1')).toBe(1_047_576);
    expect(lookupModelContextWindow('gpt-4')).toBe(8_192);
    expect(lookupModelContextWindow('o3-mini')).toBe(200_000);
    expect(lookupModelContextWindow('meta-llama/Llama-3.1-8B-Instruct')).toBe(131_072);
    expect(lookupModelContextWindow('qwen2.5-coder:7b')).toBe(32_768);
    expect(lookupModelContextWindow('deepseek-r1')).toBe(131_072);
    expect(lookupModelContextWindow('something-new')).toBeUndefined();
    expect(new ContextWindowTracker({ model: 'something-new' }).maxTokens).toBe(DEFAULT_CONTEXT_WINDOW);
    expect(new ContextWindowTracker({ model: 'gpt-4o' }).maxTokens).toBe(128_000);
  });
});
