import { messageText, type Message, type Provider, type Tool } from '@tessera/contracts';
import { createKernel, Session } from '@tessera/kernel';
import { anthropicFrames, checkAnthropicConversation, FakeAnthropicServer, type AnthropicTurn } from '@tessera/test-servers';
import { Provider as ProviderToken } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import { anthropicProvider } from './index.js';

let server: FakeAnthropicServer;

beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
});
afterEach(() => server.close());

const calls: Array<{ name: string; input: unknown }> = [];
const tool = (name: string, output: (input: Record<string, unknown>) => string): Tool => ({
  name,
  description: `The ${name} tool`,
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  execute: (input) => {
    calls.push({ name, input });
    return { success: true, output: output(input as Record<string, unknown>) };
  },
});
const tools = [tool('read', (input) => `contents of ${String(input.path)}`), tool('list', () => 'a.ts\nb.ts')];

function anthropic(): AnthropicProvider {
  return new AnthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'claude-sonnet-4-6', sleep: async () => {} });
}

/** Every tool_use in history has exactly one tool_result in the message right after it. */
function expectPaired(history: readonly Message[]): void {
  history.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const ids = message.content.filter((block) => block.type === 'tool_use').map((block) => block.id);
    if (ids.length === 0) return;
    const next = history[index + 1];
    expect(next?.role).toBe('tool');
    const answered = next?.role === 'tool' ? next.content.map((block) => block.toolUseId) : [];
    expect(answered.sort()).toEqual([...ids].sort());
  });
}

describe('AnthropicProvider in a Session', () => {
  it('runs a several-round tool-using turn and sends paired tool results back', async () => {
    calls.length = 0;
    server.reply(
      { text: 'Listing first.', toolCalls: [{ id: 'toolu_list', name: 'list', input: {} }] },
      {
        thinking: 'Two files.',
        signature: 'sig_1',
        toolCalls: [
          { id: 'toolu_a', name: 'read', input: { path: 'a.ts' }, chunks: 4 },
          { id: 'toolu_b', name: 'read', input: { path: 'b.ts' }, chunks: 4 },
        ],
      },
      { text: ['Both files ', 'are read.'] },
    );
    const kernel = await createKernel({ plugins: [anthropicProvider(anthropic())] });
    const session = kernel.createSession({ tools, systemMessage: 'Be brief.' });
    const deltas: string[] = [];
    const answer = await session.run('Read every file', { onTextDelta: (delta) => deltas.push(delta) });

    expect(answer).toBe('Both files are read.');
    expect(deltas.join('')).toBe('Listing first.Both files are read.');
    expect(calls).toEqual([
      { name: 'list', input: {} },
      { name: 'read', input: { path: 'a.ts' } },
      { name: 'read', input: { path: 'b.ts' } },
    ]);
    const history = session.getHistory();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expectPaired(history);
    expect(server.requests).toHaveLength(3);
    for (const body of server.bodies) expect(checkAnthropicConversation(body)).toEqual([]);
    const third = server.bodies[2]!;
    expect(third.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    const lastUser = (third.messages as Array<{ content: Array<Record<string, unknown>> }>).at(-1)!;
    expect(lastUser.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'contents of a.ts', is_error: false },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: 'contents of b.ts', is_error: false, cache_control: { type: 'ephemeral' } },
    ]);
    // Thinking goes back signed, before the tool calls it led to.
    const secondAssistant = (third.messages as Array<{ content: Array<Record<string, unknown>> }>)[3]!;
    expect(secondAssistant.content[0]).toEqual({ type: 'thinking', thinking: 'Two files.', signature: 'sig_1' });
    await kernel.shutdown();
  });

  it('a provider error mid-answer keeps the partial text in history and the session continues', async () => {
    server.reply({ text: ['Half ', 'an answer'], fault: { type: 'cut', afterEvents: 3 } }, { text: 'Second try.' });
    const session = new Session({ provider: anthropic(), tools });
    await expect(session.run('go')).rejects.toMatchObject({ code: 'network', category: 'provider' });
    expect(session.getHistory().at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Half ' }] });
    expect(await session.run('again')).toBe('Second try.');
    expect(checkAnthropicConversation(server.bodies[1])).toEqual([]);
  });

  it('binds Provider and contributes its ProviderFactory through the plugin', async () => {
    const kernel = await createKernel({ plugins: [anthropicProvider({ apiKey: 'sk-test', baseURL: server.baseURL })] });
    const context = kernel.container;
    expect(context.get<Provider>(ProviderToken)).toBeInstanceOf(AnthropicProvider);
    await kernel.shutdown();
  });

  describe('abort at every stream position of a recorded turn', () => {
    const recorded: AnthropicTurn = {
      thinking: ['Plan', 'ning.'],
      signature: 'sig_rec',
      text: ['I will ', 'read ', 'both.'],
      toolCalls: [
        { id: 'toolu_r1', name: 'read', input: { path: 'one.ts' }, chunks: 3 },
        { id: 'toolu_r2', name: 'read', input: { path: 'two.ts' }, chunks: 3 },
      ],
    };
    const eventCount = anthropicFrames(recorded).length;

    it.each(Array.from({ length: eventCount }, (_, position) => position))(
      'after %i stream events: history stays consistent and the next run is accepted',
      async (position) => {
        server.reply(recorded, { text: 'Resumed.' });
        const inner = anthropic();
        let session: Session | undefined;
        let seen = 0;
        let armed = true;
        // Abort from inside the stream, exactly `position` events in (0 = as the request goes out).
        const provider: Provider = {
          name: inner.name,
          stream: (request) =>
            inner.stream({
              ...request,
              onProviderNativeRawPayload: (payload) => {
                request.onProviderNativeRawPayload?.(payload);
                if (!armed) return;
                if (payload.payloadKind === 'request' && position === 0) session?.abort();
                if (payload.payloadKind === 'stream_event' && ++seen === position) session?.abort();
              },
            }),
        };
        session = new Session({ provider, tools });
        const deltas: string[] = [];
        await expect(session.run('read both', { onTextDelta: (delta) => deltas.push(delta) })).rejects.toMatchObject({ name: 'AbortError' });
        armed = false;
        const history = session.getHistory();
        const reply = history[1]!;
        expect(reply).toMatchObject({ role: 'assistant', state: 'interrupted', stopReason: 'aborted' });
        // The caller saw exactly what history keeps.
        expect(messageText(reply)).toBe(deltas.join(''));
        expectPaired(history);
        expect(await session.run('continue')).toBe('Resumed.');
        const resumed = server.bodies.at(-1);
        expect(checkAnthropicConversation(resumed)).toEqual([]);
      },
    );
  });
});
