import { Provider, ProviderFactory } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import { AnthropicProviderFactory } from './anthropic-provider-factory.js';
import { anthropicProvider, anthropicProviderFactory } from './index.js';

let server: FakeAnthropicServer;
let savedKey: string | undefined;
beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
  savedKey = process.env.ANTHROPIC_API_KEY;
  delete process.env.ANTHROPIC_API_KEY;
});
afterEach(() => {
  if (savedKey === undefined) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = savedKey;
  return server.close();
});

describe('anthropicProvider plugin', () => {
  it('makes a plugin with no key in the environment; the first call fails with an auth error naming what to set', async () => {
    const plugin = anthropicProvider({ baseURL: server.baseURL });
    const kernel = await createKernel({ plugins: testPreset({ replace: [plugin] }) });
    const error = await kernel.createSession().run('hi').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'auth', category: 'provider' });
    expect((error as Error).message).toMatch(/ANTHROPIC_API_KEY/);
    expect((error as Error).message).toMatch(/apiKey/);
    expect(server.requests).toHaveLength(0);
    await kernel.shutdown();
  });

  it('reads the environment when the kernel builds the provider, not when the plugin is made', async () => {
    const plugin = anthropicProvider({ baseURL: server.baseURL, sleep: async () => {} });
    process.env.ANTHROPIC_API_KEY = 'sk-set-later';
    const kernel = await createKernel({ plugins: testPreset({ replace: [plugin] }) });
    server.reply({ text: 'hello' });
    expect(await kernel.createSession().run('hi')).toBe('hello');
    expect(JSON.stringify(server.requests[0]!.headers)).toContain('sk-set-later');
    await kernel.shutdown();
  });

  it('checks options when the plugin is made', () => {
    expect(() => anthropicProvider({ thinkingBudget: 100 })).toThrow(/thinkingBudget/);
    expect(() => anthropicProvider({ thinkingBudget: 2048, maxTokens: 1024 })).toThrow(/maxTokens/);
    expect(() => anthropicProviderFactory({ thinkingBudget: 10 })).toThrow(/thinkingBudget/);
  });

  it('the same plugin value composed into two kernels in a row gives each its own provider, and both work', async () => {
    const plugins = testPreset({ replace: [anthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL, sleep: async () => {} })] });
    server.reply({ text: 'one' }, { text: 'two' });
    const first = await createKernel({ plugins });
    const firstProvider = first.get(Provider);
    expect(firstProvider).toBeInstanceOf(AnthropicProvider);
    expect(await first.createSession().run('a')).toBe('one');
    await first.shutdown();

    const second = await createKernel({ plugins });
    expect(second.get(Provider)).toBeInstanceOf(AnthropicProvider);
    expect(second.get(Provider)).not.toBe(firstProvider);
    expect(second.getAll(ProviderFactory)[0]).toBeInstanceOf(AnthropicProviderFactory);
    expect(await second.createSession().run('b')).toBe('two');
    await second.shutdown();
  });

  it('binds a given instance as it is (shared by every kernel it is composed into)', async () => {
    const instance = new AnthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL });
    const plugin = anthropicProvider(instance);
    const first = await createKernel({ plugins: [plugin] });
    const second = await createKernel({ plugins: [plugin] });
    expect(first.get(Provider)).toBe(instance);
    expect(second.get(Provider)).toBe(instance);
    await Promise.all([first.shutdown(), second.shutdown()]);
  });

  it('kernel.container.rebind(Provider) after createKernel reaches sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ replace: [anthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL })] }) });
    const before = kernel.createSession();
    const replacement = new ScriptedProvider({ turns: [{ text: 'from the replacement' }] });
    kernel.container.rebind(Provider).toConstantValue(replacement);
    const after = kernel.createSession();
    expect(after.getProvider()).toBe(replacement);
    expect(before.getProvider()).toBeInstanceOf(AnthropicProvider);
    expect(await after.run('hi')).toBe('from the replacement');
    await kernel.shutdown();
  });
});
