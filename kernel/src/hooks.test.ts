import { describe, expect, it, vi } from 'vitest';
import { noSessionServices } from '@tessera/contracts';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { createHooks } from './hooks.js';
import { Session } from './session.js';
import { Stage } from './stage.js';

const fakeSession = { sessionId: 's', cwd: '/', services: noSessionServices, getPermissionMode: () => 'default' as const, getHistory: () => [] };

describe('hooks', () => {
  it('is one frozen object per kernel', () => {
    const hooks = createHooks();
    expect(Object.isFrozen(hooks)).toBe(true);
    expect(() => {
      (hooks as unknown as Record<string, unknown>).extra = 1;
    }).toThrow();
    expect(createHooks()).not.toBe(hooks);
  });

  it('runs Guard taps before Default before Observe, whatever the tap order', async () => {
    const hooks = createHooks();
    const order: string[] = [];
    hooks.sessionStart.tap({ name: 'observer', stage: Stage.Observe }, () => void order.push('observe'));
    hooks.sessionStart.tap('default', () => void order.push('default'));
    hooks.sessionStart.tap({ name: 'guard', stage: Stage.Guard }, () => void order.push('guard'));
    await hooks.sessionStart.promise({ session: fakeSession, source: 'startup' });
    expect(order).toEqual(['guard', 'default', 'observe']);
  });

  it('merges partial waterfall results into the context', async () => {
    const hooks = createHooks();
    hooks.userPromptSubmit.tap('a', () => ({ additionalContext: ['from a'] }));
    hooks.userPromptSubmit.tapPromise('b', async ({ additionalContext }) => ({ additionalContext: [...additionalContext, 'from b'] }));
    hooks.userPromptSubmit.tapAsync('c', (context, callback) => callback(null, { prompt: `${context.prompt}!` }));
    hooks.userPromptSubmit.tap('d', () => undefined);
    const result = await hooks.userPromptSubmit.promise({ session: fakeSession, prompt: 'hi', additionalContext: [] });
    expect(result).toEqual({ session: fakeSession, prompt: 'hi!', additionalContext: ['from a', 'from b'] });
  });

  it('isolates throwing observers of every tap kind and reports them', async () => {
    const hooks = createHooks();
    const reported: string[] = [];
    hooks.observerError.tap('collect', ({ hook, tap, error }) => void reported.push(`${hook}/${tap}: ${(error as Error).message}`));
    hooks.notification.tap({ name: 'sync', stage: Stage.Observe }, () => {
      throw new Error('s');
    });
    hooks.notification.tapPromise({ name: 'promise', stage: Stage.Observe }, async () => {
      throw new Error('p');
    });
    hooks.notification.tapAsync({ name: 'async', stage: Stage.Observe }, (_context, callback) => callback(new Error('a')));
    const after = vi.fn();
    hooks.notification.tap({ name: 'after', stage: Stage.Observe + 1 }, after);
    await hooks.notification.promise({ message: 'm', notificationType: 'n' });
    expect(reported).toEqual(['notification/sync: s', 'notification/promise: p', 'notification/async: a']);
    expect(after).toHaveBeenCalled();
  });

  it('falls back to a process warning when nobody listens for observer errors', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const hooks = createHooks();
    hooks.textDelta.tap({ name: 'flaky', stage: Stage.Observe }, () => {
      throw new Error('boom');
    });
    expect(() => hooks.textDelta.call({ session: fakeSession, round: 1, delta: 'x' })).not.toThrow();
    expect(String(warn.mock.calls[0]![0])).toContain('Observer tap "flaky" on hook "textDelta" threw');
    warn.mockRestore();
  });

  it('lets non-observer errors propagate', async () => {
    const hooks = createHooks();
    hooks.sessionStart.tap('strict', () => {
      throw new Error('nope');
    });
    await expect(hooks.sessionStart.promise({ session: fakeSession, source: 'startup' })).rejects.toThrow('nope');
  });

  it('keeps a turn going when an observer on the hot path throws', async () => {
    const hooks = createHooks();
    const reported = vi.fn();
    hooks.observerError.tap('collect', reported);
    for (const hook of [hooks.textDelta, hooks.historyAppend]) {
      hook.tap({ name: 'broken', stage: Stage.Observe }, () => {
        throw new Error('observer bug');
      });
    }
    hooks.afterProviderResponse.tapPromise({ name: 'broken', stage: Stage.Observe }, () => Promise.reject(new Error('observer bug')));
    const session = new Session({ provider: new ScriptedProvider({ turns: [{ text: 'fine' }] }), hooks });
    expect(await session.run('go')).toBe('fine');
    expect(reported.mock.calls.length).toBeGreaterThanOrEqual(4);
  });
});
