import { describe, expect, it } from 'vitest';
import { Provider, type ProviderRequest } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { scriptedProvider } from './index.js';
import { ScriptedProvider, ScriptedProviderExhaustedError } from './scripted-provider.js';

function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return { messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal, ...overrides };
}

describe('ScriptedProvider', () => {
  it('plays turns in order, streaming each chunk as a delta', async () => {
    const provider = new ScriptedProvider({
      turns: [
        { text: ['a', 'b', 'c'], thinking: 'hmm', usage: { inputTokens: 5, outputTokens: 3 } },
        { toolCalls: [{ name: 'echo', input: { x: 1 } }, { id: 'mine', name: 'echo', input: {} }] },
      ],
    });
    const deltas: string[] = [];
    const first = await provider.stream(request({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(['a', 'b', 'c']);
    expect(first).toEqual({
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'abc' }],
      state: 'complete',
      stopReason: 'end_turn',
      provider: 'scripted',
      model: 'scripted-model',
      usage: { inputTokens: 5, outputTokens: 3 },
    });
    const second = await provider.stream(request());
    expect(second.stopReason).toBe('tool_use');
    expect(second.content).toEqual([
      { type: 'tool_use', id: 'toolu_1_0', name: 'echo', input: { x: 1 } },
      { type: 'tool_use', id: 'mine', name: 'echo', input: {} },
    ]);
  });

  it('records a copy of every request', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'x' }] });
    const messages = [{ role: 'user' as const, content: 'q' }];
    await provider.stream(request({ messages, system: 'sys' }));
    messages.push({ role: 'user', content: 'later' });
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]).toMatchObject({ system: 'sys', index: 0, messages: [{ role: 'user', content: 'q' }] });
  });

  it('answers from a function of the request', async () => {
    const provider = new ScriptedProvider({ turns: ({ index, messages }) => ({ text: `${index}:${messages.length}` }) });
    expect((await provider.stream(request())).content).toEqual([{ type: 'text', text: '0:1' }]);
    expect((await provider.stream(request())).content).toEqual([{ type: 'text', text: '1:1' }]);
  });

  it('says clearly when the script runs out', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'only' }] });
    await provider.stream(request());
    const error = await provider.stream(request()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ScriptedProviderExhaustedError);
    expect((error as Error).message).toContain('received call 2 but was given only 1 turn');
  });

  it('stops mid-stream on abort and returns the partial reply', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: ['one ', 'two ', 'three'], delayMs: 5, toolCalls: [{ name: 't', input: {} }] }] });
    const controller = new AbortController();
    const deltas: string[] = [];
    const reply = await provider.stream(
      request({
        signal: controller.signal,
        onTextDelta: (delta) => {
          deltas.push(delta);
          if (deltas.length === 2) controller.abort();
        },
      }),
    );
    expect(deltas).toEqual(['one ', 'two ']);
    expect(reply).toMatchObject({ state: 'interrupted', stopReason: 'aborted', content: [{ type: 'text', text: 'one two ' }] });
  });

  it('fails a turn with its error after streaming its text', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'partial', error: 'rate limited' }] });
    const deltas: string[] = [];
    await expect(provider.stream(request({ onTextDelta: (delta) => deltas.push(delta) }))).rejects.toThrow('rate limited');
    expect(deltas).toEqual(['partial']);
  });
});

describe('scriptedProvider plugin', () => {
  it('the same plugin value composed into two kernels in a row: each kernel gets its own provider, starting at the first turn', async () => {
    const plugin = scriptedProvider({ turns: [{ text: 'first' }, { text: 'second' }] });
    const one = await createKernel({ plugins: [plugin] });
    const provider = one.get(Provider);
    expect(provider).toBeInstanceOf(ScriptedProvider);
    expect(await one.createSession().run('a')).toBe('first');
    expect(await one.createSession().run('b')).toBe('second');
    await one.shutdown();

    const two = await createKernel({ plugins: [plugin] });
    expect(two.get(Provider)).not.toBe(provider);
    expect(await two.createSession().run('a')).toBe('first');
    expect((two.get(Provider) as ScriptedProvider).callCount).toBe(1);
    await two.shutdown();
  });

  it('binds a given instance as it is; its turn position is shared by every kernel it is composed into', async () => {
    const instance = new ScriptedProvider({ turns: [{ text: 'first' }, { text: 'second' }] });
    const plugin = scriptedProvider(instance);
    const one = await createKernel({ plugins: [plugin] });
    expect(one.get(Provider)).toBe(instance);
    expect(await one.createSession().run('a')).toBe('first');
    await one.shutdown();
    const two = await createKernel({ plugins: [plugin] });
    expect(await two.createSession().run('b')).toBe('second');
    expect(instance.requests).toHaveLength(2);
    await two.shutdown();
  });

  it('builds nothing until Provider is first resolved, and checks options when made', async () => {
    let calls = 0;
    const plugin = scriptedProvider({ turns: () => (calls++, { text: 'fn' }) });
    const kernel = await createKernel({ plugins: [plugin] });
    expect(calls).toBe(0);
    expect(await kernel.createSession().run('x')).toBe('fn');
    expect(calls).toBe(1);
    await kernel.shutdown();
    expect(() => scriptedProvider({ turns: 'nope' as never })).toThrow(/turns/);
    expect(() => scriptedProvider({ model: 3 as never })).toThrow(/model/);
  });

  it('kernel.container.rebind(Provider) after createKernel reaches sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [{ text: 'old' }] })] });
    const before = kernel.createSession();
    const replacement = new ScriptedProvider({ turns: [{ text: 'new' }] });
    kernel.container.rebind(Provider).toConstantValue(replacement);
    const after = kernel.createSession();
    expect(await after.run('x')).toBe('new');
    expect(await before.run('x')).toBe('old');
    await kernel.shutdown();
  });

  it('passes each call its own hosted-tool wishes and keeps none between calls', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }] });
    await provider.stream(request({ nativeTools: { webSearch: false } }));
    await provider.stream(request());
    expect(provider.requests.map((seen) => seen.nativeTools)).toEqual([{ webSearch: false }, undefined]);
  });
});
