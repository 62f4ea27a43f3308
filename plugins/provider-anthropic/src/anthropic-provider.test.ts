import type { Message, ProviderRawPayload, ProviderRequest, ServerToolUse } from '@tessera/contracts';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
import { AnthropicProviderError } from './anthropic-provider-error.js';

let server: FakeAnthropicServer;

beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
});
afterEach(() => server.close());

function provider(options: AnthropicProviderOptions = {}): AnthropicProvider {
  return new AnthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'claude-sonnet-4-6', ...options });
}

function request(messages: Message[], extra: Partial<ProviderRequest> = {}): ProviderRequest {
  return { messages, tools: [], signal: new AbortController().signal, ...extra };
}

const user = (text: string): Message => ({ role: 'user', content: text });

describe('AnthropicProvider streaming', () => {
  it('delivers text deltas in order and resolves with the complete message, usage and request id', async () => {
    server.reply({
      text: ['Hel', 'lo', ' world'],
      pings: true,
      usage: { input_tokens: 42, output_tokens: 7, cache_read_input_tokens: 30, cache_creation_input_tokens: 12 },
    });
    const deltas: string[] = [];
    const message = await provider().stream(request([user('hi')], { onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(['Hel', 'lo', ' world']);
    expect(message).toMatchObject({
      role: 'assistant',
      state: 'complete',
      stopReason: 'end_turn',
      provider: 'anthropic',
      content: [{ type: 'text', text: 'Hello world' }],
      usage: { inputTokens: 42, outputTokens: 7, cacheReadTokens: 30, cacheWriteTokens: 12 },
      metadata: { requestId: 'req_fake_1', messageId: 'msg_fake_1' },
    });
  });

  it('reports the request, every stream event and the response as raw payloads', async () => {
    server.reply({ text: ['a', 'b'], pings: true });
    const payloads: ProviderRawPayload[] = [];
    await provider().stream(request([user('hi')], { onProviderNativeRawPayload: (payload) => payloads.push(payload) }));
    const kinds = payloads.map((payload) => payload.payloadKind);
    expect(kinds[0]).toBe('request');
    expect(kinds.at(-1)).toBe('response');
    const events = payloads.filter((payload) => payload.payloadKind === 'stream_event').map((payload) => (payload.payload as { type: string }).type);
    // ping events are consumed by the SDK; every other event is reported.
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(payloads.every((payload) => payload.provider === 'anthropic' && payload.apiSurface === 'messages')).toBe(true);
    expect(payloads.at(-1)?.payload).toMatchObject({ content: [{ type: 'text', text: 'ab' }], stop_reason: 'end_turn' });
  });

  it('assembles tool input from input_json_delta chunks', async () => {
    server.reply({
      text: 'Reading.',
      toolCalls: [
        { id: 'toolu_1', name: 'read', input: { path: 'src/a.ts', lines: [1, 2, 3] }, chunks: 6 },
        { id: 'toolu_2', name: 'grep', input: { pattern: 'x"y' }, chunks: 3 },
      ],
    });
    const message = await provider().stream(request([user('read it')]));
    expect(message.stopReason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'src/a.ts', lines: [1, 2, 3] } },
      { type: 'tool_use', id: 'toolu_2', name: 'grep', input: { pattern: 'x"y' } },
    ]);
  });

  it('forwards each tool input piece to onToolInputDelta under its call id, the pieces making the whole input', async () => {
    server.reply({
      text: 'Reading.',
      toolCalls: [
        { id: 'toolu_1', name: 'read', input: { path: 'src/a.ts', lines: [1, 2, 3] }, chunks: 6 },
        { id: 'toolu_2', name: 'grep', input: { pattern: 'x"y' }, chunks: 3 },
      ],
    });
    const pieces: Array<{ toolCallId: string; toolName: string; delta: string }> = [];
    await provider().stream(request([user('read it')], { onToolInputDelta: (delta) => pieces.push(delta) }));
    const joined = (id: string): unknown => JSON.parse(pieces.filter((piece) => piece.toolCallId === id).map((piece) => piece.delta).join(''));
    expect(pieces.filter((piece) => piece.toolCallId === 'toolu_1').length).toBeGreaterThan(1);
    expect(joined('toolu_1')).toEqual({ path: 'src/a.ts', lines: [1, 2, 3] });
    expect(joined('toolu_2')).toEqual({ pattern: 'x"y' });
    expect(new Set(pieces.map((piece) => `${piece.toolCallId}:${piece.toolName}`))).toEqual(new Set(['toolu_1:read', 'toolu_2:grep']));
  });

  it('streams thinking, keeps the signature, and sends the thinking budget', async () => {
    server.reply({ thinking: ['Let me ', 'think.'], signature: 'sig_abc', text: 'Done.' });
    const thoughts: string[] = [];
    const message = await provider({ thinkingBudget: 2048 }).stream(
      request([user('q')], { onThinkingDelta: (delta) => thoughts.push(delta) }),
    );
    expect(thoughts).toEqual(['Let me ', 'think.']);
    expect(message.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think.', signature: 'sig_abc' });
    expect(server.bodies[0]).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 2048 + 8192 });
  });

  it('keeps redacted thinking as an opaque signed block and sends it back unchanged', async () => {
    server.reply({ redactedThinking: 'opaque==', text: 'ok' }, { text: 'again' });
    const anthropic = provider();
    const first = await anthropic.stream(request([user('q')]));
    expect(first.content[0]).toEqual({ type: 'thinking', thinking: '', signature: 'opaque==', redacted: true });
    await anthropic.stream(request([user('q'), first, user('more')]));
    const assistant = (server.bodies[1]!.messages as Array<{ role: string; content: unknown }>)[1]!;
    expect(assistant.content).toEqual([{ type: 'redacted_thinking', data: 'opaque==' }, { type: 'text', text: 'ok' }]);
  });

  it('maps stop reasons, including max_tokens and refusal', async () => {
    server.reply({ text: 'cut', stopReason: 'max_tokens' }, { text: 'no', stopReason: 'refusal' }, { text: 'p', stopReason: 'pause_turn' });
    const anthropic = provider();
    expect((await anthropic.stream(request([user('a')]))).stopReason).toBe('max_tokens');
    expect((await anthropic.stream(request([user('b')]))).stopReason).toBe('refusal');
    const paused = await anthropic.stream(request([user('c')]));
    expect(paused.stopReason).toBe('end_turn');
    expect(paused.metadata?.nativeStopReason).toBe('pause_turn');
  });

  it('runs hosted web search as a server tool and reports it through onServerToolUse', async () => {
    server.reply({ webSearch: { query: 'tessera release', results: [{ title: 'T', url: 'https://example.com' }] }, text: 'Found it.' });
    const anthropic = provider();
    const uses: ServerToolUse[] = [];
    const message = await anthropic.stream({ ...request([user('search')], { onServerToolUse: (use) => uses.push(use) }), nativeTools: { webSearch: true } });
    expect(uses).toEqual([{ name: 'web_search', input: { query: 'tessera release' } }]);
    expect(message.content).toEqual([{ type: 'text', text: 'Found it.' }]);
    expect(message.metadata?.serverToolBlocks).toHaveLength(2);
    expect(server.bodies[0]!.tools).toEqual([expect.objectContaining({ type: 'web_search_20250305', name: 'web_search' })]);

    // A request can keep it out (the permission layer does when WebSearch is denied).
    server.reply({ text: 'no search' });
    await anthropic.stream({ ...request([user('once more')]), nativeTools: { webSearch: false } });
    expect(server.bodies[1]!.tools).toBeUndefined();

    // A call that does not ask gets none; the earlier call changed nothing on the provider.
    server.reply({ text: 'plain' });
    await anthropic.stream(request([user('again')]));
    expect(server.bodies[2]!.tools).toBeUndefined();
  });

  it('honours webSearch: false in its options whatever a call asks (no session can turn it back on)', async () => {
    const off = provider({ webSearch: false });
    server.reply({ text: 'a' }).reply({ text: 'b' });
    await off.stream({ ...request([user('a')]), nativeTools: { webSearch: true } });
    await off.stream({ ...request([user('b')]), nativeTools: { webSearch: true } });
    expect(server.bodies.map((body) => body.tools)).toEqual([undefined, undefined]);
    const on = provider({ webSearch: { maxUses: 2 } });
    server.reply({ text: 'c' });
    await on.stream(request([user('c')]));
    expect(server.bodies[2]!.tools).toEqual([expect.objectContaining({ name: 'web_search', max_uses: 2 })]);
  });

  it('sends the key, custom headers and the requested model', async () => {
    server.reply({ text: 'x' });
    await provider({ headers: { 'anthropic-beta': 'test-beta' } }).stream(request([user('a')], { model: 'claude-haiku-4-5' }));
    const [recorded] = server.requests;
    expect(recorded!.path).toBe('/v1/messages');
    expect(recorded!.headers['x-api-key']).toBe('sk-test');
    expect(recorded!.headers.authorization).toBeUndefined();
    expect(recorded!.headers['anthropic-version']).toBe('2023-06-01');
    expect(recorded!.headers['anthropic-beta']).toBe('test-beta');
    expect(server.bodies[0]).toMatchObject({ model: 'claude-haiku-4-5', stream: true });
  });

  it('reads ANTHROPIC_API_KEY; without a key it constructs and fails the first call with an auth error, sending nothing', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    try {
      delete process.env.ANTHROPIC_API_KEY;
      const keyless = new AnthropicProvider({ baseURL: server.baseURL });
      const error = await keyless.stream(request([user('hi')])).then(() => undefined, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(AnthropicProviderError);
      expect(error).toMatchObject({ code: 'auth', category: 'provider', recoverable: false });
      expect((error as Error).message).toContain('ANTHROPIC_API_KEY');
      expect(server.requests).toHaveLength(0);
      process.env.ANTHROPIC_API_KEY = 'sk-env';
      server.reply({ text: 'ok' });
      await new AnthropicProvider({ baseURL: server.baseURL }).stream(request([user('hi')]));
      expect(server.requests[0]!.headers['x-api-key']).toBe('sk-env');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('rejects an invalid thinking budget at construction', () => {
    expect(() => provider({ thinkingBudget: 100 })).toThrow(/thinkingBudget/);
    expect(() => provider({ thinkingBudget: 4096, maxTokens: 4000 })).toThrow(/maxTokens/);
  });

  it('answers getModelInfo from the catalogue, with overrides and dated ids', () => {
    const anthropic = provider({ models: { 'claude-custom': { contextWindow: 1_000_000 } } });
    expect(anthropic.getModelInfo()).toEqual({ id: 'claude-sonnet-4-6', contextWindow: 200_000 });
    expect(anthropic.getModelInfo('claude-sonnet-4-5')).toEqual({ id: 'claude-sonnet-4-5', contextWindow: 200_000, maxOutputTokens: 64_000 });
    expect(anthropic.getModelInfo('claude-haiku-4-5-20251001')).toMatchObject({ contextWindow: 200_000 });
    expect(anthropic.getModelInfo('claude-custom')).toEqual({ id: 'claude-custom', contextWindow: 1_000_000 });
    expect(anthropic.getModelInfo('gpt-4o')).toBeUndefined();
  });
});

export function captureSync(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
