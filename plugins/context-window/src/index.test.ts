import { describe, expect, it } from 'vitest';
import { ContextWindow, Provider, type IContextWindowState } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { ContextWindowTracker, contextWindow, resolveContextWindowSize } from './index.js';

describe('contextWindow plugin', () => {
  it('binds a factory that makes one tracker per session, sized from the model table', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [contextWindow()] }) });
    const factory = kernel.get(ContextWindow);
    const a = factory({ sessionId: 'a', model: 'gpt-4o' });
    const b = factory({ sessionId: 'b', model: 'gpt-4o' });
    expect(a).toBeInstanceOf(ContextWindowTracker);
    expect(a).not.toBe(b);
    expect(a.getState().maxTokens).toBe(128_000);
    await kernel.shutdown();
  });

  it('prefers provider.getModelInfo() and survives a provider that throws', async () => {
    const provider = new ScriptedProvider({ model: 'gpt-4o' });
    Object.assign(provider, { getModelInfo: (model?: string) => ({ id: model ?? 'x', contextWindow: 42_000 }) });
    const kernel = await createKernel({ plugins: testPreset({ provider, replace: [contextWindow()] }) });
    expect(kernel.createSession().getContextState()?.maxTokens).toBe(42_000);
    await kernel.shutdown();
    const throwing = { name: 'p', stream: async () => { throw new Error('x'); }, getModelInfo: () => { throw new Error('offline'); } } as Provider;
    expect(resolveContextWindowSize('claude-opus-4-1', throwing)).toBe(200_000);
    expect(resolveContextWindowSize('m', undefined, { models: { m: 9_000 } })).toBe(9_000);
    expect(resolveContextWindowSize('gpt-4o', throwing, { maxTokens: 7 })).toBe(7);
  });

  it('works without any Provider bound', async () => {
    const kernel = await createKernel({ plugins: [contextWindow()] });
    expect(kernel.get(ContextWindow)({ sessionId: 's' }).getState().maxTokens).toBe(200_000);
    await kernel.shutdown();
  });

  it('rejects a bad threshold when the plugin is made', () => {
    expect(() => contextWindow({ autoCompactThreshold: 2 })).toThrow(/autoCompactThreshold/);
    expect(() => contextWindow({ maxTokens: -1 })).toThrow(/maxTokens/);
  });

  it('feeds onContextUpdate with a pre-send estimate and the reconciled exact usage', async () => {
    const updates: IContextWindowState[] = [];
    const kernel = await createKernel({
      plugins: testPreset({
        turns: [{ text: 'hello', usage: { inputTokens: 1_200, outputTokens: 30 } }],
        replace: [contextWindow({ maxTokens: 10_000 })],
      }),
    });
    const session = kernel.createSession({ onContextUpdate: (state) => updates.push(state) });
    await session.run('hi');
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatchObject({ exact: false, maxTokens: 10_000 });
    expect(updates[0]!.usedTokens).toBeGreaterThan(0);
    expect(updates[1]).toMatchObject({ exact: true, usedTokens: 1_230, usedPercentage: 12.3 });
    await kernel.shutdown();
  });

  it('the same plugin value composed into two kernels in a row works in each', async () => {
    const plugin = contextWindow({ models: { 'scripted-model': 5_000 } });
    for (const text of ['one', 'two']) {
      const kernel = await createKernel({ plugins: testPreset({ turns: [{ text }], replace: [plugin] }) });
      const session = kernel.createSession();
      expect(session.getContextState()?.maxTokens).toBe(5_000);
      expect(await session.run('hi')).toBe(text);
      await kernel.shutdown();
    }
  });

  it('declares Provider as optional', async () => {
    const kernel = await createKernel({ plugins: [contextWindow()] });
    expect(kernel.describe().plugins[0]).toMatchObject({ name: 'context-window', requires: [], optional: ['Provider'] });
    await kernel.shutdown();
  });

  it('kernel.container.rebind(Provider) after createKernel sizes the windows of sessions created afterwards', async () => {
    const sized = (contextWindow: number) => {
      const provider = new ScriptedProvider({ model: 'm' });
      return Object.assign(provider, { getModelInfo: (model?: string) => ({ id: model ?? 'm', contextWindow }) });
    };
    const kernel = await createKernel({ plugins: testPreset({ provider: sized(10_000), replace: [contextWindow()] }) });
    const before = kernel.createSession();
    kernel.container.rebind(Provider).toConstantValue(sized(20_000));
    const after = kernel.createSession();
    expect(before.getContextState()?.maxTokens).toBe(10_000);
    expect(after.getContextState()?.maxTokens).toBe(20_000);
    await kernel.shutdown();
  });

  it('checks models when the plugin is made', () => {
    expect(() => contextWindow({ models: { m: 0 } })).toThrow(/models\.m/);
    expect(() => contextWindow({ maxTokens: 1.5 })).toThrow(/maxTokens/);
  });
});
