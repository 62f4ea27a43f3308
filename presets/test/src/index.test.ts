import { describe, expect, it } from 'vitest';
import {
  ApprovalHandler,
  Clock,
  PermissionPolicy,
  Provider,
  SessionLogger,
  SessionStore,
  type ISessionRecord,
  type SessionStore as SessionStoreService,
} from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { FakeClock, recordingApprovals, RecordingApprovalHandler } from '@tessera/kernel/testing';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from './index.js';

describe('testPreset', () => {
  it('boots and resolves every token it provides', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'hello' }] }) });
    for (const token of [Provider, SessionStore, SessionLogger, PermissionPolicy, Clock]) {
      expect(kernel.get(token as symbol)).toBeDefined();
    }
    expect(kernel.get(Clock)).toBeInstanceOf(FakeClock);
    expect(await kernel.get(PermissionPolicy).evaluate({ toolName: 'Bash', input: {}, mode: 'default', cwd: '/', sessionId: 's' })).toMatchObject({ decision: 'auto' });
    expect(await kernel.createSession().run('hi')).toBe('hello');
    await kernel.shutdown();
  });

  it('swaps one subsystem with replace', async () => {
    const saved: ISessionRecord[] = [];
    const store: SessionStoreService = { save: (record) => void saved.push(record), load: () => undefined, list: () => [], delete: () => {} };
    const kernel = await createKernel({
      plugins: testPreset({
        turns: [{ text: 'ok' }],
        replace: [definePlugin({ name: 'my-store', provides: [SessionStore], register: ({ bind }) => void bind(SessionStore).toConstantValue(store) })],
      }),
    });
    expect(kernel.describe().plugins.map((plugin) => plugin.name)).not.toContain('session-store-memory');
    await kernel.createSession({ sessionId: 'r' }).run('go');
    expect(saved.map((record) => record.id)).toEqual(['r']);
  });

  it('uses a given provider instance and appends extra plugins', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'mine' }] });
    const kernel = await createKernel({ plugins: testPreset({ provider, plugins: [recordingApprovals(false)] }) });
    expect(await kernel.createSession().run('x')).toBe('mine');
    expect(provider.requests).toHaveLength(1);
    expect(kernel.get(ApprovalHandler)).toBeInstanceOf(RecordingApprovalHandler);
  });
});
