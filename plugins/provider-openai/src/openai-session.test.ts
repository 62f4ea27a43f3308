import { messageText, type Message, type Provider, type Tool } from '@tessera/contracts';
import { createKernel, Session } from '@tessera/kernel';
import { checkOpenAIConversation, FakeOpenAIServer, openaiFrames, type OpenAITurn } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openaiProvider } from './index.js';
import { OpenAIProvider } from './openai-provider.js';

let server: FakeOpenAIServer;

beforeEach(async () => {
  server = new FakeOpenAIServer();
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

function openai(): OpenAIProvider {
  return new OpenAIProvider({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'gpt-4o', sleep: async () => {} });
}

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

describe('OpenAIProvider in a Session', () => {
  it('runs a several-round tool-using turn with parallel calls and sends paired tool messages back', async () => {
    calls.length = 0;
    server.reply(
      { text: 'Listing.', toolCalls: [{ id: 'call_list', name: 'list', input: {} }], usage: { prompt_tokens: 10, completion_tokens: 2 } },
      {
        reasoning: 'Two files.',
        interleaveToolCalls: true,
        toolCalls: [
          { id: 'call_a', name: 'read', input: { path: 'a.ts' }, chunks: 3 },
          { id: 'call_b', name: 'read', input: { path: 'b.ts' }, chunks: 3 },
        ],
      },
      { text: ['All ', 'read.'] },
    );
    const kernel = await createKernel({ plugins: [openaiProvider(openai())] });
    const session = kernel.createSession({ tools, systemMessage: 'Be brief.' });
    const answer = await session.run('Read every file');
    expect(answer).toBe('All read.');
    expect(calls).toEqual([
      { name: 'list', input: {} },
      { name: 'read', input: { path: 'a.ts' } },
      { name: 'read', input: { path: 'b.ts' } },
    ]);
    const history = session.getHistory();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expectPaired(history);
    for (const body of server.bodies) expect(checkOpenAIConversation(body)).toEqual([]);
    const third = server.bodies[2]!.messages as Array<Record<string, unknown>>;
    expect(third.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'contents of a.ts' },
      { role: 'tool', tool_call_id: 'call_b', content: 'contents of b.ts' },
    ]);
    await kernel.shutdown();
  });

  it('a provider error mid-answer keeps the partial text and the session continues', async () => {
    server.reply({ text: ['Half ', 'answer'], fault: { type: 'cut', afterEvents: 2 } }, { text: 'Again.' });
    const session = new Session({ provider: openai(), tools });
    await expect(session.run('go')).rejects.toMatchObject({ code: 'network', category: 'provider' });
    expect(session.getHistory().at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Half ' }] });
    expect(await session.run('again')).toBe('Again.');
    expect(checkOpenAIConversation(server.bodies[1])).toEqual([]);
  });

  describe('abort at every stream position of a recorded turn', () => {
    const recorded: OpenAITurn = {
      reasoning: ['Plan', 'ning'],
      text: ['I will ', 'read.'],
      toolCalls: [
        { id: 'call_r1', name: 'read', input: { path: 'one.ts' }, chunks: 2 },
        { id: 'call_r2', name: 'read', input: { path: 'two.ts' }, chunks: 2 },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 5 },
    };
    // [DONE] is consumed by the SDK, so it is not a position the client can observe.
    const chunkCount = openaiFrames(recorded).length - 1;

    it.each(Array.from({ length: chunkCount }, (_, position) => position))(
      'after %i chunks: history stays consistent and the next run is accepted',
      async (position) => {
        server.reply(recorded, { text: 'Resumed.' });
        const inner = openai();
        let session: Session | undefined;
        let seen = 0;
        let armed = true;
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
        const outcome = await session.run('read both', { onTextDelta: (delta) => deltas.push(delta) }).then(
          () => 'completed',
          (error: unknown) => (error as Error).name,
        );
        armed = false;
        const history = session.getHistory();
        if (outcome === 'AbortError') {
          expect(history[1]).toMatchObject({ role: 'assistant', state: 'interrupted', stopReason: 'aborted' });
          expect(messageText(history[1]!)).toBe(deltas.join(''));
        }
        expectPaired(history);
        expect(await session.run('continue')).toBe('Resumed.');
        expect(checkOpenAIConversation(server.bodies.at(-1))).toEqual([]);
      },
    );
  });
});
