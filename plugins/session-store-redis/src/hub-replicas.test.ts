import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHandler, SessionStore } from '@tessera/contracts';
import { createKernel, definePlugin, type Kernel } from '@tessera/kernel';
import { builtinCommands } from '@tessera/plugin-commands';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import type { ScriptedRequest, ScriptedTurn } from '@tessera/plugin-provider-scripted';
import { builtinTools } from '@tessera/plugin-tools';
import { testPreset } from '@tessera/preset-test';
import { ApprovalRouter, kernelSessionFactory, SessionCluster } from '@tessera/session-hub';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { until } from '../../background-bullmq/src/testing/redis-server.test-helper.js';
import { hasRedisServer, useClusterRedis } from './cluster.test-helper.js';
import { SessionHub, type Turn, type UIChunk } from '@tessera/plugin-transport-http';
import { redisSessionStore, type RedisSessionCluster, type RedisSessionStore } from './index.js';

// Two hubs (replicas) in one process, each with its own kernel and Redis connection, sharing one
// real redis-server, one key prefix and one allowed root: the replica mode of `tessera serve`.

const OWNER = 'alice';
const { cleanups, port } = useClusterRedis();

interface Replica {
  hub: SessionHub;
  kernel: Kernel;
  cluster: SessionCluster;
}

/** The text of a user prompt message; `undefined` for any other message (a tool result). */
function promptOf(message: ScriptedRequest['messages'][number] | undefined): string | undefined {
  if (message?.role !== 'user') return undefined;
  if (typeof message.content === 'string') return message.content;
  return Array.isArray(message.content) && message.content[0]?.type === 'text' ? message.content[0].text : undefined;
}

/**
 * A prompt containing "ask" makes the model call Write, which waits for a permission answer (a
 * turn paused mid-way); "ask twice" calls it again after the first result (a turn paused twice).
 * Any other prompt, and the call after the last tool result, is answered in text.
 */
function model(request: ScriptedRequest): ScriptedTurn {
  const { messages } = request;
  let at = messages.length - 1;
  while (at >= 0 && promptOf(messages[at]) === undefined) at -= 1;
  const prompt = promptOf(messages[at]);
  const results = messages.slice(at + 1).filter((message) => message.role === 'tool').length;
  const writes = prompt?.includes('ask twice') ? 2 : prompt?.includes('ask') ? 1 : 0;
  if (results < writes) return { toolCalls: [{ name: 'Write', input: { file_path: join(tmpdir(), `tessera-replicas-${Date.now()}-${results}.txt`), content: 'x' } }] };
  return { text: results === 0 ? `answer to ${prompt}` : 'answer to a tool result' };
}

/** Two replicas over one prefix; `wrap` may change what B's hub sees of its cluster (a replica slow to handle an announcement). */
async function replicas(options: { maxSessionsPerOwner?: number; wrapB?: (cluster: SessionCluster) => SessionCluster } = {}): Promise<{ a: Replica; b: Replica; root: string; prefix: string }> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-replicas-')));
  mkdirSync(join(root, 'project'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const prefix = `r${Math.random().toString(36).slice(2, 10)}`;
  const make = async (wrap: (cluster: SessionCluster) => SessionCluster = (cluster) => cluster): Promise<Replica> => {
    const approvals = new ApprovalRouter();
    const kernel = await createKernel({
      plugins: testPreset({
        turns: model,
        replace: [
          permissionsPlugin({ rules: { allow: [], ask: [], deny: [] }, settingsRoot: root }),
          redisSessionStore({ connection: `redis://127.0.0.1:${port()}`, prefix, lockTtlMs: 2_000, onWarning: () => undefined }),
        ],
        plugins: [definePlugin({ name: 'router', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue(approvals) }), ...builtinTools(), ...builtinCommands()],
      }),
    });
    const cluster = kernel.get(SessionCluster);
    const hub = new SessionHub({
      sessions: kernelSessionFactory(kernel),
      approvals,
      allowedRoots: [root],
      defaultCwd: join(root, 'project'),
      cluster: wrap(cluster),
      ...(options.maxSessionsPerOwner === undefined ? {} : { maxSessionsPerOwner: options.maxSessionsPerOwner }),
    });
    cleanups.push(async () => {
      await hub.shutdown();
      await kernel.shutdown();
    });
    return { hub, kernel, cluster };
  };
  return { a: await make(), b: await make(options.wrapB), root, prefix };
}

/** The turn's parts as they come, and its end. */
function collect(turn: Turn): { chunks: UIChunk[]; ended: Promise<void> } {
  const chunks: UIChunk[] = [];
  const ended = new Promise<void>((resolve) =>
    turn.follow((chunk) => {
      if (chunk) chunks.push(chunk);
      else resolve();
    }),
  );
  return { chunks, ended };
}

/** Starts a turn on `replica` that stops at its Write ask, and returns it with the ask's id. */
async function pausedTurn(replica: Replica, id: string, prompt: string): Promise<{ turn: Turn; requestId: string }> {
  const turn = await replica.hub.startTurn(OWNER, id, prompt);
  const requestId = await until(() => replica.hub.get(OWNER, id).pendingAsks()[0]?.requestId, 'the Write ask', 5_000);
  return { turn, requestId };
}

/** The user prompts of the stored transcript, as a fresh reader (a third replica) loads it. */
async function storedPrompts(prefix: string, id: string): Promise<string[]> {
  const redis = new Redis({ host: '127.0.0.1', port: port() });
  try {
    const history = await redis.lrange(`${prefix}:session:${id}:history`, 0, -1);
    return history.flatMap((json) => {
      const entry = JSON.parse(json) as { type: string; data?: { content?: unknown } };
      return entry.type === 'user' && typeof entry.data?.content === 'string' ? [entry.data.content] : [];
    });
  } finally {
    redis.disconnect();
  }
}

describe.runIf(hasRedisServer)('SessionHub replica mode: two replicas on one redis-server', () => {
  it('naming a session through POST /v1/sessions {resume, name} on B while a turn runs on A is session_busy, and the turn keeps its entries', async () => {
    const { a, b, prefix } = await replicas();
    const { id } = await a.hub.create(OWNER, {});
    const { turn, requestId } = await pausedTurn(a, id, 'turn on A, ask first');
    const running = collect(turn);
    await expect(b.hub.create(OWNER, { resume: id, name: 'renamed on B' })).rejects.toMatchObject({ code: 'session_busy', status: 409 });
    await a.hub.answer(OWNER, id, requestId, 'allow');
    await running.ended;
    expect(running.chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(await storedPrompts(prefix, id)).toEqual(['turn on A, ask first']);

    // Once the turn ended, the same request names the session, on the newest copy.
    const named = await b.hub.create(OWNER, { resume: id, name: 'renamed on B' });
    expect(named.name).toBe('renamed on B');
    expect(named.interactive.getHistory().some((entry) => entry.type === 'user')).toBe(true);
    expect(await storedPrompts(prefix, id)).toEqual(['turn on A, ask first']);
  });

  it('deleting a session on B stops the turn A runs in it (its tools do not go on), and the session is gone on both', async () => {
    const { a, b, prefix } = await replicas();
    const { id } = await a.hub.create(OWNER, {});
    const { turn } = await pausedTurn(a, id, 'turn on A, ask first');
    const running = collect(turn);
    await b.hub.open(OWNER, id);
    await b.hub.delete(OWNER, id);
    await running.ended;
    expect(running.chunks.some((chunk) => chunk.type === 'abort')).toBe(true);
    expect(a.hub.get(OWNER, id).running).toBe(false);
    expect(await storedPrompts(prefix, id)).toEqual([]);
    await expect(b.hub.open(OWNER, id)).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it('a replica that only read a session ends its copy (DELETE ?keep=true, shutdown) without overwriting the turn another replica runs', async () => {
    const { a, b, prefix } = await replicas();
    const { id } = await a.hub.create(OWNER, {});
    await collect(await a.hub.startTurn(OWNER, id, 'turn 1')).ended;
    // B loads its copy (a GET), then lets it go while A runs turn 2: with no change of its own,
    await b.hub.summary(OWNER, id);
    const second = await pausedTurn(a, id, 'turn 2, ask first');
    const running = collect(second.turn);
    await b.hub.delete(OWNER, id, { keep: true });
    await a.hub.answer(OWNER, id, second.requestId, 'allow');
    await running.ended;
    expect(await storedPrompts(prefix, id)).toEqual(['turn 1', 'turn 2, ask first']);

    // and at B's shutdown (a rolling restart), even with a change of its own it could not save then.
    await b.hub.summary(OWNER, id);
    b.hub.get(OWNER, id).interactive.getSession().setRecordField('changedOnB', true);
    const third = await pausedTurn(a, id, 'turn 3, ask first');
    const runningThird = collect(third.turn);
    await b.hub.shutdown();
    await a.hub.answer(OWNER, id, third.requestId, 'allow');
    await runningThird.ended;
    expect(await storedPrompts(prefix, id)).toEqual(['turn 1', 'turn 2, ask first', 'turn 3, ask first']);
  });

  it('a WebSocket watcher on B gets a whole turn run on A even when B handles the turn-start announcement after the turn ended', async () => {
    let announced: (() => void) | undefined;
    const late = new Promise<void>((resolve) => (announced = resolve));
    // B's hub gets each announcement only once `late` resolves: a replica busy while the turn ran.
    const { a, b } = await replicas({
      wrapB: (cluster) =>
        Object.assign(Object.create(cluster) as SessionCluster, {
          watchTurns: (sessionId: string, listener: (turnId: string) => void) => cluster.watchTurns!(sessionId, (turnId) => void late.then(() => listener(turnId))),
        }),
    });
    const { id } = await a.hub.create(OWNER, {});
    const seen: UIChunk[] = [];
    const stop = await b.hub.watch(OWNER, id, (chunk) => seen.push(chunk));
    cleanups.push(stop);
    const ran = collect(await a.hub.startTurn(OWNER, id, 'a short turn'));
    await ran.ended;
    announced!();
    await until(() => seen.some((chunk) => chunk.type === 'finish') || undefined, "the turn's finish on B's watcher", 5_000);
    expect(seen[0]).toMatchObject({ type: 'start' });
    expect(seen.at(-1)).toMatchObject({ type: 'finish' });
    expect(JSON.stringify(seen)).toContain('answer to a short turn');
  });

  it("a WebSocket watcher on B gets the next turn too when its start is announced before B has read the previous turn's end", async () => {
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // B reads the first turn's end only once `held` resolves: the next turn's announcement overtakes it.
    let ends = 0;
    const { a, b } = await replicas({
      wrapB: (cluster) =>
        Object.assign(Object.create(cluster) as SessionCluster, {
          follow: (sessionId: string, turnId: string, listener: Parameters<SessionCluster['follow']>[2]) =>
            cluster.follow(sessionId, turnId, (event) => {
              if (event.type === 'turn-end' && ends++ === 0) void held.then(() => listener(event));
              else listener(event);
            }),
        }),
    });
    const { id } = await a.hub.create(OWNER, {});
    const seen: UIChunk[] = [];
    cleanups.push(await b.hub.watch(OWNER, id, (chunk) => seen.push(chunk)));
    await collect(await a.hub.startTurn(OWNER, id, 'first turn')).ended;
    await until(() => (JSON.stringify(seen).includes('answer to first turn') ? true : undefined), "the first turn's text on B", 5_000);
    await collect(await a.hub.startTurn(OWNER, id, 'second turn')).ended;
    release!();
    await until(() => (JSON.stringify(seen).includes('answer to second turn') ? true : undefined), "the second turn's text on B", 5_000);
    expect(seen.filter((chunk) => chunk.type === 'finish')).toHaveLength(2);
  });

  it("B, watching the session, starts the next turn as soon as A's turn ended although its follower has not read that end yet", async () => {
    // B's follower delivers the end of A's turn 200 ms late (a follower catching up).
    const { a, b, prefix } = await replicas({
      wrapB: (cluster) =>
        Object.assign(Object.create(cluster) as SessionCluster, {
          follow: (sessionId: string, turnId: string, listener: Parameters<SessionCluster['follow']>[2]) =>
            cluster.follow(sessionId, turnId, (event) => {
              if (event.type === 'turn-end') setTimeout(() => listener(event), 200);
              else listener(event);
            }),
        }),
    });
    const { id } = await a.hub.create(OWNER, {});
    const seen: UIChunk[] = [];
    cleanups.push(await b.hub.watch(OWNER, id, (chunk) => seen.push(chunk)));
    await collect(await a.hub.startTurn(OWNER, id, 'prompt on A')).ended;
    await until(() => (b.hub.get(OWNER, id).turn?.remote ? true : undefined), "B to follow A's turn", 5_000);
    expect(b.hub.get(OWNER, id).running).toBe(true);
    // The client got A's end and sends its next prompt to B at once: no turn runs anywhere.
    await collect(await b.hub.startTurn(OWNER, id, 'prompt on B')).ended;
    expect(await storedPrompts(prefix, id)).toEqual(['prompt on A', 'prompt on B']);
    // B's watcher got A's turn whole before its own.
    expect(seen.filter((chunk) => chunk.type === 'finish')).toHaveLength(2);
    expect(seen.map((chunk) => chunk.type).indexOf('finish')).toBeLessThan(seen.map((chunk) => chunk.type).lastIndexOf('start'));
  });

  it("a WebSocket watcher on B whose follower starts only after A's next turn began gets both turns whole, with no 'replica stopped' error", async () => {
    let release: (() => void) | undefined;
    const behind = new Promise<void>((resolve) => (release = resolve));
    // B's first follower starts reading only once `behind` resolves: A has started its next turn by then.
    let follows = 0;
    const { a, b } = await replicas({
      wrapB: (cluster) =>
        Object.assign(Object.create(cluster) as SessionCluster, {
          follow: async (sessionId: string, turnId: string, listener: Parameters<SessionCluster['follow']>[2]) => {
            if (follows++ === 0) await behind;
            return cluster.follow(sessionId, turnId, listener);
          },
        }),
    });
    const { id } = await a.hub.create(OWNER, {});
    const seen: UIChunk[] = [];
    cleanups.push(await b.hub.watch(OWNER, id, (chunk) => seen.push(chunk)));
    await collect(await a.hub.startTurn(OWNER, id, 'first on A')).ended;
    // The client's next prompt, to A again, at once.
    const second = collect(await a.hub.startTurn(OWNER, id, 'second on A'));
    release!();
    await second.ended;
    await until(() => (seen.filter((chunk) => chunk.type === 'finish').length === 2 ? true : undefined), 'both turns on B', 5_000);
    expect(seen.filter((chunk) => chunk.type === 'error')).toEqual([]);
    expect(JSON.stringify(seen)).toContain('answer to first on A');
    expect(JSON.stringify(seen)).toContain('answer to second on A');
  });

  it("reading a token's stored sessions on a replica never locks it out (too_many_sessions): idle copies are let go, least recently used first", async () => {
    const { a, b } = await replicas({ maxSessionsPerOwner: 2 });
    const first = await a.hub.create(OWNER, {});
    const second = await a.hub.create(OWNER, {});
    const third = await b.hub.create(OWNER, {});
    expect((await b.hub.summary(OWNER, first.id)).id).toBe(first.id);
    expect((await b.hub.summary(OWNER, second.id)).id).toBe(second.id);
    expect(b.hub.size).toBe(2);
    // Used in the order third (created), first, second: the third, least recently used, was let go.
    const isLive = (id: string): boolean => {
      try {
        return b.hub.get(OWNER, id) !== undefined;
      } catch {
        return false;
      }
    };
    const liveOnB = (): string[] => [first.id, second.id, third.id].filter(isLive);
    expect(liveOnB()).toEqual([first.id, second.id]);
    // The copy let go is reopened on its next use, and now the first is the least recently used.
    expect((await b.hub.summary(OWNER, third.id)).id).toBe(third.id);
    expect(b.hub.size).toBe(2);
    expect(liveOnB()).toEqual([second.id, third.id]);
    // A copy in use (a turn waiting for its ask) is never let go: past the limit, the refusal stands.
    const { requestId } = await pausedTurn(b, third.id, 'keep me, ask first');
    const watching = await b.hub.watch(OWNER, second.id, () => undefined);
    cleanups.push(watching);
    await expect(b.hub.summary(OWNER, first.id)).rejects.toMatchObject({ code: 'too_many_sessions', status: 429 });
    await b.hub.answer(OWNER, third.id, requestId, 'allow');
  });

  it('stops following a turn of another replica when the session leaves this replica (DELETE ?keep=true): its Redis connection closes', async () => {
    const { a, b } = await replicas();
    const { id } = await a.hub.create(OWNER, {});
    await b.hub.summary(OWNER, id);
    const { turn, requestId } = await pausedTurn(a, id, 'followed, ask first');
    const running = collect(turn);
    const observer = new Redis({ host: '127.0.0.1', port: port() });
    cleanups.push(() => observer.disconnect());
    const connections = async (): Promise<number> => String(await observer.client('LIST')).trim().split('\n').length;
    const before = await connections();
    const followed = await b.hub.attach(OWNER, id);
    expect(followed?.remote).toBe(true);
    await until(async () => (await connections()) === before + 1 || undefined, "the follower's connection", 5_000);
    await b.hub.delete(OWNER, id, { keep: true });
    expect(followed!.done).toBe(true);
    await until(async () => (await connections()) === before || undefined, "the follower's connection to close", 5_000);
    await a.hub.answer(OWNER, id, requestId, 'allow');
    await running.ended;
  });

  it('making room never lets go of a copy a request is opening: a turn started while its stale copy is reopened runs, and another idle copy goes', async () => {
    // B reads the stored head of `held` only once `release` is called (a slow reopen); `sought` is told when B has read the head of `watched`.
    let held: string | undefined;
    let watched: string | undefined;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reopening!: () => void;
    const reopeningStarted = new Promise<void>((resolve) => (reopening = resolve));
    let sought!: () => void;
    const headRead = new Promise<void>((resolve) => (sought = resolve));
    const { a, b } = await replicas({
      maxSessionsPerOwner: 2,
      wrapB: (cluster) =>
        Object.assign(Object.create(cluster) as SessionCluster, {
          head: async (sessionId: string) => {
            if (sessionId === held) {
              reopening();
              await released;
            }
            const head = await cluster.head(sessionId);
            if (sessionId === watched) sought();
            return head;
          },
        }),
    });
    const first = await a.hub.create(OWNER, {});
    const second = await a.hub.create(OWNER, {});
    const third = await a.hub.create(OWNER, {});
    await b.hub.summary(OWNER, first.id);
    await b.hub.summary(OWNER, second.id);
    // A turn on A: B's copy of the first session is stale, so B reopens it (in its gate) before a turn there.
    await collect(await a.hub.startTurn(OWNER, first.id, 'turn on A')).ended;
    held = first.id;
    const starting = b.hub.startTurn(OWNER, first.id, 'turn on B');
    await reopeningStarted;
    // The second copy used since: the first, still being reopened for the turn, is the least recently used.
    await b.hub.summary(OWNER, second.id);
    watched = third.id;
    const loading = b.hub.summary(OWNER, third.id);
    // B read the third session's head: it has chosen which copy to let go. Only now may the reopen go on.
    await headRead;
    release();
    const turn = await starting;
    expect((await loading).id).toBe(third.id);
    const ran = collect(turn);
    await ran.ended;
    expect(ran.chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(JSON.stringify(ran.chunks)).toContain('answer to turn on B');
    const isLive = (id: string): boolean => {
      try {
        return b.hub.get(OWNER, id) !== undefined;
      } catch {
        return false;
      }
    };
    expect([first.id, second.id, third.id].filter(isLive)).toEqual([first.id, third.id]);
  });

  it("B stops following A's turn when the session's last watcher on B leaves, and follows it again, replayed from its start, when one comes back", async () => {
    const { a, b } = await replicas();
    // The turns B follows now (each reads the turn's stream on a Redis connection of its own).
    const following = (): number => (b.cluster as RedisSessionCluster).following;
    const { id } = await a.hub.create(OWNER, {});
    const seen: UIChunk[] = [];
    const stopWatching = await b.hub.watch(OWNER, id, (chunk) => seen.push(chunk));
    const { turn, requestId } = await pausedTurn(a, id, 'a long turn, ask twice');
    const running = collect(turn);
    await until(() => (JSON.stringify(seen).includes(requestId) ? true : undefined), "the first ask on B's watcher", 5_000);
    expect(following()).toBe(1);
    stopWatching();
    expect(following()).toBe(0);
    // Nobody on B watches: the turn goes on on A, its first Write runs and it asks again.
    await a.hub.answer(OWNER, id, requestId, 'allow');
    const secondAsk = await until(() => a.hub.get(OWNER, id).pendingAsks().find((ask) => ask.requestId !== requestId)?.requestId, 'the second ask', 5_000);
    expect(following()).toBe(0);
    expect(JSON.stringify(seen)).not.toContain(secondAsk);

    const back: UIChunk[] = [];
    cleanups.push(await b.hub.watch(OWNER, id, (chunk) => back.push(chunk)));
    expect(following()).toBe(1);
    await until(() => (JSON.stringify(back).includes(secondAsk) ? true : undefined), "the second ask on B's new watcher", 5_000);
    await a.hub.answer(OWNER, id, secondAsk, 'allow');
    await running.ended;
    await until(() => back.some((chunk) => chunk.type === 'finish') || undefined, "the turn's finish on B's new watcher", 5_000);
    // Replayed from its start: the parts sent while nobody on B watched are there, in order, once each.
    expect(back[0]).toMatchObject({ type: 'start' });
    expect(back.at(-1)).toMatchObject({ type: 'finish' });
    expect(back.filter((chunk) => chunk.type === 'start')).toHaveLength(1);
    expect(JSON.stringify(back)).toContain(requestId);
    expect(JSON.stringify(back)).toContain('answer to a tool result');
    await until(() => following() === 0 || undefined, "B's follower to stop at the turn's end", 5_000);
  });

  it("B stops following A's turn when the last stream reading it on B leaves (as GET …/stream does), and re-attaching follows it again", async () => {
    const { a, b } = await replicas();
    const following = (): number => (b.cluster as RedisSessionCluster).following;
    const { id } = await a.hub.create(OWNER, {});
    const { turn, requestId } = await pausedTurn(a, id, 'a streamed turn, ask first');
    const running = collect(turn);
    // What the SSE route does with the turn `attach` gives it: a viewer while it streams, then `unfollowIfUnwatched`.
    const followed = (await b.hub.attach(OWNER, id))!;
    followed.viewers += 1;
    expect(following()).toBe(1);
    followed.viewers -= 1;
    b.hub.unfollowIfUnwatched(OWNER, id, followed);
    expect(following()).toBe(0);
    const again = (await b.hub.attach(OWNER, id))!;
    expect(again).not.toBe(followed);
    expect(following()).toBe(1);
    const rest = collect(again);
    await a.hub.answer(OWNER, id, requestId, 'allow');
    await running.ended;
    await rest.ended;
    expect(rest.chunks[0]).toMatchObject({ type: 'start' });
    expect(rest.chunks.at(-1)).toMatchObject({ type: 'finish' });
  });

  it('a create whose store check fails after the save (Redis gone) ends the new session instead of leaking it', async () => {
    const { b } = await replicas({
      wrapB: (cluster) => Object.assign(Object.create(cluster) as SessionCluster, { isCurrent: () => Promise.reject(new Error('connection lost')) }),
    });
    await expect(b.hub.create(OWNER, {})).rejects.toMatchObject({ code: 'store_unavailable', status: 503 });
    const [head] = await b.cluster.heads();
    // The session was stored, then ended: the store let go of its copy (a session left running keeps it).
    expect((b.kernel.get(SessionStore) as RedisSessionStore).revision(head!.id)).toBeUndefined();
    expect(b.hub.size).toBe(0);
  });
});
