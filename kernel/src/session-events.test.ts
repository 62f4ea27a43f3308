import type { AssistantMessage, ContextWindow, IContextWindowState, Provider, ProviderRequest, SessionEvent } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { Session } from './session.js';

/** A thinking model: streams thinking, then text, then asks for two tools; answers "done" after. */
class ThinkingProvider implements Provider {
  readonly name = 'thinking-fake';
  private calls = 0;
  async stream(request: ProviderRequest): Promise<AssistantMessage> {
    this.calls += 1;
    if (this.calls === 1) {
      request.onThinkingDelta?.('Two files, ');
      request.onThinkingDelta?.('read both.');
      request.onTextDelta?.('Reading ');
      request.onTextDelta?.('both.');
      return {
        role: 'assistant',
        state: 'complete',
        stopReason: 'tool_use',
        content: [
          { type: 'thinking', thinking: 'Two files, read both.' },
          { type: 'text', text: 'Reading both.' },
          { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } },
          { type: 'tool_use', id: 't2', name: 'read', input: { path: 'b' } },
        ],
      };
    }
    request.onTextDelta?.('done');
    return { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'done' }] };
  }
}

const read = defineTool({
  name: 'read',
  description: 'reads',
  inputSchema: z.object({ path: z.string() }),
  execute: ({ path }, context) => {
    context.reportProgress?.({ message: `opening ${path}`, fraction: 0.5 });
    return { success: path === 'a', output: path === 'a' ? 'A' : 'no such file', ...(path === 'a' ? { data: { lines: 1 } } : { errorCode: 'not_found' }) };
  },
});

const summary = (event: SessionEvent): string => {
  switch (event.type) {
    case 'text_delta':
    case 'thinking_delta':
      return `${event.type}:${event.round}:${event.delta}`;
    case 'tool_start':
      return `tool_start:${event.round}:${event.toolCallId}`;
    case 'tool_progress':
      return `tool_progress:${event.toolCallId}:${event.progress.message}`;
    case 'tool_end':
      return `tool_end:${event.round}:${event.toolCallId}:${event.success}:${event.errorCode ?? ''}`;
    case 'assistant_message':
      return `assistant_message:${event.round}`;
    case 'turn_end':
      return `turn_end:${event.text}:${event.rounds}`;
    default:
      return event.type;
  }
};

/** The events of `ThinkingProvider`'s two-round turn, as `summary` shows them. */
const TWO_ROUND_TURN = [
  'turn_start',
  'thinking_delta:1:Two files, ',
  'thinking_delta:1:read both.',
  'text_delta:1:Reading ',
  'text_delta:1:both.',
  'assistant_message:1',
  'tool_start:1:t1',
  'tool_progress:t1:opening a',
  'tool_end:1:t1:true:',
  'tool_start:1:t2',
  'tool_progress:t2:opening b',
  'tool_end:1:t2:false:not_found',
  'text_delta:2:done',
  'assistant_message:2',
  'turn_end:done:2',
];

describe('session.subscribe', () => {
  it('streams one ordered event sequence for a two-tool turn with a thinking model', async () => {
    const session = new Session({ provider: new ThinkingProvider(), tools: [read] });
    const events: SessionEvent[] = [];
    session.subscribe((event) => events.push(event));
    expect(await session.run('read a and b')).toBe('done');
    expect(events.map(summary)).toEqual(TWO_ROUND_TURN);
    const end = events.find((event) => event.type === 'tool_end' && event.toolCallId === 't1');
    expect(end).toMatchObject({ input: { path: 'a' }, data: { lines: 1 }, toolName: 'read' });
  });

  it('observe: a listener that does not make text events exist (they are built for subscribe listeners only)', async () => {
    const session = new Session({ provider: new ThinkingProvider(), tools: [read] });
    const observed: string[] = [];
    const subscribed: string[] = [];
    const deltas: string[] = [];
    const stop = session.observe((event) => observed.push(summary(event)));
    await session.run('read a and b', { onTextDelta: (delta) => deltas.push(delta) });
    expect(observed).toEqual(TWO_ROUND_TURN.filter((line) => !line.startsWith('text_delta')));
    expect(deltas).toEqual(['Reading ', 'both.', 'done']);
    // A subscriber makes text events exist; the observer still does not get them.
    session.subscribe((event) => subscribed.push(event.type));
    observed.length = 0;
    await session.run('again');
    expect(subscribed).toEqual(['turn_start', 'text_delta', 'assistant_message', 'turn_end']);
    // Built for the subscriber, a text event reaches every listener: an observer takes text from onTextDelta, never from here.
    expect(observed).toEqual(['turn_start', 'text_delta:1:done', 'assistant_message:1', 'turn_end:done:1']);
    stop();
    observed.length = 0;
    await session.run('once more');
    expect(observed).toEqual([]);
  });

  it('observe with a contextUpdates gate: context_update reaches the observer only while the gate is open or a subscriber makes the events exist', async () => {
    let state: IContextWindowState = { usedTokens: 0, maxTokens: 100, usedPercentage: 0, exact: false };
    const contextWindow: ContextWindow = {
      updateFromHistory: (messages) => (state = { usedTokens: messages.length, maxTokens: 100, usedPercentage: messages.length, exact: false }),
      getState: () => state,
      shouldAutoCompact: () => false,
      reset: () => undefined,
    };
    const session = new Session({ provider: new ThinkingProvider(), tools: [read], contextWindow });
    const updates: number[] = [];
    let open = false;
    const stop = session.observe((event) => event.type === 'context_update' && updates.push(event.state.usedTokens), { contextUpdates: () => open });
    await session.run('closed gate');
    expect(updates).toEqual([]);
    open = true;
    await session.run('open gate');
    // Two estimates per round (before the model call and after its reply); the model answers at once now.
    expect(updates).toHaveLength(2);
    open = false;
    updates.length = 0;
    const offSubscriber = session.subscribe(() => undefined);
    await session.run('a subscriber is there');
    expect(updates).toHaveLength(2);
    offSubscriber();
    stop();
    stop();
    updates.length = 0;
    // Unsubscribed (twice: idempotent), the gate is gone with the listener.
    const other: string[] = [];
    session.observe((event) => other.push(event.type));
    await session.run('an ungated observer');
    expect(updates).toEqual([]);
    expect(other.filter((type) => type === 'context_update')).toHaveLength(2);
  });

  it('tool_input_delta: a streaming provider’s tool input reaches subscribers before the call starts; without one the provider is not asked', async () => {
    const offered: boolean[] = [];
    const provider: Provider = {
      name: 'tool-input-fake',
      async stream(request) {
        offered.push(request.onToolInputDelta !== undefined);
        if (request.messages.at(-1)?.role === 'tool') return { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'ok' }] };
        request.onToolInputDelta?.({ toolCallId: 't1', toolName: 'read', delta: '{"path":' });
        request.onToolInputDelta?.({ toolCallId: 't1', toolName: 'read', delta: '"a"}' });
        return { role: 'assistant', state: 'complete', stopReason: 'tool_use', content: [{ type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } }] };
      },
    };
    const watched = new Session({ provider, tools: [read] });
    const events: string[] = [];
    watched.subscribe((event) => events.push(event.type === 'tool_input_delta' ? `tool_input_delta:${event.round}:${event.toolCallId}:${event.toolName}:${event.delta}` : event.type));
    await watched.run('go');
    expect(events.slice(1, 5)).toEqual(['tool_input_delta:1:t1:read:{"path":', 'tool_input_delta:1:t1:read:"a"}', 'assistant_message', 'tool_start']);
    const quiet = new Session({ provider, tools: [read] });
    const observed: string[] = [];
    quiet.observe((event) => observed.push(event.type));
    await quiet.run('go');
    expect(observed).not.toContain('tool_input_delta');
    expect(offered).toEqual([true, true, false, false]);
  });

  it('keeps the callbacks as adapters over the stream, per session and per run', async () => {
    const sessionDeltas: string[] = [];
    const runTools: string[] = [];
    const session = new Session({ provider: new ThinkingProvider(), tools: [read], onTextDelta: (delta) => sessionDeltas.push(delta) });
    await session.run('go', { onToolExecution: (event) => runTools.push(`${event.type}:${event.toolCallId}:${event.type === 'end' ? event.success : ''}`) });
    expect(sessionDeltas).toEqual(['Reading ', 'both.', 'done']);
    expect(runTools).toEqual(['start:t1:', 'end:t1:true', 'start:t2:', 'end:t2:false']);
  });

  it('stops delivering after unsubscribe, isolates a throwing listener, and reports abort as interrupted', async () => {
    const session = new Session({ provider: new ThinkingProvider(), tools: [read] });
    const seen: string[] = [];
    const stop = session.subscribe((event) => seen.push(event.type));
    session.subscribe(() => {
      throw new Error('listener bug');
    });
    await session.run('first');
    expect(seen.at(-1)).toBe('turn_end');
    stop();
    const count = seen.length;
    await session.run('second');
    expect(seen).toHaveLength(count);

    const aborting = new Session({ provider: new ThinkingProvider(), tools: [read] });
    const types: string[] = [];
    aborting.subscribe((event) => {
      types.push(event.type);
      if (event.type === 'tool_start') aborting.abort();
    });
    await expect(aborting.run('go')).rejects.toMatchObject({ name: 'AbortError' });
    expect(types.at(-1)).toBe('interrupted');
    expect(types).not.toContain('turn_end');
  });

  it('reports a failing run as one error event', async () => {
    const failing: Provider = { name: 'broken', stream: () => Promise.reject(Object.assign(new Error('boom'), { code: 'server' })) };
    const session = new Session({ provider: failing });
    const events: SessionEvent[] = [];
    session.subscribe((event) => events.push(event));
    await expect(session.run('go')).rejects.toThrow('boom');
    expect(events.map((event) => event.type)).toEqual(['turn_start', 'error']);
    expect(events[1]).toMatchObject({ type: 'error', code: 'server' });
  });
});

describe('tool sources', () => {
  it('asks sources before the first call and again after a change signal, so tools change between rounds', async () => {
    const echo = (name: string) => defineTool({ name, description: name, inputSchema: z.object({}), execute: () => ({ success: true, output: name }) });
    let available = [echo('first_tool')];
    let changed: (() => void) | undefined;
    let asked = 0;
    const source = {
      name: 'late-server',
      tools: async () => {
        asked += 1;
        return available;
      },
      onChange: (listener: () => void) => {
        changed = listener;
        return () => {
          changed = undefined;
        };
      },
    };
    const offered: string[][] = [];
    const provider: Provider = {
      name: 'recorder',
      stream: async (request) => {
        offered.push(request.tools.map((tool) => tool.name));
        if (offered.length === 1) {
          // The server's tool list changes while the first round is out.
          available = [echo('second_tool')];
          changed?.();
          return { role: 'assistant', state: 'complete', stopReason: 'tool_use', content: [{ type: 'tool_use', id: 'c1', name: 'first_tool', input: {} }] };
        }
        return { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'ok' }] };
      },
    };
    const session = new Session({ provider, tools: [read], toolSources: [source] });
    await session.run('go');
    expect(offered).toEqual([['read', 'first_tool'], ['read', 'second_tool']]);
    // The first round's call ran with the tools of that round.
    expect(JSON.stringify(session.getHistory())).toContain('"content":"first_tool"');
    await session.run('again');
    expect(asked).toBe(2);
    await session.shutdown();
    expect(changed).toBeUndefined();
  });

  it('keeps the previous tools of a failing source and never lets a source shadow a static tool', async () => {
    let fail = false;
    const shadow = defineTool({ name: 'read', description: 'imposter', inputSchema: z.object({}), execute: () => ({ success: true, output: 'x' }) });
    const extra = defineTool({ name: 'extra', description: 'extra', inputSchema: z.object({}), execute: () => ({ success: true, output: 'x' }) });
    let signal: (() => void) | undefined;
    const source = {
      name: 'flaky',
      tools: () => {
        if (fail) throw new Error('server gone');
        return [shadow, extra];
      },
      onChange: (listener: () => void) => {
        signal = listener;
        return () => undefined;
      },
    };
    const offered: string[][] = [];
    const provider: Provider = {
      name: 'recorder',
      stream: async (request) => {
        offered.push(request.tools.map((tool) => `${tool.name}:${tool.description}`));
        return { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'ok' }] };
      },
    };
    const session = new Session({ provider, tools: [read], toolSources: [source] });
    await session.run('one');
    fail = true;
    signal?.();
    await session.run('two');
    expect(offered).toEqual([['read:reads', 'extra:extra'], ['read:reads', 'extra:extra']]);
  });

  it('takes a tool source added after creation from the next model call on, and drops its tools when it is removed', async () => {
    const extra = defineTool({ name: 'extra', description: 'extra', inputSchema: z.object({}), execute: () => ({ success: true, output: 'x' }) });
    const source = { name: 'late', tools: () => [extra] };
    const offered: string[][] = [];
    const provider: Provider = {
      name: 'late',
      async stream(request: ProviderRequest): Promise<AssistantMessage> {
        offered.push(request.tools.map((tool) => tool.name));
        return { role: 'assistant', state: 'complete', stopReason: 'end_turn', content: [{ type: 'text', text: 'ok' }] };
      },
    };
    const session = new Session({ provider, tools: [read] });
    await session.run('before');
    const remove = session.addToolSource(source);
    expect(() => session.addToolSource(source)).toThrow(/already added/);
    await session.run('with');
    remove();
    remove();
    await session.run('after');
    expect(offered).toEqual([['read'], ['read', 'extra'], ['read']]);
    await session.shutdown();
  });
});

describe('preToolUse continue decisions', () => {
  it('applies a returned input rewrite and approval for later taps and the tool, then runs the next tap', async () => {
    const { createHooks } = await import('./hooks.js');
    const { Stage } = await import('./stage.js');
    const hooks = createHooks();
    const seen: unknown[] = [];
    hooks.preToolUse.tapPromise({ name: 'rewriter', stage: Stage.BeforeGuard }, async () => ({ decision: 'continue', input: { path: 'a' }, approvedBy: 'hook' }));
    hooks.preToolUse.tap({ name: 'guard', stage: Stage.Guard }, (context) => void seen.push([context.input, context.approvedBy]));
    const session = new Session({
      hooks,
      tools: [read],
      provider: new (class extends ThinkingProvider {})(),
    });
    await session.run('go');
    // Both calls were rewritten to path "a" before the guard and the tool saw them.
    expect(seen).toEqual([[{ path: 'a' }, 'hook'], [{ path: 'a' }, 'hook']]);
    const results = session.getHistory().filter((message) => message.role === 'tool');
    expect(JSON.stringify(results)).not.toContain('no such file');
  });
});
