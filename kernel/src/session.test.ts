import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Message, ToolExecutionEvent, ToolMessage } from '@tessera/contracts';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { defineTool } from './define-tool.js';
import { ProviderTimeoutError, PromptBlockedError, SessionBusyError, SessionClosedError } from './errors.js';
import { createHooks } from './hooks.js';
import { Session } from './session.js';
import { Stage } from './stage.js';
import { FakeClock } from './testing/fake-clock.js';
import { InMemorySessionStore } from './testing/in-memory-session-store.js';
import { ManualProvider } from './testing/manual-provider.js';
import { RecordingSessionLogger } from './testing/session-loggers.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes text',
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => ({ success: true, output: text, data: { length: text.length } }),
});

const toolMessages = (history: readonly Message[]): ToolMessage[] =>
  history.filter((message): message is ToolMessage => message.role === 'tool');

/** Every tool_use id in history has exactly one tool_result. */
function expectPaired(history: readonly Message[]): void {
  const uses: string[] = [];
  const results: string[] = [];
  for (const message of history) {
    if (message.role === 'assistant') for (const block of message.content) if (block.type === 'tool_use') uses.push(block.id);
    if (message.role === 'tool') for (const block of message.content) results.push(block.toolUseId);
  }
  expect(results.sort()).toEqual(uses.sort());
  expect(new Set(results).size).toBe(results.length);
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('Session.run', () => {
  it('loops provider round → tools → results until the model stops', async () => {
    const provider = new ScriptedProvider({
      turns: [
        { text: 'step 1', toolCalls: [{ name: 'echo', input: { text: 'a' } }] },
        { toolCalls: [{ name: 'echo', input: { text: 'b' } }, { name: 'echo', input: { text: 'c' } }] },
        { text: ['all ', 'done'] },
      ],
    });
    const session = new Session({ provider, tools: [echo], systemMessage: 'be brief' });
    expect(await session.run('go')).toBe('all done');
    const history = session.getHistory();
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(toolMessages(history)[1]!.content.map((block) => block.content)).toEqual(['b', 'c']);
    expectPaired(history);
    expect(provider.requests[0]!.system).toBe('be brief');
    expect(provider.requests[0]!.tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(provider.requests[0]!.tools[0]!.parameters).toMatchObject({ type: 'object', required: ['text'] });
    expect(session.getMessageCount()).toBe(1);
  });

  it("passes the session's provider to tools and the tool that ran to postToolUse", async () => {
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'probe', input: {} }] }, { text: 'done' }] });
    const seen: unknown[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Looks at its context',
      inputSchema: z.object({}),
      maxResultChars: 1234,
      execute: (_input, context) => {
        seen.push(context.provider);
        return { success: true, output: 'ok' };
      },
    });
    expect(probe.maxResultChars).toBe(1234);
    const hooks = createHooks();
    const ran: unknown[] = [];
    hooks.postToolUse.tap('probe-observer', (context) => {
      ran.push(context.tool);
      return undefined;
    });
    const session = new Session({ provider, tools: [probe], hooks });
    await session.run('go');
    expect(seen).toEqual([provider]);
    expect(ran).toEqual([probe]);
  });

  it('returns a failed result with errorCode unknown_tool for a tool nobody registered', async () => {
    const events: ToolExecutionEvent[] = [];
    const provider = new ScriptedProvider({
      turns: [{ toolCalls: [{ name: 'nope', input: {} }, { name: 'echo', input: { text: 'x' } }] }, { text: 'ok' }],
    });
    const session = new Session({ provider, tools: [echo], onToolExecution: (event) => events.push(event) });
    await session.run('go');
    const [unknown, known] = toolMessages(session.getHistory())[0]!.content;
    expect(unknown).toMatchObject({ toolName: 'nope', isError: true });
    expect(unknown!.content).toMatch(/not available.*Available tools: echo/);
    expect(known).toMatchObject({ content: 'x', isError: false });
    expect(events.filter((event) => event.type === 'end')).toEqual([
      expect.objectContaining({ toolName: 'nope', success: false, errorCode: 'unknown_tool' }),
      expect.objectContaining({ toolName: 'echo', success: true, toolResultData: { length: 1 } }),
    ]);
    expectPaired(session.getHistory());
  });

  it('turns a throwing tool and invalid input into failed results', async () => {
    const boom = defineTool({
      name: 'boom',
      description: 'throws',
      inputSchema: z.object({}),
      execute: () => {
        throw new Error('disk on fire');
      },
    });
    const provider = new ScriptedProvider({
      turns: [{ toolCalls: [{ name: 'boom', input: {} }, { name: 'echo', input: { text: 42 } }] }, { text: 'ok' }],
    });
    const session = new Session({ provider, tools: [echo, boom] });
    await session.run('go');
    const [thrown, invalid] = toolMessages(session.getHistory())[0]!.content;
    expect(thrown).toMatchObject({ isError: true, content: 'Tool "boom" failed: disk on fire' });
    expect(invalid!.isError).toBe(true);
    expect(invalid!.content).toMatch(/Invalid input for tool "echo": text: /);
    expectPaired(session.getHistory());
  });

  it('caps rounds at maxTurns and keeps results paired', async () => {
    const provider = new ScriptedProvider({ turns: () => ({ text: 't', toolCalls: [{ name: 'echo', input: { text: 'x' } }] }) });
    const logger = new RecordingSessionLogger();
    const session = new Session({ provider, tools: [echo], maxTurns: 3, sessionLogger: logger });
    await session.run('go');
    expect(provider.callCount).toBe(3);
    expectPaired(session.getHistory());
    expect(logger.named('max_turns_reached')).toHaveLength(1);
  });

  it('runs without a round cap when maxTurns is omitted', async () => {
    const provider = new ScriptedProvider({
      turns: ({ index }) => (index < 150 ? { toolCalls: [{ name: 'echo', input: { text: `${index}` } }] } : { text: 'end' }),
      recordRequests: false,
    });
    const session = new Session({ provider, tools: [echo] });
    expect(await session.run('go')).toBe('end');
    expect(provider.callCount).toBe(151);
  });
});

describe('abort', () => {
  it('keeps the partial text as interrupted, rejects with AbortError and stays usable', async () => {
    const provider = new ManualProvider();
    const session = new Session({ provider });
    const running = session.run('tell me a story');
    const call = await provider.waitForCall();
    call.delta('Once upon');
    expect(session.isRunning()).toBe(true);
    session.abort();
    const error = await running.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(session.isRunning()).toBe(false);
    const last = session.getHistory().at(-1)!;
    expect(last).toMatchObject({ role: 'assistant', state: 'interrupted', content: [{ type: 'text', text: 'Once upon' }] });
    expect(session.getMessageCount()).toBe(0);

    const next = session.run('again');
    (await provider.waitForCall(2)).finish({ content: [{ type: 'text', text: 'fine' }] });
    expect(await next).toBe('fine');
  });

  it('rebuilds the partial reply from deltas when the provider rejects with AbortError', async () => {
    const provider = new ManualProvider('reject');
    const session = new Session({ provider });
    const running = session.run('x');
    const call = await provider.waitForCall();
    call.delta('par');
    call.delta('tial');
    session.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(session.getHistory().at(-1)).toMatchObject({ state: 'interrupted', content: [{ type: 'text', text: 'partial' }] });
  });

  it('gives every remaining tool call of the batch an aborted result', async () => {
    let session!: Session;
    const slow = defineTool({
      name: 'slow',
      description: 'aborts the run while executing',
      inputSchema: z.object({}),
      execute: (_input, { signal }) => {
        session.abort();
        return { success: !signal.aborted, output: signal.aborted ? 'stopped' : 'ran' };
      },
    });
    const provider = new ScriptedProvider({
      turns: [{ toolCalls: [{ name: 'slow', input: {} }, { name: 'echo', input: { text: 'never' } }, { name: 'echo', input: { text: 'never' } }] }],
    });
    session = new Session({ provider, tools: [slow, echo] });
    await expect(session.run('go')).rejects.toMatchObject({ name: 'AbortError' });
    const results = toolMessages(session.getHistory())[0]!.content;
    expect(results.map((block) => block.content)).toEqual([
      'stopped',
      'Tool call "echo" was not run: the turn was aborted.',
      'Tool call "echo" was not run: the turn was aborted.',
    ]);
    expectPaired(session.getHistory());
  });

  it('pairs tool calls that arrive in an interrupted reply', async () => {
    const provider = new ManualProvider();
    const session = new Session({ provider, tools: [echo] });
    const running = session.run('x');
    const call = await provider.waitForCall();
    session.abort();
    call.finish({
      state: 'interrupted',
      content: [{ type: 'tool_use', id: 't1', name: 'echo', input: { text: 'half' } }],
    });
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expectPaired(session.getHistory());
  });

  it('honours a caller signal passed to run()', async () => {
    const provider = new ManualProvider();
    const session = new Session({ provider });
    const controller = new AbortController();
    const running = session.run('x', { signal: controller.signal });
    await provider.waitForCall();
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('is a no-op when idle', () => {
    const session = new Session({ provider: new ManualProvider() });
    expect(() => session.abort()).not.toThrow();
    expect(session.isRunning()).toBe(false);
  });
});

describe('error recovery', () => {
  it('logs, fires stopFailure, keeps history and rethrows; the session stays usable', async () => {
    const failure = new Error('upstream 500');
    const provider = new ScriptedProvider({
      turns: [{ toolCalls: [{ name: 'echo', input: { text: 'kept' } }] }, { text: 'partial ', error: failure }, { text: 'recovered' }],
    });
    const logger = new RecordingSessionLogger();
    const hooks = createHooks();
    const stopFailure = vi.fn();
    hooks.stopFailure.tap('test', stopFailure);
    const session = new Session({ provider, tools: [echo], sessionLogger: logger, hooks });
    await expect(session.run('go')).rejects.toBe(failure);
    expect(session.getHistory().map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(session.getHistory().at(-1)).toMatchObject({ state: 'interrupted', content: [{ type: 'text', text: 'partial ' }] });
    expect(logger.named('error')[0]!.data).toMatchObject({ phase: 'run', error: 'upstream 500' });
    expect(stopFailure).toHaveBeenCalledWith(expect.objectContaining({ error: failure, reason: 'upstream 500' }));
    expect(session.isRunning()).toBe(false);
    expect(await session.run('retry')).toBe('recovered');
  });

  it('rejects a second run() at once without disturbing the running one', async () => {
    const provider = new ManualProvider();
    const session = new Session({ provider });
    const first = session.run('first');
    const call = await provider.waitForCall();
    await expect(session.run('second')).rejects.toBeInstanceOf(SessionBusyError);
    expect(call.request.signal.aborted).toBe(false);
    call.delta('answer');
    call.finish();
    expect(await first).toBe('answer');
    expect(provider.calls).toHaveLength(1);
    expect(session.getHistory().filter((message) => message.role === 'user')).toHaveLength(1);
  });
});

describe('Session.run with content blocks', () => {
  const png = { type: 'image' as const, data: 'iVBORw0KGgo=', mediaType: 'image/png' };

  it('sends the prompt as its blocks, images in place, and hooks see the text', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'a red square' }] });
    const hooks = createHooks();
    const seen: string[] = [];
    hooks.userPromptSubmit.tap('test', ({ prompt }) => {
      seen.push(prompt);
      return undefined;
    });
    const session = new Session({ provider, hooks });
    await session.run('what is this?', { content: [{ type: 'text', text: 'what is this?' }, png, { type: 'text', text: '' }] });
    expect(seen).toEqual(['what is this?']);
    expect(provider.requests[0]!.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'what is this?' }, png] });
    expect(session.getHistory()[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'what is this?' }, png] });
  });

  it('keeps the images when a hook rewrites the prompt or adds context, and falls back to text when no block is left', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'one' }, { text: 'two' }] });
    const hooks = createHooks();
    hooks.userPromptSubmit.tap('test', ({ prompt }) => (prompt === 'look' ? { prompt: 'look closely', additionalContext: ['ctx'] } : undefined));
    const session = new Session({ provider, hooks });
    await session.run('look', { content: [{ type: 'text', text: 'look' }, png] });
    expect(session.getHistory()[0]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '<system-reminder>\nctx\n</system-reminder>' }, png, { type: 'text', text: 'look closely' }],
    });
    await session.run('plain', { content: [{ type: 'text', text: '' }] });
    expect(session.getHistory().at(-2)).toEqual({ role: 'user', content: 'plain' });
  });
});

describe('pairing when hooks fail', () => {
  it('gives tool calls results when afterProviderResponse fails, and keeps history when notification taps throw', async () => {
    const hooks = createHooks();
    hooks.historyAppend.tap('strict', () => {
      throw new Error('append listener bug');
    });
    hooks.afterProviderResponse.tap('strict', () => {
      throw new Error('response hook bug');
    });
    const logger = new RecordingSessionLogger();
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'ok' }] });
    const session = new Session({ provider, tools: [echo], hooks, sessionLogger: logger });
    await expect(session.run('go')).rejects.toThrow('response hook bug');
    expectPaired(session.getHistory());
    expect(toolMessages(session.getHistory())[0]!.content[0]!.content).toMatch(/not run: the afterProviderResponse hook failed/);
    expect(logger.named('error').some((event) => event.data.phase === 'historyAppend')).toBe(true);
  });
});

describe('providerTimeout', () => {
  it('fails an idle provider call; every delta refreshes the timer', async () => {
    const clock = new FakeClock();
    const provider = new ManualProvider();
    const session = new Session({ provider, clock, providerTimeout: 1_000 });
    const running = session.run('x');
    const call = await provider.waitForCall();
    clock.advance(900);
    call.delta('a');
    clock.advance(900);
    call.delta('b');
    clock.advance(900);
    expect(call.request.signal.aborted).toBe(false);
    clock.advance(100);
    expect(call.request.signal.aborted).toBe(true);
    const error = await running.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderTimeoutError);
    expect(error).toMatchObject({ code: 'provider_timeout', category: 'timeout', recoverable: true });
    expect(session.getHistory().at(-1)).toMatchObject({ state: 'interrupted', content: [{ type: 'text', text: 'ab' }] });
    expect(clock.pendingTimers()).toBe(0);
    expect(session.isRunning()).toBe(false);
  });

  it('counts thinking deltas as activity', async () => {
    const clock = new FakeClock();
    const provider = new ManualProvider();
    const session = new Session({ provider, clock, providerTimeout: 1_000 });
    const running = session.run('x');
    const call = await provider.waitForCall();
    clock.advance(900);
    call.request.onThinkingDelta?.('hmm');
    clock.advance(900);
    expect(call.request.signal.aborted).toBe(false);
    call.finish({ content: [{ type: 'text', text: 'thought' }] });
    expect(await running).toBe('thought');
  });

  it('clears its timer when the call finishes in time', async () => {
    const clock = new FakeClock();
    const provider = new ManualProvider();
    const session = new Session({ provider, clock, providerTimeout: 1_000 });
    const running = session.run('x');
    (await provider.waitForCall()).finish({ content: [{ type: 'text', text: 'quick' }] });
    expect(await running).toBe('quick');
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('text deltas', () => {
  it('isolates deltas per session and per run when sessions share one provider', async () => {
    const provider = new ScriptedProvider({
      turns: ({ messages }) => {
        const prompt = messages.at(-1)!.content as string;
        return { text: [`${prompt}-1 `, `${prompt}-2`], delayMs: 1 };
      },
    });
    const seenA: string[] = [];
    const seenB: string[] = [];
    const perRunA: string[] = [];
    const a = new Session({ provider, onTextDelta: (delta) => seenA.push(delta) });
    const b = new Session({ provider, onTextDelta: (delta) => seenB.push(delta) });
    await Promise.all([a.run('A', { onTextDelta: (delta) => perRunA.push(delta) }), b.run('B')]);
    expect(seenA).toEqual(['A-1 ', 'A-2']);
    expect(perRunA).toEqual(['A-1 ', 'A-2']);
    expect(seenB).toEqual(['B-1 ', 'B-2']);
  });
});

describe('options', () => {
  it('refuses a missing provider, duplicate tool names and bad numbers with the field named', () => {
    expect(() => new Session({} as never)).toThrow(/Invalid session option "provider"/);
    const provider = new ManualProvider();
    expect(() => new Session({ provider, tools: [echo, echo] })).toThrow(/two tools are named "echo"/);
    expect(() => new Session({ provider, maxTurns: -1 })).toThrow(/"maxTurns": expected a non-negative number/);
    expect(() => new Session({ provider, autoCompactThreshold: 2 })).toThrow(/"autoCompactThreshold"/);
    expect(() => new Session({ provider }).setAutoCompactThreshold(0)).toThrow(/"autoCompactThreshold"/);
  });
});

describe('history and accessors', () => {
  it('uses a given id or a fresh UUID', () => {
    const provider = new ManualProvider();
    expect(new Session({ provider, sessionId: 'abc' }).getSessionId()).toBe('abc');
    expect(new Session({ provider }).getSessionId()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('injects messages, adds event entries, and clears history', async () => {
    const session = new Session({ provider: new ScriptedProvider({ turns: [{ text: 'hi' }] }) });
    session.injectMessage('user', 'earlier question');
    session.injectMessage('assistant', 'earlier answer');
    session.addHistoryEntry({ id: 'e1', timestamp: new Date().toISOString(), category: 'event', type: 'tool-summary', data: { n: 1 } });
    expect(session.getHistory()).toHaveLength(2);
    expect(session.getFullHistory()).toHaveLength(3);
    expect(session.getFullHistory()[2]).toMatchObject({ category: 'event', type: 'tool-summary' });
    await session.run('now');
    expect(session.getHistory().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const resets: string[] = [];
    session.hooks.historyReset.tap('t', ({ reason }) => void resets.push(reason));
    session.clearHistory();
    expect(resets).toEqual(['clear']);
    expect(session.getHistory()).toHaveLength(0);
    expect(session.getFullHistory()).toHaveLength(0);
  });

  it('persists a record to the store after each run', async () => {
    const store = new InMemorySessionStore();
    const session = new Session({
      provider: new ScriptedProvider({ turns: [{ text: 'one' }, { text: 'two' }] }),
      sessionStore: store,
      systemMessage: 'sys',
      cwd: '/work',
      sessionId: 's1',
    });
    await session.run('a');
    await session.run('b');
    const record = store.load('s1')!;
    expect(record).toMatchObject({ id: 's1', cwd: '/work', systemPrompt: 'sys' });
    expect(record.messages).toHaveLength(4);
    expect(record.history).toHaveLength(4);
  });

  it('reports a failing store without failing the turn', async () => {
    const logger = new RecordingSessionLogger();
    const hooks = createHooks();
    const notifications: string[] = [];
    hooks.notification.tap('test', ({ notificationType }) => void notifications.push(notificationType));
    const session = new Session({
      provider: new ScriptedProvider({ turns: [{ text: 'ok' }] }),
      sessionStore: { save: () => Promise.reject(new Error('disk full')), load: () => undefined, list: () => [], delete: () => {} },
      sessionLogger: logger,
      hooks,
    });
    expect(await session.run('a')).toBe('ok');
    expect(logger.named('error')[0]!.data).toMatchObject({ phase: 'persist', error: 'disk full' });
    expect(notifications).toEqual(['persist_failed']);
  });
});

describe('shutdown', () => {
  it('fires sessionEnd exactly once, aborts active work and refuses new runs', async () => {
    const hooks = createHooks();
    const ends: string[] = [];
    hooks.sessionEnd.tap('test', ({ reason }) => void ends.push(reason));
    const provider = new ManualProvider();
    const session = new Session({ provider, hooks });
    const running = session.run('x');
    await provider.waitForCall();
    const first = session.shutdown({ reason: 'prompt_input_exit' });
    const second = session.shutdown();
    expect(second).toBe(first);
    await first;
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(ends).toEqual(['prompt_input_exit']);
    await expect(session.run('y')).rejects.toBeInstanceOf(SessionClosedError);
  });
});

describe('hook order', () => {
  it('fires the turn hooks in data-flow order', async () => {
    const hooks = createHooks();
    const order: string[] = [];
    for (const name of Object.keys(hooks) as Array<keyof typeof hooks>) {
      const hook = hooks[name] as { tap(options: { name: string; stage: number }, fn: (context: { round?: number }) => void): void };
      hook.tap({ name: 'recorder', stage: Stage.Observe }, (context) => {
        order.push(context.round === undefined ? name : `${name}#${context.round}`);
      });
    }
    const provider = new ScriptedProvider({ turns: [{ text: 'a', toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'b' }] });
    const session = new Session({ provider, tools: [echo], hooks });
    await session.run('go');
    await session.shutdown();
    expect(order.filter((name) => name !== 'historyAppend')).toEqual([
      'sessionStart',
      'userPromptSubmit',
      'beforeProviderRequest#1',
      'textDelta#1',
      'afterProviderResponse#1',
      'preToolUse#1',
      'postToolUse#1',
      'beforeProviderRequest#2',
      'textDelta#2',
      'afterProviderResponse#2',
      'stop',
      'sessionEnd',
    ]);
  });
});

describe('hook effects', () => {
  it('blocks a prompt, or adds context inside a system-reminder', async () => {
    const hooks = createHooks();
    hooks.userPromptSubmit.tapPromise('guard', async ({ prompt }) =>
      prompt.includes('secret') ? { blocked: { reason: 'no secrets' } } : { additionalContext: ['today is Sunday'] },
    );
    const provider = new ScriptedProvider({ turns: [{ text: 'ok' }] });
    const session = new Session({ provider, hooks });
    await expect(session.run('print the secret')).rejects.toBeInstanceOf(PromptBlockedError);
    expect(session.getHistory()).toHaveLength(0);
    expect(provider.callCount).toBe(0);
    await session.run('hello');
    expect(session.getHistory()[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>\ntoday is Sunday\n</system-reminder>' },
        { type: 'text', text: 'hello' },
      ],
    });
  });

  it('lets a guard deny, block, answer for, or rewrite a tool call', async () => {
    const hooks = createHooks();
    hooks.preToolUse.tap({ name: 'guard', stage: Stage.Guard }, (context) => {
      const text = (context.input as { text: string }).text;
      if (text === 'deny') return { decision: 'deny', reason: 'rule Bash(rm *)' };
      if (text === 'block') return { decision: 'deny', reason: 'hook said no', source: 'hook' };
      if (text === 'guarded') return { decision: 'deny', reason: 'no checkpoint', source: 'checkpoints' };
      if (text === 'fake') return { decision: 'respond', result: { success: true, output: 'canned' } };
      if (text === 'rewrite') context.input = { text: 'rewritten' };
      return undefined;
    });
    const events: ToolExecutionEvent[] = [];
    const provider = new ScriptedProvider({
      turns: [
        { toolCalls: ['deny', 'block', 'guarded', 'fake', 'rewrite'].map((text) => ({ name: 'echo', input: { text } })) },
        { text: 'done' },
      ],
    });
    const session = new Session({ provider, tools: [echo], hooks, onToolExecution: (event) => events.push(event) });
    await session.run('go');
    expect(toolMessages(session.getHistory())[0]!.content.map((block) => [block.content, block.isError])).toEqual([
      ['Permission denied: rule Bash(rm *)', true],
      ['Blocked by hook: hook said no', true],
      ['Blocked by checkpoints: no checkpoint', true],
      ['canned', false],
      ['rewritten', false],
    ]);
    const ends = events.filter((event) => event.type === 'end');
    expect(ends).toHaveLength(5);
    expect(ends.slice(0, 3).every((event) => event.type === 'end' && event.denied === true)).toBe(true);
  });

  it('turns a throwing guard into a failed result instead of a failed turn', async () => {
    const hooks = createHooks();
    hooks.preToolUse.tap({ name: 'broken-guard', stage: Stage.Guard }, () => {
      throw new Error('bad rule file');
    });
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'done' }] });
    const session = new Session({ provider, tools: [echo], hooks });
    expect(await session.run('go')).toBe('done');
    expect(toolMessages(session.getHistory())[0]!.content[0]!.content).toMatch(/preToolUse hook failed: bad rule file/);
  });

  it('lets postToolUse replace a result with a partial return', async () => {
    const hooks = createHooks();
    hooks.postToolUse.tap('truncate', ({ result }) => ({ result: { ...result, output: `${String(result.output).slice(0, 3)}…` } }));
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'echo', input: { text: 'abcdefgh' } }] }, { text: 'done' }] });
    const session = new Session({ provider, tools: [echo], hooks });
    await session.run('go');
    expect(toolMessages(session.getHistory())[0]!.content[0]!.content).toBe('abc…');
  });

  it('continues the turn when a stop tap asks, up to maxStopContinuations', async () => {
    const hooks = createHooks();
    const active: boolean[] = [];
    hooks.stop.tap('keep-going', ({ stopHookActive }) => {
      active.push(stopHookActive);
      return { continue: true, reason: 'run the tests too' };
    });
    const provider = new ScriptedProvider({ turns: () => ({ text: 'answer' }) });
    const session = new Session({ provider, hooks, maxStopContinuations: 2 });
    await session.run('go');
    expect(provider.callCount).toBe(3);
    expect(active).toEqual([false, true, true]);
    expect(session.getHistory().filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'go',
      'run the tests too',
      'run the tests too',
    ]);
  });

  it('lets beforeProviderRequest replace the request', async () => {
    const hooks = createHooks();
    hooks.beforeProviderRequest.tap('trim', ({ request }) => ({ request: { ...request, messages: request.messages.slice(-1), system: 'changed' } }));
    const provider = new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }] });
    const session = new Session({ provider, hooks, systemMessage: 'original' });
    await session.run('one');
    await session.run('two');
    expect(provider.requests[1]!.messages).toEqual([{ role: 'user', content: 'two' }]);
    expect(provider.requests[1]!.system).toBe('changed');
  });

  it('does not call the model when the run was aborted while a beforeProviderRequest tap waited', async () => {
    const hooks = createHooks();
    const controller = new AbortController();
    hooks.beforeProviderRequest.tapPromise('slow-policy', async () => {
      controller.abort();
      await new Promise((resolve) => setImmediate(resolve));
    });
    const provider = new ScriptedProvider({ turns: [{ text: 'after' }] });
    const session = new Session({ provider, hooks });
    await expect(session.run('go', { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(provider.callCount).toBe(0);
    expect(session.getHistory().at(-1)).toMatchObject({ role: 'assistant', state: 'interrupted', content: [] });
    // The turn the model was never asked for is still there for the next run.
    expect(await session.run('again')).toBe('after');
  });
});

describe('compaction seam', () => {
  it('summarises through the Compaction service and keeps system messages', async () => {
    const hooks = createHooks();
    const seen: string[] = [];
    hooks.preCompact.tap('t', ({ trigger }) => void seen.push(`pre:${trigger}`));
    hooks.postCompact.tap('t', ({ summary }) => void seen.push(`post:${summary}`));
    const compact = vi.fn(async () => ({ summary: 'we said hi' }));
    const session = new Session({ provider: new ScriptedProvider({ turns: [{ text: 'hi' }] }), hooks, compaction: { compact } });
    session.injectMessage('system', 'rules');
    await session.run('hello');
    await session.compact('keep names');
    expect(compact).toHaveBeenCalledWith(expect.objectContaining({ instructions: 'keep names', trigger: 'manual' }));
    expect(session.getHistory()).toEqual([
      { role: 'system', content: 'rules' },
      { role: 'assistant', content: [{ type: 'text', text: '[Context Summary] we said hi' }], state: 'complete' },
    ]);
    expect(seen).toEqual(['pre:manual', 'post:we said hi']);
    let resetAt = -1;
    hooks.historyReset.tap('t', ({ reason }) => void (resetAt = reason === 'compact' ? session.getHistory().length : -2));
    await session.compact();
    expect(resetAt).toBe(0);
  });

  it('keeps the compacted history when a postCompact tap fails', async () => {
    const hooks = createHooks();
    hooks.postCompact.tap('strict', () => {
      throw new Error('post hook bug');
    });
    const session = new Session({
      provider: new ScriptedProvider({ turns: [{ text: 'hi' }] }),
      hooks,
      compaction: { compact: async () => ({ summary: 's' }) },
    });
    await session.run('hello');
    await expect(session.compact()).resolves.toBeUndefined();
    expect(session.getHistory()).toHaveLength(1);
  });

  it('leaves history untouched when the summary fails', async () => {
    const session = new Session({
      provider: new ScriptedProvider({ turns: [{ text: 'hi' }] }),
      compaction: { compact: async () => Promise.reject(new Error('model down')) },
    });
    await session.run('hello');
    await expect(session.compact()).rejects.toThrow('model down');
    expect(session.getHistory()).toHaveLength(2);
  });

  it('auto-compacts at the start of run() when the tracker says so', async () => {
    const compact = vi.fn(async () => ({ summary: 'short' }));
    const state = { usedTokens: 90, maxTokens: 100, usedPercentage: 90, exact: false };
    const contextWindow = {
      updateFromHistory: () => state,
      getState: () => state,
      shouldAutoCompact: (threshold: number) => state.usedTokens / state.maxTokens >= threshold,
      reset: () => {},
    };
    const session = new Session({
      provider: new ScriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] }),
      compaction: { compact },
      contextWindow,
    });
    await session.run('one');
    expect(compact).not.toHaveBeenCalled(); // empty history: nothing to compact
    await session.run('two');
    expect(compact).toHaveBeenCalledWith(expect.objectContaining({ trigger: 'auto' }));
    expect(session.getHistory().map((message) => message.role)).toEqual(['assistant', 'user', 'assistant']);
    session.setAutoCompactThreshold(false);
    await session.run('three');
    expect(compact).toHaveBeenCalledTimes(1);
  });
});

describe('sessionStart', () => {
  it('completes before the first turn reads history', async () => {
    const hooks = createHooks();
    hooks.sessionStart.tapPromise('restore', async ({ session }) => {
      await flush();
      (session as Session).injectMessage('user', 'restored context');
    });
    const provider = new ScriptedProvider({ turns: [{ text: 'ok' }] });
    const session = new Session({ provider, hooks });
    await session.run('now');
    expect(provider.requests[0]!.messages[0]).toEqual({ role: 'user', content: 'restored context' });
  });
});
