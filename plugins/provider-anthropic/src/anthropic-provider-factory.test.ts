import { ProviderFactory } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import { AnthropicProviderFactory } from './anthropic-provider-factory.js';
import { anthropicProvider, anthropicProviderFactory } from './index.js';

let server: FakeAnthropicServer;
beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
});
afterEach(() => server.close());

describe('AnthropicProviderFactory', () => {
  it('builds a provider from a profile: fields, documented options only', async () => {
    const provider = new AnthropicProviderFactory().create({
      type: 'anthropic',
      model: 'claude-haiku-4-5',
      apiKey: 'sk-profile',
      baseURL: server.baseURL,
      timeout: 30_000,
      options: { thinkingBudget: 1024, promptCaching: false, webSearch: { maxUses: 2 }, sleep: 'not passed through' },
    });
    expect(provider).toBeInstanceOf(AnthropicProvider);
    expect(provider.model).toBe('claude-haiku-4-5');
    server.reply({ text: 'ok' });
    await provider.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [], system: 'sys', signal: new AbortController().signal });
    const body = server.bodies[0]!;
    expect(body).toMatchObject({ model: 'claude-haiku-4-5', thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }]);
    expect(JSON.stringify(body)).not.toContain('cache_control');
    expect(JSON.stringify(server.requests[0]!.headers)).toContain('sk-profile');
  });

  it('is contributed by both plugins', async () => {
    const kernel = await createKernel({ plugins: [anthropicProviderFactory()] });
    expect(kernel.container.getAll<ProviderFactory>(ProviderFactory).map((factory) => factory.type)).toEqual(['anthropic']);
    await kernel.shutdown();
    const withProvider = await createKernel({ plugins: [anthropicProvider({ apiKey: 'k', baseURL: server.baseURL })] });
    expect(withProvider.container.getAll<ProviderFactory>(ProviderFactory).map((factory) => factory.type)).toEqual(['anthropic']);
    await withProvider.shutdown();
  });
});
