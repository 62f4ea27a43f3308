import { ContextWindow, type ContextWindowFactory, type IContextWindowState } from '@tessera/contracts';
import { ScriptedProvider, scriptedProvider } from '@tessera/plugin-provider-scripted';
import { describe, expect, it } from 'vitest';
import { createKernel } from './kernel.js';
import { definePlugin } from './plugin.js';
import { InMemorySessionStore } from './testing/in-memory-session-store.js';
import { inMemorySessionStore } from './testing/plugins.js';

/** A context window whose size is the model name's length × 1000, so a model switch shows. */
const sizedByModel = definePlugin({
  name: 'sized-window',
  provides: [ContextWindow],
  register({ bind }) {
    const factory: ContextWindowFactory = ({ model }) => {
      let state: IContextWindowState = { usedTokens: 0, maxTokens: (model ?? '').length * 1000, usedPercentage: 0 } as IContextWindowState;
      return {
        getState: () => state,
        reset: () => undefined,
        shouldAutoCompact: () => false,
        updateFromHistory: (messages: readonly unknown[]) => (state = { ...state, usedTokens: messages.length }),
      } as unknown as ReturnType<ContextWindowFactory>;
    };
    bind(ContextWindow).toConstantValue(factory);
  },
});

describe('session state', () => {
  it('switches model and provider between runs, keeps history, rebuilds the context window', async () => {
    const first = new ScriptedProvider({ turns: [{ text: 'one' }] });
    const second = new ScriptedProvider({ turns: [{ text: 'two' }] });
    const kernel = await createKernel({ plugins: [scriptedProvider(first), sizedByModel] });
    const session = kernel.createSession({ model: 'abc' });
    expect(session.getContextState()?.maxTokens).toBe(3000);
    await session.run('hi');
    session.setModel('longer-model', { provider: second });
    expect(session.getModel()).toBe('longer-model');
    expect(session.getProvider()).toBe(second);
    expect(session.getContextState()?.maxTokens).toBe(12_000);
    expect(await session.run('again')).toBe('two');
    expect(second.requests[0]!.model).toBe('longer-model');
    expect(second.requests[0]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    await kernel.shutdown();
  });

  it('refuses a model switch during a run', async () => {
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [{ text: 'slow', delayMs: 20 }] })] });
    const session = kernel.createSession();
    const running = session.run('go');
    expect(() => session.setModel('other')).toThrow(/busy|running/i);
    await running;
    await kernel.shutdown();
  });

  it('limitPermissionModes: a mode outside the limit is refused with a typed error, whoever asks; the current mode falls back to default', async () => {
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] })] });
    const session = kernel.createSession({ permissionMode: 'bypassPermissions' });
    expect(session.allowsPermissionMode('bypassPermissions')).toBe(true);
    session.limitPermissionModes(['default', 'acceptEdits', 'plan']);
    expect(session.getPermissionMode()).toBe('default');
    expect(session.allowsPermissionMode('bypassPermissions')).toBe(false);
    expect(() => session.setPermissionMode('bypassPermissions')).toThrow(expect.objectContaining({ code: 'permission_mode_not_allowed', category: 'permission' }));
    expect(session.getPermissionMode()).toBe('default');
    session.setPermissionMode('plan');
    expect(session.getPermissionMode()).toBe('plan');
    expect(() => session.limitPermissionModes(['plan'])).toThrow(/must include "default"/);
    await kernel.shutdown();
  });

  it('resumes a stored session: same id, history and creation time; the next run continues it', async () => {
    const store = new InMemorySessionStore();
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [{ text: 'first answer' }, { text: 'second answer' }] }), inMemorySessionStore(store)] });
    const original = kernel.createSession({ systemMessage: 'be brief', cwd: '/project' });
    await original.run('question one');
    await original.shutdown();
    const record = (await store.load(original.sessionId))!;

    const starts: string[] = [];
    kernel.hooks.sessionStart.tap('test:starts', ({ source }) => void starts.push(source));
    const resumed = kernel.resumeSession(record);
    expect(resumed.sessionId).toBe(original.sessionId);
    expect(resumed.cwd).toBe('/project');
    expect(resumed.getHistory()).toEqual(original.getHistory());
    expect(await resumed.run('question two')).toBe('second answer');
    expect(resumed.toRecord().createdAt).toBe(record.createdAt);
    expect(resumed.getHistory().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(starts).toEqual(['resume']);
    await kernel.shutdown();
  });
});

describe('session-local hooks', () => {
  it('runs a tap for one session only, alongside every kernel tap', async () => {
    const { defineTool, toolsPlugin } = await import('./define-tool.js');
    const { z } = await import('zod');
    const ran: string[] = [];
    const tool = defineTool({ name: 'touch', description: 'touch', inputSchema: z.object({}), execute: (_input, context) => (ran.push(context.sessionId), { success: true, output: 'ok' }) });
    const turns = [{ toolCalls: [{ name: 'touch', input: {} }] }, { text: 'done' }];
    const kernelTaps: string[] = [];
    const watcher = definePlugin({
      name: 'watcher',
      register: ({ hooks }) => hooks.preToolUse.tap('watcher', ({ session }) => void kernelTaps.push(session.sessionId)),
    });
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [...turns, ...turns] }), toolsPlugin(tool), watcher] });
    const guarded = kernel.createSession({ sessionId: 'guarded' });
    const open = kernel.createSession({ sessionId: 'open' });
    guarded.localHooks().preToolUse.tap('only-here', () => ({ decision: 'deny', reason: 'not in this session', source: 'hook' }));
    await guarded.run('go');
    await open.run('go');
    expect(ran).toEqual(['open']);
    expect(kernelTaps).toEqual(['guarded', 'open']);
    expect(kernel.hooks.preToolUse.taps.map((tap) => tap.name)).toEqual(['watcher']);
    // The kernel still tracks the session with its own hooks: shutdown reaches it.
    await kernel.shutdown();
    await expect(guarded.run('again')).rejects.toMatchObject({ code: 'session_closed' });
  });
});

describe('Approvals (the one approval chain)', () => {
  const request = (signal = new AbortController().signal) => ({ toolName: 'Bash', input: { command: 'ls' }, sessionId: 's', toolCallId: 't', signal });

  it('asks a plugin’s own asker first, then the bound ApprovalHandler, else refuses', async () => {
    const { ApprovalHandler, Approvals } = await import('@tessera/contracts');
    const { recordingApprovals } = await import('./testing/plugins.js');
    const bare = await createKernel({ plugins: [scriptedProvider({ turns: [] })] });
    expect(await bare.createSession().services.get(Approvals).request(request())).toMatchObject({ answer: false, via: 'none' });

    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), recordingApprovals(true)] });
    const approvals = kernel.createSession().services.get(Approvals);
    expect(await approvals.request(request())).toEqual({ answer: true, via: 'approvalHandler' });
    expect(await approvals.request(request(), [undefined, { via: 'permissionHandler', ask: () => 'allow-session' }])).toEqual({ answer: 'allow-session', via: 'permissionHandler' });
    expect(await approvals.request(request(), [{ via: 'broken', ask: () => Promise.reject(new Error('ui gone')) }])).toMatchObject({ answer: false, via: 'error', reason: expect.stringContaining('ui gone') });

    const controller = new AbortController();
    const waiting = approvals.request(request(controller.signal), [{ via: 'slow', ask: () => new Promise(() => undefined) }]);
    controller.abort();
    expect(await waiting).toMatchObject({ answer: false, via: 'aborted' });

    // A rebound handler is what sessions created afterwards ask.
    kernel.container.rebind(ApprovalHandler).toConstantValue({ requestApproval: async () => false });
    expect(await kernel.createSession().services.get(Approvals).request(request())).toEqual({ answer: false, via: 'approvalHandler' });
    expect(await approvals.request(request())).toEqual({ answer: true, via: 'approvalHandler' });
    await kernel.shutdown();
    await bare.shutdown();
  });
});

describe('persistence tells the store what changed', () => {
  it('passes appendedFrom after each run, and rewritten after a compaction', async () => {
    const { Compaction } = await import('@tessera/contracts');
    const saves: Array<{ entries: number; appendedFrom: number; rewritten: boolean }> = [];
    const store = new (class extends InMemorySessionStore {
      override save(record: Parameters<InMemorySessionStore['save']>[0], change?: { appendedFrom: number; rewritten: boolean }) {
        saves.push({ entries: record.history.length, appendedFrom: change!.appendedFrom, rewritten: change!.rewritten });
        return super.save(record);
      }
    })();
    const compaction = definePlugin({
      name: 'tiny-compaction',
      provides: [Compaction],
      register: ({ bind }) => void bind(Compaction).toConstantValue({ compact: async () => ({ summary: 'earlier: greetings' }) }),
    });
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] }), inMemorySessionStore(store), compaction] });
    const session = kernel.createSession();
    await session.run('one');
    await session.run('two');
    await session.compact();
    await session.run('three');
    expect(saves).toEqual([
      { entries: 2, appendedFrom: 0, rewritten: false },
      { entries: 4, appendedFrom: 2, rewritten: false },
      { entries: 3, appendedFrom: 0, rewritten: true },
    ]);
    await kernel.shutdown();
  });
});
