import type { Message, ProviderRawPayload, ProviderRequest } from '@tessera/contracts';
import { checkOpenAIConversation, FakeOpenAIServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';
import { OpenAIProviderError } from './openai-provider-error.js';

let server: FakeOpenAIServer;

beforeEach(async () => {
  server = new FakeOpenAIServer();
  await server.listen();
});
afterEach(() => server.close());

function provider(options: Partial<OpenAIProviderOptions> = {}): OpenAIProvider {
  return new OpenAIProvider({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'gpt-4o', ...options });
}

function request(messages: Message[], extra: Partial<ProviderRequest> = {}): ProviderRequest {
  return { messages, tools: [], signal: new AbortController().signal, ...extra };
}

const user = (text: string): Message => ({ role: 'user', content: text });
const tools = [{ name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } }];

describe('OpenAIProvider streaming', () => {
  it('delivers text deltas in order and resolves with the complete message and usage', async () => {
    server.reply({ text: ['Hel', 'lo'], usage: { prompt_tokens: 20, completion_tokens: 3, cached_tokens: 8 } });
    const deltas: string[] = [];
    const message = await provider().stream(request([user('hi')], { onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(message).toMatchObject({
      state: 'complete',
      stopReason: 'end_turn',
      provider: 'openai',
      model: 'gpt-fake',
      content: [{ type: 'text', text: 'Hello' }],
      usage: { inputTokens: 20, outputTokens: 3, cacheReadTokens: 8 },
      metadata: { requestId: 'req_fake_1', finishReason: 'stop' },
    });
    expect(server.bodies[0]).toMatchObject({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true } });
  });

  it('assembles several parallel tool calls whose argument chunks arrive interleaved', async () => {
    server.reply({
      interleaveToolCalls: true,
      toolCalls: [
        { id: 'call_a', name: 'read', input: { path: 'a.ts' }, chunks: 4 },
        { id: 'call_b', name: 'read', input: { path: 'b.ts', lines: [1, 2] }, chunks: 5 },
        { id: 'call_c', name: 'list', input: {}, chunks: 1 },
      ],
    });
    const message = await provider().stream(request([user('read')], { tools }));
    expect(message.stopReason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'read', input: { path: 'a.ts' } },
      { type: 'tool_use', id: 'call_b', name: 'read', input: { path: 'b.ts', lines: [1, 2] } },
      { type: 'tool_use', id: 'call_c', name: 'list', input: {} },
    ]);
  });

  it('maps reasoning_content to a thinking block and onThinkingDelta', async () => {
    server.reply({ reasoning: ['Think', 'ing.'], text: 'Answer.' });
    const thoughts: string[] = [];
    const message = await provider().stream(request([user('q')], { onThinkingDelta: (delta) => thoughts.push(delta) }));
    expect(thoughts).toEqual(['Think', 'ing.']);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Thinking.' },
      { type: 'text', text: 'Answer.' },
    ]);
  });

  it('maps finish reasons', async () => {
    server.reply({ text: 'a', finishReason: 'length' }, { text: 'b', finishReason: 'content_filter' });
    const openai = provider();
    expect((await openai.stream(request([user('1')]))).stopReason).toBe('max_tokens');
    expect((await openai.stream(request([user('2')]))).stopReason).toBe('refusal');
  });

  it('reports the request, every chunk and the response as raw payloads', async () => {
    server.reply({ text: ['x', 'y'], usage: { prompt_tokens: 1, completion_tokens: 2 } });
    const payloads: ProviderRawPayload[] = [];
    await provider({ name: 'lmstudio' }).stream(request([user('hi')], { onProviderNativeRawPayload: (payload) => payloads.push(payload) }));
    expect(payloads.map((payload) => payload.payloadKind)).toEqual(['request', 'stream_event', 'stream_event', 'stream_event', 'stream_event', 'stream_event', 'response']);
    expect(payloads.every((payload) => payload.provider === 'lmstudio' && payload.apiSurface === 'chat.completions')).toBe(true);
    expect(payloads.at(-1)?.payload).toMatchObject({ choices: [{ message: { content: 'xy' }, finish_reason: 'stop' }] });
  });

  it('sends the system prompt, tools, tool results and merged user turns in Chat Completions form', async () => {
    server.reply({ text: 'done' });
    const history: Message[] = [
      { role: 'user', content: 'read a' },
      {
        role: 'assistant',
        state: 'complete',
        content: [
          { type: 'thinking', thinking: 'not sent back' },
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'call_1', name: 'read', input: { path: 'a' } },
          { type: 'tool_use', id: 'call_2', name: 'read', input: '{"path": broken' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool_result', toolUseId: 'call_1', toolName: 'read', content: 'A', isError: false },
          { type: 'tool_result', toolUseId: 'call_2', toolName: 'read', content: 'invalid input', isError: true },
        ],
      },
      { role: 'assistant', state: 'interrupted', stopReason: 'aborted', content: [] },
      { role: 'user', content: 'next' },
      { role: 'user', content: [{ type: 'text', text: 'and' }, { type: 'image', data: 'AAAA', mediaType: 'image/png' }] },
    ];
    await provider({ maxTokens: 500, extraBody: { top_k: 20 } }).stream(request(history, { system: 'Be brief.', tools }));
    const body = server.bodies[0]!;
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'read a' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } },
          { id: 'call_2', type: 'function', function: { name: 'read', arguments: '{"path": broken' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'A' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Error: invalid input' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'next' },
          { type: 'text', text: 'and' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ]);
    expect(body.tools).toEqual([{ type: 'function', function: tools[0] }]);
    expect(body).toMatchObject({ max_tokens: 500, top_k: 20 });
    expect(checkOpenAIConversation(body)).toEqual([]);
  });

  it('forwards interleaved argument pieces to onToolInputDelta per call; a call without a server id is not streamed', async () => {
    server.reply({
      interleaveToolCalls: true,
      toolCalls: [
        { id: 'call_a', name: 'read', input: { path: 'a.ts' }, chunks: 4 },
        { id: 'call_b', name: 'read', input: { path: 'b.ts', lines: [1, 2] }, chunks: 5 },
      ],
    });
    const pieces: Array<{ toolCallId: string; toolName: string; delta: string }> = [];
    await provider().stream(request([user('read')], { tools, onToolInputDelta: (delta) => pieces.push(delta) }));
    const joined = (id: string): unknown => JSON.parse(pieces.filter((piece) => piece.toolCallId === id).map((piece) => piece.delta).join(''));
    expect(joined('call_a')).toEqual({ path: 'a.ts' });
    expect(joined('call_b')).toEqual({ path: 'b.ts', lines: [1, 2] });
    expect(pieces.every((piece) => piece.toolName === 'read')).toBe(true);

    server.raw({
      frames: [
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'read', arguments: '{"path":"x"}' } }] }, finish_reason: null }] })}\n\n`,
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n`,
        'data: [DONE]\n\n',
      ],
    });
    const unnamed: unknown[] = [];
    await provider().stream(request([user('x')], { tools, onToolInputDelta: (delta) => unnamed.push(delta) }));
    expect(unnamed).toEqual([]);
  });

  it('keeps tool arguments that are not JSON as a string, so validation can report them', async () => {
    server.raw({
      frames: [
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'read', arguments: '{"path": ' } }] }, finish_reason: null }] })}\n\n`,
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n`,
        'data: [DONE]\n\n',
      ],
    });
    const message = await provider().stream(request([user('x')], { tools }));
    // The server sent no id: one is made up so the result can be paired.
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^call_0_/), name: 'read', input: '{"path": ' }]);
  });

  it('accepts streams without [DONE] and turns off stream_options on request', async () => {
    server.reply({ text: 'ok', omitDone: true });
    const message = await provider({ streamUsage: false }).stream(request([user('x')]));
    expect(message.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(server.bodies[0]!.stream_options).toBeUndefined();
  });

  it('sends the key as a bearer token and custom headers', async () => {
    server.reply({ text: 'x' });
    await provider({ headers: { 'x-team': 'tessera' } }).stream(request([user('a')], { model: 'gpt-4o-mini' }));
    const [recorded] = server.requests;
    expect(recorded!.path).toBe('/v1/chat/completions');
    expect(recorded!.headers.authorization).toBe('Bearer sk-test');
    expect(recorded!.headers['x-team']).toBe('tessera');
    expect(server.bodies[0]!.model).toBe('gpt-4o-mini');
  });

  it('needs a model and a key (unless a baseURL points at a local server), and says so on the first call, not at construction', async () => {
    const saved = process.env.OPENAI_API_KEY;
    try {
      delete process.env.OPENAI_API_KEY;
      const keyless = new OpenAIProvider({ model: 'gpt-4o' });
      expect(keyless.client).toBeUndefined();
      const noKey = await keyless.stream(request([user('hi')])).catch((error: unknown) => error);
      expect(noKey).toBeInstanceOf(OpenAIProviderError);
      expect(noKey).toMatchObject({ code: 'auth', category: 'provider', provider: 'openai' });
      expect((noKey as Error).message).toMatch(/OPENAI_API_KEY/);
      expect((noKey as Error).message).toMatch(/apiKey/);
      expect(await new OpenAIProvider({}).stream(request([user('hi')])).catch((error: unknown) => error)).toMatchObject({ code: 'auth' });
      const noModel = await new OpenAIProvider({ baseURL: server.baseURL }).stream(request([user('hi')])).catch((error: unknown) => error);
      expect(noModel).toMatchObject({ code: 'invalid_request' });
      expect((noModel as Error).message).toMatch(/needs a model/);
      expect(server.requests).toHaveLength(0);
      server.reply({ text: 'named per call' });
      const perCall = await new OpenAIProvider({ baseURL: server.baseURL }).stream(request([user('hi')], { model: 'local' }));
      expect(perCall.content).toEqual([{ type: 'text', text: 'named per call' }]);
      // A local server gets a placeholder key; otherwise OPENAI_API_KEY is sent.
      expect(server.requests[0]!.headers.authorization).toBe('Bearer not-needed');
      process.env.OPENAI_API_KEY = 'sk-env';
      server.reply({ text: 'with the key' });
      await new OpenAIProvider({ model: 'gpt-4o', baseURL: server.baseURL }).stream(request([user('hi')]));
      expect(server.requests[1]!.headers.authorization).toBe('Bearer sk-env');
      expect(() => new OpenAIProvider({ model: 'gpt-4o', maxTokens: -1 })).toThrow(/maxTokens/);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it('answers getModelInfo from the catalogue, the contextWindow option and overrides', () => {
    expect(provider().getModelInfo()).toEqual({ id: 'gpt-4o', contextWindow: 128_000, maxOutputTokens: 16_384 });
    expect(provider().getModelInfo('gpt-4o-2024-08-06')).toMatchObject({ contextWindow: 128_000 });
    expect(provider({ model: 'qwen3-coder', contextWindow: 32_768 }).getModelInfo()).toEqual({ id: 'qwen3-coder', contextWindow: 32_768 });
    expect(provider().getModelInfo('unknown-local')).toBeUndefined();
  });
});
