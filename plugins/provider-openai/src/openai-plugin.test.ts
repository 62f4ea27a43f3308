import { Provider, ProviderFactory } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { FakeOpenAIServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openaiProvider, openaiProviderFactory, providerFromProfile } from './index.js';
import { OpenAIProvider } from './openai-provider.js';
import { OpenAIProviderError } from './openai-provider-error.js';

let server: FakeOpenAIServer;
let savedKey: string | undefined;
beforeEach(async () => {
  server = new FakeOpenAIServer();
  await server.listen();
  savedKey = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
});
afterEach(() => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
  return server.close();
});

describe('openaiProvider plugin', () => {
  it('openaiProvider({}) with no OPENAI_API_KEY composes; the first call fails with an auth error naming what to set', async () => {
    const plugin = openaiProvider({});
    const kernel = await createKernel({ plugins: testPreset({ replace: [plugin] }) });
    const session = kernel.createSession();
    const error = await session.run('hi').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAIProviderError);
    expect(error).toMatchObject({ code: 'auth', category: 'provider' });
    expect((error as Error).message).toMatch(/OPENAI_API_KEY/);
    expect((error as Error).message).toMatch(/apiKey/);
    await kernel.shutdown();
  });

  it('reads the environment when the kernel builds the provider, not when the plugin is made', async () => {
    const plugin = openaiProvider({ baseURL: server.baseURL, model: 'gpt-4o', sleep: async () => {} });
    process.env.OPENAI_API_KEY = 'sk-set-later';
    const kernel = await createKernel({ plugins: testPreset({ replace: [plugin] }) });
    server.reply({ text: 'hello' });
    expect(await kernel.createSession().run('hi')).toBe('hello');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-set-later');
    await kernel.shutdown();
  });

  it('checks options when the plugin is made', () => {
    expect(() => openaiProvider({ model: 42 as unknown as string })).toThrow(/"model"/);
    expect(() => openaiProvider({ model: 'm', maxTokens: 0 })).toThrow(/maxTokens/);
    expect(() => openaiProviderFactory([])).toThrow(/types/);
    expect(() => openaiProviderFactory(['openai'], { contextWindow: -5 })).toThrow(/contextWindow/);
  });

  it('the same plugin value composed into two kernels in a row gives each its own provider, and both work', async () => {
    const plugins = testPreset({ replace: [openaiProvider({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'gpt-4o', sleep: async () => {} })] });
    server.reply({ text: 'one' }, { text: 'two' });
    const first = await createKernel({ plugins });
    const firstProvider = first.get(Provider);
    expect(firstProvider).toBeInstanceOf(OpenAIProvider);
    expect(await first.createSession().run('a')).toBe('one');
    await first.shutdown();

    const second = await createKernel({ plugins });
    expect(second.get(Provider)).toBeInstanceOf(OpenAIProvider);
    expect(second.get(Provider)).not.toBe(firstProvider);
    expect(await second.createSession().run('b')).toBe('two');
    await second.shutdown();
  });

  it('binds a given instance as it is (shared by every kernel it is composed into)', async () => {
    const instance = new OpenAIProvider({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'gpt-4o' });
    const plugin = openaiProvider(instance);
    const first = await createKernel({ plugins: [plugin] });
    const second = await createKernel({ plugins: [plugin] });
    expect(first.get(Provider)).toBe(instance);
    expect(second.get(Provider)).toBe(instance);
    await Promise.all([first.shutdown(), second.shutdown()]);
  });

  it('kernel.container.rebind(Provider) after createKernel reaches sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ replace: [openaiProvider({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'gpt-4o' })] }) });
    const before = kernel.createSession();
    const replacement = new ScriptedProvider({ turns: [{ text: 'from the replacement' }] });
    kernel.container.rebind(Provider).toConstantValue(replacement);
    const after = kernel.createSession();
    expect(after.getProvider()).toBe(replacement);
    expect(before.getProvider()).toBeInstanceOf(OpenAIProvider);
    expect(await after.run('hi')).toBe('from the replacement');
    await kernel.shutdown();
  });
});

describe('openaiProviderFactory and providerFromProfile plugins', () => {
  it('compose into two kernels in a row, each with its own factories and provider; a keyless profile fails its first call', async () => {
    const plugins = [openaiProviderFactory(['openai', 'lmstudio']), providerFromProfile({ type: 'openai', model: 'gpt-4o' })];
    const first = await createKernel({ plugins });
    const firstFactories = first.getAll(ProviderFactory);
    expect(firstFactories.map((factory) => factory.type)).toEqual(['openai', 'lmstudio']);
    const firstProvider = first.get(Provider);
    expect(await first.createSession().run('hi').catch((error: unknown) => error)).toMatchObject({ code: 'auth' });
    await first.shutdown();

    const second = await createKernel({ plugins });
    expect(second.getAll(ProviderFactory)[0]).not.toBe(firstFactories[0]);
    expect(second.get(Provider)).not.toBe(firstProvider);
    expect(second.describe().plugins.find((plugin) => plugin.name === 'provider-from-profile')?.optional).toEqual(['ProviderFactory']);
    await second.shutdown();
  });
});
