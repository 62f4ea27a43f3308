import { Provider, ProviderFactory, type ProviderProfile } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { FakeOpenAIServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openaiProviderFactory } from './index.js';
import { OpenAIProvider } from './openai-provider.js';
import { OpenAIProviderFactory } from './openai-provider-factory.js';
import { createProviderFromProfile, providerFromProfile, ProviderProfileError } from './provider-from-profile.js';

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = new FakeOpenAIServer();
  await server.listen();
});
afterEach(() => server.close());

const stubFactory = (type: string): ProviderFactory => ({
  type,
  create: (profile) => ({ name: `stub-${type}`, model: profile.model, stream: () => Promise.reject(new Error('stub')) }),
});

function thrown(run: () => unknown): ProviderProfileError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderProfileError);
    return error as ProviderProfileError;
  }
  throw new Error('expected a throw');
}

describe('createProviderFromProfile', () => {
  it('builds an OpenAI-compatible provider from a profile and streams through it', async () => {
    const profile: ProviderProfile = {
      type: 'lmstudio',
      model: 'qwen3-coder',
      apiKey: 'lm-studio',
      baseURL: server.baseURL,
      timeout: 5000,
      options: { contextWindow: 32_768, maxTokens: 256, client: 'ignored' },
    };
    const provider = createProviderFromProfile(profile, [stubFactory('anthropic'), new OpenAIProviderFactory('lmstudio')]);
    expect(provider).toBeInstanceOf(OpenAIProvider);
    expect(provider.name).toBe('lmstudio');
    expect(provider.getModelInfo?.()).toEqual({ id: 'qwen3-coder', contextWindow: 32_768 });
    server.reply({ text: 'hi from lm studio' });
    const message = await provider.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal });
    expect(message.content).toEqual([{ type: 'text', text: 'hi from lm studio' }]);
    expect(server.bodies[0]).toMatchObject({ model: 'qwen3-coder', max_tokens: 256 });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer lm-studio');
  });

  it('picks the factory by type', () => {
    const provider = createProviderFromProfile({ type: 'anthropic', model: 'm' }, [new OpenAIProviderFactory(), stubFactory('anthropic')]);
    expect(provider.name).toBe('stub-anthropic');
  });

  it('reports a missing type, an unknown type and an unresolved $ENV key, naming the profile', () => {
    const factories = [new OpenAIProviderFactory(), stubFactory('anthropic')];
    const missing = thrown(() => createProviderFromProfile({ type: '' }, factories, { profileName: 'work' }));
    expect(missing.message).toContain('Provider profile "work" has no "type"');
    expect(missing).toMatchObject({ code: 'provider_profile', category: 'configuration', details: { profile: 'work', field: 'type' } });
    const unknown = thrown(() => createProviderFromProfile({ type: 'gemma', model: 'g' }, factories));
    expect(unknown.message).toMatch(/type "gemma".*known: "openai", "anthropic"/);
    const env = thrown(() => createProviderFromProfile({ type: 'openai', model: 'gpt-4o', apiKey: '$ENV:MY_OPENAI_KEY' }, factories));
    expect(env.message).toContain('MY_OPENAI_KEY');
    expect(env.details).toMatchObject({ field: 'apiKey', variable: 'MY_OPENAI_KEY' });
  });

  it('lets the provider explain a missing model, on its first call', async () => {
    const provider = createProviderFromProfile({ type: 'openai', baseURL: server.baseURL }, [new OpenAIProviderFactory()]);
    const error = await provider.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_request' });
    expect((error as Error).message).toMatch(/needs a model/);
  });
});

describe('providerFromProfile plugin', () => {
  it('binds Provider from the contributed factories', async () => {
    const kernel = await createKernel({
      plugins: [
        openaiProviderFactory(['openai', 'ollama']),
        definePlugin({ name: 'stub-anthropic', contributes: [ProviderFactory], register: ({ bind }) => void bind(ProviderFactory).toConstantValue(stubFactory('anthropic')) }),
        providerFromProfile({ type: 'ollama', model: 'llama3', baseURL: server.baseURL }),
      ],
    });
    const provider = kernel.container.get<Provider>(Provider);
    expect(provider).toBeInstanceOf(OpenAIProvider);
    expect(provider.name).toBe('ollama');
    await kernel.shutdown();
  });

  it('fails with the profile error when no factory matches', async () => {
    const kernel = await createKernel({ plugins: [providerFromProfile({ type: 'nope', model: 'x' }, { profileName: 'p' })] });
    expect(() => kernel.container.get<Provider>(Provider)).toThrow(/Provider profile "p" has type "nope".*\(none registered\)/);
    await kernel.shutdown();
  });
});
