import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHandler } from '@tessera/contracts';
import { createKernel, definePlugin, type InteractiveSession, type Kernel } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { testPreset } from '@tessera/preset-test';
import { ApprovalRouter, kernelSessionFactory, type SessionCluster, type SessionFactory, type SessionOpenOptions, type StoredSessionHead } from '@tessera/session-hub';
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

async function setup(options: { cluster?: boolean | ClusterState; hub?: Partial<SessionHubOptions>; wrap?: (sessions: SessionFactory) => SessionFactory } = {}): Promise<Setup> {
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
    ...(options.cluster ? { cluster: memoryCluster(heads, options.cluster === true ? {} : options.cluster) } : {}),
    ...options.hub,
  });
  cleanups.push(async () => {
    await hub.shutdown();
    await kernel.shutdown();
    rmSync(root, { recursive: true, force: true });
  });
  return { hub, root, heads };
}

/** What the fake cluster reports of the other replicas. */
interface ClusterState {
  /** Per session id, the turn another replica runs in it (followed here, its parts never come). */
  runningTurns?: Map<string, string>;
  /** Sessions another replica saved since this one loaded them: their copy here is not current. */
  savedElsewhere?: Set<string>;
  /** Reading a stored head waits for this (a slow shared store). */
  headsWait?: Promise<void>;
}

/** A cluster over the heads given: every lock free; copies are current and no turn runs elsewhere unless `state` says so. */
function memoryCluster(heads: Map<string, StoredSessionHead>, state: ClusterState = {}): SessionCluster {
  return {
    lock: async (sessionId) => ({ sessionId, signal: new AbortController().signal, release: async () => undefined }),
    isCurrent: async (sessionId) => !state.savedElsewhere?.has(sessionId),
    head: async (sessionId) => {
      await state.headsWait;
      return heads.get(sessionId);
    },
    heads: async () => [...heads.values()],
    publish: () => undefined,
    runningTurn: async (sessionId) => state.runningTurns?.get(sessionId),
    follow: async () => () => undefined,
    control: async () => ({ served: false }),
    serveControl: async () => () => undefined,
  };
}

/**
 * Holds the factory's opens that `when` picks: each opens, then waits until `release` is called.
 * `reached` resolves with the first held session once it is open.
 */
function holdOpens(when: (request: SessionOpenOptions) => boolean): { wrap: (sessions: SessionFactory) => SessionFactory; reached: Promise<InteractiveSession>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reach!: (interactive: InteractiveSession) => void;
  const reached = new Promise<InteractiveSession>((resolve) => (reach = resolve));
  const wrap = (sessions: SessionFactory): SessionFactory => ({
    ...sessions,
    open: async (request) => {
      const interactive = await sessions.open(request);
      if (when(request)) {
        reach(interactive);
        await released;
      }
      return interactive;
    },
  });
  return { wrap, reached, release };
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

describe('SessionHub: maxConcurrentTurnsPerOwner', () => {
  it('replica mode: a turn another replica runs, followed here, counts toward the limit', async () => {
    const runningTurns = new Map<string, string>();
    const replica = await setup({ cluster: { runningTurns }, hub: { maxConcurrentTurnsPerOwner: 1 } });
    const { hub } = replica;
    const busy = await stored(replica);
    const idle = await stored(replica);
    runningTurns.set(busy, 'turn-elsewhere');
    const followed = await hub.attach(OWNER, busy);
    expect(followed).toMatchObject({ id: 'turn-elsewhere', remote: true, done: false });
    await expect(hub.startTurn(OWNER, idle, 'hello')).rejects.toMatchObject({ code: 'too_many_turns', status: 429 });
    expect(hub.turnRefusal(OWNER, 0)).toBeDefined();
    // Its end frees the turn for the owner's other sessions.
    followed!.end();
    expect(hub.turnRefusal(OWNER, 0)).toBeUndefined();
  });
});

describe('SessionHub: opens that end after shutdown began', () => {
  it('a created session is ended, never left live, and the create is refused shutting_down', async () => {
    const held = holdOpens(() => true);
    const { hub } = await setup({ wrap: held.wrap });
    const creating = hub.create(OWNER, {});
    const interactive = await held.reached;
    const shutdown = hub.shutdown();
    held.release();
    await expect(creating).rejects.toMatchObject({ code: 'shutting_down', status: 503 });
    await shutdown;
    expect(hub.size).toBe(0);
    expect(hub.list(OWNER)).toEqual([]);
    await expect(interactive.submit('hello')).rejects.toMatchObject({ code: 'session_closed' });
  });

  it('shutdown resolves only once the session an open brought after it began has been ended', async () => {
    const held = holdOpens(() => true);
    const { hub } = await setup({ wrap: held.wrap });
    const creating = hub.create(OWNER, {});
    creating.catch(() => undefined);
    const interactive = await held.reached;
    let shutDown = false;
    const shutdown = hub.shutdown().then(() => (shutDown = true));
    // Nothing left live to end, but an open is in flight: shutdown waits for it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(shutDown).toBe(false);
    held.release();
    await shutdown;
    // Ended before shutdown resolved, not later by the refused create.
    await expect(interactive.submit('hello')).rejects.toMatchObject({ code: 'session_closed' });
    await expect(creating).rejects.toMatchObject({ code: 'shutting_down' });
  });

  it('replica mode: a load still reading the shared store when shutdown begins opens nothing and is refused', async () => {
    let release!: () => void;
    const state: ClusterState = {};
    let opens = 0;
    const replica = await setup({
      cluster: state,
      wrap: (sessions) => ({
        ...sessions,
        open: (request) => {
          opens += 1;
          return sessions.open(request);
        },
      }),
    });
    const { hub } = replica;
    const id = await stored(replica);
    // Let go here: the next request loads it from the store.
    await hub.delete(OWNER, id, { keep: true });
    opens = 0;
    state.headsWait = new Promise<void>((resolve) => (release = resolve));
    const loading = hub.open(OWNER, id);
    loading.catch(() => undefined);
    const shutdown = hub.shutdown();
    release();
    await shutdown;
    await expect(loading).rejects.toMatchObject({ code: 'shutting_down', status: 503 });
    expect(opens).toBe(0);
    expect(hub.size).toBe(0);
  });

  it('replica mode: a copy reopened because another replica saved over it is ended too', async () => {
    const savedElsewhere = new Set<string>();
    // Only the reopen is held: the create before it opens a new session.
    const held = holdOpens((request) => request.resumeSessionId !== undefined);
    const replica = await setup({ cluster: { savedElsewhere }, wrap: held.wrap });
    const { hub } = replica;
    const id = await stored(replica);
    savedElsewhere.add(id);
    const opening = hub.open(OWNER, id);
    const reopened = await held.reached;
    const shutdown = hub.shutdown();
    held.release();
    await expect(opening).rejects.toMatchObject({ code: 'shutting_down', status: 503 });
    await shutdown;
    expect(hub.size).toBe(0);
    await expect(reopened.submit('hello')).rejects.toMatchObject({ code: 'session_closed' });
  });
});

describe('SessionHub: resuming one stored session twice at the same moment', () => {
  it('opens it once: both requests get the same live session (two copies would save over each other)', async () => {
    let opens = 0;
    const held = holdOpens((request) => request.resumeSessionId !== undefined);
    const { hub } = await setup({
      wrap: (sessions) => {
        const wrapped = held.wrap(sessions);
        return {
          ...wrapped,
          open: (request) => {
            if (request.resumeSessionId !== undefined) opens += 1;
            return wrapped.open(request);
          },
        };
      },
    });
    const { id } = await hub.create(OWNER, { name: 'kept' });
    // Ended here but kept in the store: it can be resumed.
    await hub.delete(OWNER, id, { keep: true });
    expect(hub.size).toBe(0);
    const first = hub.create(OWNER, { resume: id });
    await held.reached;
    const second = hub.create(OWNER, { resume: id });
    held.release();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBe(b);
    expect(opens).toBe(1);
    expect(hub.list(OWNER).map((session) => session.id)).toEqual([id]);
    // Another owner still finds nothing, live or stored.
    await expect(hub.create('bob', { resume: id })).rejects.toMatchObject({ code: 'session_not_found', status: 404 });
  });
});
