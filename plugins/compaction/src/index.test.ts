import { describe, expect, it } from 'vitest';
import { Compaction, isAbortError, messageText, Provider, type CompactContext, type IContextWindowState } from '@tessera/contracts';
import { createKernel, Stage, type CompactEvent } from '@tessera/kernel';
import { RecordingSessionLogger } from '@tessera/kernel/testing';
import { contextWindow } from '@tessera/plugin-context-window';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { CompactionOrchestrator, compaction } from './index.js';

async function setup(provider: ScriptedProvider, windowTokens = 100_000) {
  const kernel = await createKernel({
    plugins: testPreset({ provider, replace: [compaction({ compactInstructions: 'default instructions' }), contextWindow({ maxTokens: windowTokens })] }),
  });
  const hookCalls: Array<{ hook: string; context: CompactContext }> = [];
  kernel.hooks.preCompact.tap({ name: 'test', stage: Stage.Observe }, (context) => void hookCalls.push({ hook: 'pre', context }));
  kernel.hooks.postCompact.tap({ name: 'test', stage: Stage.Observe }, (context) => void hookCalls.push({ hook: 'post', context }));
  const logger = new RecordingSessionLogger();
  const summaries: string[] = [];
  const events: CompactEvent[] = [];
  const updates: IContextWindowState[] = [];
  const session = kernel.createSession({
    sessionLogger: logger,
    systemMessage: 'You are Tessera.',
    onCompact: (summary) => summaries.push(summary),
    onCompactEvent: (event) => events.push(event),
    onContextUpdate: (state) => updates.push(state),
  });
  return { kernel, session, hookCalls, logger, summaries, events, updates };
}

describe('compaction plugin in a session', () => {
  it('binds a CompactionOrchestrator using the kernel Provider', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [compaction()] }) });
    expect(kernel.get(Compaction)).toBeInstanceOf(CompactionOrchestrator);
    await kernel.shutdown();
  });

  it('manual compact: keeps system messages, injects the summary, fires hooks, callbacks and the log event', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'The answer is 4.' }, { text: 'User asked 2+2; answered 4.' }] });
    const { kernel, session, hookCalls, logger, summaries, events } = await setup(provider);
    session.injectMessage('system', 'project rules');
    await session.run('what is 2+2?');
    await session.compact('keep numbers');

    const history = session.getHistory();
    expect(history.map((message) => message.role)).toEqual(['system', 'assistant']);
    expect(history[0]).toMatchObject({ content: 'project rules' });
    expect(messageText(history[1]!)).toBe('[Context Summary] User asked 2+2; answered 4.');
    expect(provider.requests[1]!.messages[0]!.content).toContain('keep numbers');
    expect(provider.requests[1]!.tools).toEqual([]);
    expect(hookCalls.map((call) => [call.hook, call.context.trigger])).toEqual([['pre', 'manual'], ['post', 'manual']]);
    expect(hookCalls[1]!.context.summary).toBe('User asked 2+2; answered 4.');
    expect(summaries).toEqual(['User asked 2+2; answered 4.']);
    expect(events).toHaveLength(1);
    expect(events[0]!.trigger).toBe('manual');
    expect(events[0]!.after!.usedTokens).toBeLessThan(events[0]!.before!.usedTokens + 1_000);
    expect(logger.named('context_compact')).toHaveLength(1);
    await kernel.shutdown();
  });

  it('uses compactInstructions when compact() gets none', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'summary' }] });
    const { kernel, session } = await setup(provider);
    await session.run('q');
    await session.compact();
    expect(provider.requests[1]!.messages[0]!.content).toContain('default instructions');
    await kernel.shutdown();
  });

  it('a failed summary leaves history untouched and rejects; no postCompact, no callbacks', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'a' }, { error: 'model overloaded' }] });
    const { kernel, session, hookCalls, summaries } = await setup(provider);
    await session.run('q');
    const before = [...session.getHistory()];
    await expect(session.compact()).rejects.toMatchObject({ code: 'compaction_failed' });
    expect(session.getHistory()).toEqual(before);
    expect(hookCalls.map((call) => call.hook)).toEqual(['pre']);
    expect(summaries).toEqual([]);
    await kernel.shutdown();
  });

  it('an aborted compaction leaves history untouched', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'a' }, { text: ['sum', 'mary'], delayMs: 20 }] });
    const { kernel, session } = await setup(provider);
    await session.run('q');
    const before = [...session.getHistory()];
    const controller = new AbortController();
    const pending = session.compact(undefined, 'manual', controller.signal).catch((error: unknown) => error);
    controller.abort();
    expect(isAbortError(await pending)).toBe(true);
    expect(session.getHistory()).toEqual(before);
    await kernel.shutdown();
  });

  it('nothing to summarise: no summary is requested and history is kept', async () => {
    const provider = new ScriptedProvider({ turns: [] });
    const { kernel, session, hookCalls } = await setup(provider);
    session.injectMessage('system', 'only rules');
    await session.compact();
    expect(provider.callCount).toBe(0);
    expect(session.getHistory()).toHaveLength(1);
    expect(hookCalls).toEqual([]);
    await kernel.shutdown();
  });

  it('auto-compacts at the start of run() once the threshold is reached', async () => {
    const provider = new ScriptedProvider({
      turns: [{ text: 'long answer', usage: { inputTokens: 900, outputTokens: 10 } }, { text: 'summary of the long answer' }, { text: 'fresh answer' }],
    });
    const { kernel, session, events } = await setup(provider, 1_000);
    await session.run('first');
    expect(session.getContextState()!.usedPercentage).toBe(91);
    expect(await session.run('second')).toBe('fresh answer');
    expect(events.map((event) => event.trigger)).toEqual(['auto']);
    expect(provider.requests[1]!.tools).toEqual([]);
    expect(provider.requests[2]!.messages.map((message) => [message.role, messageText(message)])).toEqual([
      ['assistant', '[Context Summary] summary of the long answer'],
      ['user', 'second'],
    ]);
    await kernel.shutdown();
  });

  it('a failed auto-compaction does not cost the turn', async () => {
    const provider = new ScriptedProvider({
      turns: [{ text: 'a', usage: { inputTokens: 990, outputTokens: 0 } }, { error: 'down' }, { text: 'still answered' }],
    });
    const { kernel, session, logger } = await setup(provider, 1_000);
    await session.run('first');
    expect(await session.run('second')).toBe('still answered');
    expect(session.getHistory().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(logger.named('error').map((event) => event.data.phase)).toEqual(['autoCompact']);
    await kernel.shutdown();
  });

  it('autoCompactThreshold false disables auto-compaction', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'a', usage: { inputTokens: 999, outputTokens: 0 } }, { text: 'b' }] });
    const { kernel, session, events } = await setup(provider, 1_000);
    session.setAutoCompactThreshold(false);
    await session.run('first');
    expect(await session.run('second')).toBe('b');
    expect(events).toEqual([]);
    await kernel.shutdown();
  });
});

describe('compaction plugin composition', () => {
  it('summarises with the session\'s provider of the moment: a session that switched provider compacts with the new one', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'kernel summary' }], replace: [compaction()] }) });
    const switched = new ScriptedProvider({ turns: [{ text: 'b' }, { text: 'summary by the new provider' }] });
    const session = kernel.createSession();
    await session.run('q');
    session.setModel('other-model', { provider: switched });
    await session.run('r');
    await session.compact();
    expect(messageText(session.getHistory()[0]!)).toBe('[Context Summary] summary by the new provider');
    expect(switched.requests.at(-1)!.model).toBe('other-model');
    await kernel.shutdown();
  });

  it('the same plugin value composed into two kernels in a row summarises with each kernel\'s own provider', async () => {
    const plugin = compaction();
    for (const summary of ['first summary', 'second summary']) {
      const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: summary }], replace: [plugin] }) });
      const session = kernel.createSession();
      await session.run('q');
      await session.compact();
      expect(messageText(session.getHistory()[0]!)).toBe(`[Context Summary] ${summary}`);
      await kernel.shutdown();
    }
  });

  it('kernel.container.rebind(Provider) after createKernel reaches the compaction of sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }], replace: [compaction()] }) });
    const replacement = new ScriptedProvider({ turns: [{ text: 'b' }, { text: 'summary by the replacement' }] });
    kernel.container.rebind(Provider).toConstantValue(replacement);
    const session = kernel.createSession();
    await session.run('q');
    await session.compact();
    expect(messageText(session.getHistory()[0]!)).toBe('[Context Summary] summary by the replacement');
    await kernel.shutdown();
  });

  it('checks options when the plugin is made', () => {
    expect(() => compaction({ maxBlockChars: 0 })).toThrow(/maxBlockChars/);
    expect(() => compaction({ model: 5 as never })).toThrow(/model/);
  });
});
