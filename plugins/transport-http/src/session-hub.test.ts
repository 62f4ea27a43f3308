import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHandler } from '@tessera/contracts';
import { createKernel, definePlugin, type Kernel } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { testPreset } from '@tessera/preset-test';
import { ApprovalRouter, kernelSessionFactory, type SessionCluster, type SessionFactory, type StoredSessionHead } from '@tessera/session-hub';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionHub, type SessionHubOptions } from './session-hub.js';

// The hub on its own (no server): a kernel with a scripted model and the in-memory store, sessions in a temp root.

const OWNER = 'alice';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  hub: SessionHub;
  root: string;
  /** The heads the fake cluster serves: a session the hub created is stored there. */
  heads: Map<string, StoredSessionHead>;
}

async function setup(options: { cluster?: boolean; hub?: Partial<SessionHubOptions>; wrap?: (sessions: SessionFactory) => SessionFactory } = {}): Promise<Setup> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-hub-')));
  mkdirSync(join(root, 'project'));
  const approvals = new ApprovalRouter();
  const kernel: Kernel = await createKernel({
    plugins: testPreset({
      turns: [],
      replace: [permissionsPlugin({ rules: { allow: [], ask: [], deny: [] }, settingsRoot: root })],
      plugins: [definePlugin({ name: 'router', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) })],
    }),
  });
  const heads = new Map<string, StoredSessionHead>();
  const sessions = kernelSessionFactory(kernel);
  const hub = new SessionHub({
    sessions: options.wrap ? options.wrap(sessions) : sessions,
    approvals,
    allowedRoots: [root],
    defaultCwd: join(root, 'project'),
    ...(options.cluster ? { cluster: memoryCluster(heads) } : {}),
    ...options.hub,
  });
  cleanups.push(async () => {
    await hub.shutdown();
    await kernel.shutdown();
    rmSync(root, { recursive: true, force: true });
  });
  return { hub, root, heads };
}

/** A cluster of one replica over the heads given: every copy is current, every lock free, no turn runs elsewhere. */
function memoryCluster(heads: Map<string, StoredSessionHead>): SessionCluster {
  return {
    lock: async (sessionId) => ({ sessionId, signal: new AbortController().signal, release: async () => undefined }),
    isCurrent: async () => true,
    head: async (sessionId) => heads.get(sessionId),
    heads: async () => [...heads.values()],
    publish: () => undefined,
    runningTurn: async () => undefined,
    follow: async () => () => undefined,
    control: async () => ({ served: false }),
    serveControl: async () => () => undefined,
  };
}

/** Creates a session of `OWNER` and stores its head, as a shared store would. */
async function stored({ hub, root, heads }: Setup): Promise<string> {
  const { id, createdAt } = await hub.create(OWNER, {});
  heads.set(id, { id, cwd: join(root, 'project'), createdAt, updatedAt: createdAt, fields: { serverOwner: OWNER }, revision: 1, messageCount: 0 });
  return id;
}

describe('SessionHub: maxSessionsPerOwner under concurrent opens', () => {
  it('two creates for one owner at the same moment never both take the last slot; a failed open gives its slot back; resuming a live session needs none', async () => {
    let failNext = false;
    const { hub } = await setup({
      hub: { maxSessionsPerOwner: 1 },
      wrap: (sessions) => ({
        ...sessions,
        open: async (request) => {
          if (failNext) {
            failNext = false;
            throw new Error('the factory failed');
          }
          return sessions.open(request);
        },
      }),
    });
    failNext = true;
    await expect(hub.create(OWNER, {})).rejects.toThrow('the factory failed');
    const results = await Promise.allSettled([hub.create(OWNER, {}), hub.create(OWNER, {})]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((result) => result.status === 'rejected')).toMatchObject({ reason: { code: 'too_many_sessions', status: 429 } });
    expect(hub.list(OWNER)).toHaveLength(1);
    // Resuming the session already live adds none: it needs no free slot.
    const live = hub.list(OWNER)[0]!.id;
    expect((await hub.create(OWNER, { resume: live })).id).toBe(live);
    // Another owner has its own slots.
    await hub.create('bob', {});
  });

  it('replica mode: two loads that make room at the same moment let one idle copy go and take its slot once, never twice', async () => {
    const replica = await setup({ cluster: true, hub: { maxSessionsPerOwner: 1 } });
    const { hub } = replica;
    // Each create lets the one before go: `third` is the live copy, the other two are only stored.
    const first = await stored(replica);
    const second = await stored(replica);
    const third = await stored(replica);
    expect(hub.list(OWNER).map((session) => session.id)).toEqual([third]);
    // Both loads find the owner at its limit with one idle copy to let go; only one may have the room it frees.
    const results = await Promise.allSettled([hub.open(OWNER, first), hub.open(OWNER, second)]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((result) => result.status === 'rejected')).toMatchObject({ reason: { code: 'too_many_sessions', status: 429 } });
    expect(hub.size).toBe(1);
    expect(hub.list(OWNER)).toHaveLength(1);
  });
});
