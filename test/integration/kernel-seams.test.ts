import {
  Clock,
  Compaction,
  ContextWindow,
  PermissionPolicy,
  Provider,
  SessionLogger,
  SessionStore,
  type ContextWindowFactory,
  type IContextWindowState,
} from '@tessera/contracts';
import { createKernel, type Session } from '@tessera/kernel';
import { AllowAllPermissionPolicy, FakeClock, InMemorySessionStore, RecordingSessionLogger } from '@tessera/kernel/testing';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { describe, expect, it } from 'vitest';

// The kernel seams as a user meets them: swapping one subsystem with `rebind` after the
// kernel is composed, and composing the same plugin values into several kernels.

function windowOf(maxTokens: number): ContextWindowFactory {
  return () => {
    const state = { usedTokens: 0, maxTokens, usedPercentage: 0 } as IContextWindowState;
    return { getState: () => state, reset: () => undefined, shouldAutoCompact: () => false, updateFromHistory: () => state } as unknown as ReturnType<ContextWindowFactory>;
  };
}

/** For each token the kernel resolves per session: what to rebind it to, and how a session shows it. */
const swaps: Array<{ token: string; rebind: (kernel: Awaited<ReturnType<typeof createKernel>>) => unknown; seen: (session: Session) => Promise<unknown> | unknown }> = [
  {
    token: 'Provider',
    rebind: (kernel) => {
      const provider = new ScriptedProvider({ turns: [{ text: 'from the new provider' }] });
      kernel.container.rebind(Provider).toConstantValue(provider);
      return provider;
    },
    seen: (session) => session.getProvider(),
  },
  {
    token: 'SessionStore',
    rebind: (kernel) => {
      const store = new InMemorySessionStore();
      kernel.container.rebind(SessionStore).toConstantValue(store);
      return store;
    },
    seen: (session) => session.options.sessionStore,
  },
  {
    token: 'SessionLogger',
    rebind: (kernel) => {
      const logger = new RecordingSessionLogger();
      kernel.container.rebind(SessionLogger).toConstantValue(logger);
      return logger;
    },
    seen: (session) => session.options.sessionLogger,
  },
  {
    token: 'Clock',
    rebind: (kernel) => {
      const clock = new FakeClock(1_000_000);
      kernel.container.rebind(Clock).toConstantValue(clock);
      return clock;
    },
    seen: (session) => session.clock,
  },
  {
    token: 'PermissionPolicy',
    rebind: (kernel) => {
      const policy = new AllowAllPermissionPolicy();
      kernel.container.rebind(PermissionPolicy).toConstantValue(policy);
      return policy;
    },
    seen: (session) => session.services.get(PermissionPolicy),
  },
  {
    token: 'Compaction',
    rebind: (kernel) => {
      const compaction = { compact: async () => ({ summary: 'short' }) };
      if (kernel.container.isBound(Compaction)) kernel.container.rebind(Compaction).toConstantValue(compaction);
      else kernel.container.bind(Compaction).toConstantValue(compaction);
      return compaction;
    },
    seen: (session) => session.options.compaction,
  },
];

describe('rebind after createKernel', () => {
  it.each(swaps)('$token: reaches sessions created afterwards, never one created before', async ({ rebind, seen }) => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }, { text: 'b' }] }) });
    const before = kernel.createSession();
    const earlier = await seen(before);
    const replacement = rebind(kernel);
    const after = kernel.createSession();
    expect(await seen(after)).toBe(replacement);
    expect(await seen(before)).toBe(earlier);
    expect(earlier).not.toBe(replacement);
    await kernel.shutdown();
  });

  it('ContextWindow: a new factory sizes sessions created afterwards', async () => {
    const kernel = await createKernel({ plugins: testPreset({ turns: [] }) });
    kernel.container.bind(ContextWindow).toConstantValue(windowOf(1000));
    const before = kernel.createSession();
    kernel.container.rebind(ContextWindow).toConstantValue(windowOf(2000));
    const after = kernel.createSession();
    expect(before.getContextState()?.maxTokens).toBe(1000);
    expect(after.getContextState()?.maxTokens).toBe(2000);
    await kernel.shutdown();
  });
});

describe('plugin values are reusable', () => {
  it('the same test preset composed into two kernels in a row gives each its own services, and both run', async () => {
    const plugins = testPreset({ turns: [{ text: 'hello' }] });
    const first = await createKernel({ plugins });
    const firstStore = first.get(SessionStore);
    const firstClock = first.get(Clock);
    expect(await first.createSession().run('hi')).toBe('hello');
    await first.shutdown();

    const second = await createKernel({ plugins });
    expect(second.get(SessionStore)).not.toBe(firstStore);
    expect(second.get(Clock)).not.toBe(firstClock);
    expect(await second.createSession().run('hi')).toBe('hello');
    expect(await (second.get(SessionStore) as InMemorySessionStore).list()).toHaveLength(1);
    await second.shutdown();
  });
});

describe('kernel.rebind', () => {
  it('swaps a service the container built and releases asynchronously (a JSONL store in use)', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { jsonlSessionStore } = await import('@tessera/plugin-session-store-jsonl');
    const dir = await mkdtemp(join(tmpdir(), 'tessera-rebind-'));
    try {
      const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: 'a' }], replace: [jsonlSessionStore({ agentDir: dir, terminalId: null })] }) });
      await kernel.createSession().run('hi');
      const memory = new InMemorySessionStore();
      (await kernel.rebind(SessionStore)).toConstantValue(memory);
      expect(kernel.createSession().options.sessionStore).toBe(memory);
      await kernel.shutdown();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
