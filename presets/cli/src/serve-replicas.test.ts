import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashToken } from '@tessera/plugin-transport-http';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { hasRedisServer, startRedis, until, type TestRedis } from '../../../plugins/background-bullmq/src/testing/redis-server.test-helper.js';
import { readTurnAnswering } from './ui-stream.test-helper.js';

// Two `tessera serve` processes (the built bin, demo model) on loopback, sharing one redis-server
// and one allowed root, each with its own HOME: one session served alternately by both.
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');
const ALICE = 'replica-alice-token-0123456789';
const BOB = 'replica-bob-token-9876543210';
const children: ChildProcess[] = [];
const dirs: string[] = [];
let redis: TestRedis | undefined;

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await redis?.stop();
  redis = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(name: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `tessera-replicas-${name}-`)));
  dirs.push(dir);
  return dir;
}

interface Replica {
  url: string;
  call(path: string, init?: RequestInit & { json?: unknown; token?: string }): Promise<Response>;
  stop(): Promise<number | null>;
  /** SIGKILL: the replica dies with whatever it was doing. */
  kill(): Promise<void>;
}

async function serve(args: string[], config: Record<string, unknown>): Promise<Replica> {
  const home = tempDir('home');
  mkdirSync(join(home, '.tessera'));
  const configFile = join(home, '.tessera', 'server.json');
  writeFileSync(configFile, JSON.stringify({ tokens: [{ id: 'alice', sha256: hashToken(ALICE) }, { id: 'bob', sha256: hashToken(BOB) }], ...config }));
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--provider', 'demo', '--config', configFile, ...args], {
    env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving on (http:\/\/\S+)[\s\S]*Replica mode/.exec(output);
      if (match) resolve(match[1]!);
    });
    proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.on('exit', (code) => reject(new Error(`tessera serve exited ${code}: ${output}`)));
  });
  return {
    url,
    call: (path, init = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${init.token ?? ALICE}`, 'content-type': 'application/json' },
        ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      }),
    stop: () =>
      new Promise((resolve) => {
        proc.once('exit', (code) => resolve(code));
        proc.kill('SIGTERM');
      }),
    kill: () =>
      new Promise((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGKILL');
      }),
  };
}

/** Reads a turn's stream to its end, answering its permission asks on `answerOn` (the replica running it). */
async function drain(response: Response, answerOn: Replica, id: string, onAsk?: (requestId: string) => Promise<void>): Promise<string> {
  expect(response.status).toBe(200);
  const { text } = await readTurnAnswering(response, async (requestId) => {
    await onAsk?.(requestId);
    expect((await answerOn.call(`/v1/sessions/${id}/permissions/${requestId}`, { method: 'POST', json: { decision: 'allow' } })).status).toBe(200);
  });
  expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  return text;
}

/** An SSE body read as it arrives: `until` waits for a pattern in what came so far, `rest` reads to the end. */
function reading(response: Response): { until(pattern: RegExp): Promise<RegExpExecArray>; rest(): Promise<string> } {
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  let ended = false;
  const more = async (): Promise<void> => {
    const { value, done } = await reader.read();
    if (done) ended = true;
    else text += value;
  };
  return {
    async until(pattern) {
      for (;;) {
        const match = pattern.exec(text);
        if (match) return match;
        if (ended) throw new Error(`The stream ended before ${pattern}: ${text}`);
        await more();
      }
    },
    async rest() {
      while (!ended) await more();
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      return text;
    },
  };
}

const PENDING_ASK = /"requestId":"([^"]+)","status":"pending"/;

async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, ...body.error };
}

/** The parts of an SSE body. */
function parts(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n\n')
    .map((event) => event.replace(/^data: /, '').trim())
    .filter((data) => data.startsWith('{'))
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

const answerText = (text: string): string =>
  parts(text)
    .filter((part) => part.type === 'text-delta')
    .map((part) => part.delta)
    .join('');

interface HistoryEntry {
  id: string;
  category: string;
  type: string;
  data: { role?: string; content?: unknown };
}

async function historyOf(replica: Replica, id: string): Promise<HistoryEntry[]> {
  const response = await replica.call(`/v1/sessions/${id}/history`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { history: HistoryEntry[] }).history;
}

const prompts = (history: HistoryEntry[]): unknown[] => history.filter((entry) => entry.category === 'chat' && entry.data.role === 'user').map((entry) => entry.data.content);

describe.runIf(hasRedisServer)('tessera serve replicas (two processes, real redis-server)', () => {
  it('serves one session alternately without losing an entry, streams a turn from the other replica, and refuses a concurrent turn', async () => {
    redis = await startRedis();
    const redisUrl = `redis://127.0.0.1:${redis.port}`;
    const root = tempDir('root');
    mkdirSync(join(root, 'notes'));
    writeFileSync(join(root, 'notes', 'today.md'), '# Today\nShip the replicas.\n');
    // A takes Redis from its config file, B from --redis.
    const [a, b] = await Promise.all([serve(['--root', root], { redis: { url: redisUrl } }), serve(['--root', root, '--redis', redisUrl], {})]);

    const created = await a.call('/v1/sessions', { method: 'POST', json: { name: 'shared' } });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // B knows it at once; another token does not.
    expect(await (await b.call(`/v1/sessions/${id}`)).json()).toMatchObject({ id, name: 'shared', cwd: root });
    expect((await b.call(`/v1/sessions/${id}`, { token: BOB })).status).toBe(404);
    expect((await b.call(`/v1/sessions/${id}/history`, { token: BOB })).status).toBe(404);
    expect(((await (await b.call('/v1/sessions')).json()) as { sessions: Array<{ id: string }> }).sessions.map((session) => session.id)).toEqual([id]);

    // Four turns, alternating replicas; each sees what the others did.
    const order = [a, b, a, b];
    for (const [index, replica] of order.entries()) {
      const text = await drain(await replica.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: `turn ${index + 1}` } }), replica, id);
      expect(text).toContain('"type":"tool-output-available"');
      const history = await historyOf(replica, id);
      expect(prompts(history)).toEqual(Array.from({ length: index + 1 }, (_, turn) => `turn ${turn + 1}`));
    }
    const fromA = await historyOf(a, id);
    const fromB = await historyOf(b, id);
    expect(fromA).toEqual(fromB);
    expect(new Set(fromA.map((entry) => entry.id)).size).toBe(fromA.length);
    // Every turn kept its tool calls and results: a Bash, Glob, Read and Write call each.
    expect(fromA.filter((entry) => entry.category === 'chat' && entry.data.role === 'tool').length).toBeGreaterThanOrEqual(4 * 4);

    // A turn started on A, streamed from B: replayed from its start, then followed live to its end.
    const started = await a.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 5' } });
    let followed: Promise<string> | undefined;
    const onA = drain(started, a, id, async () => {
      // At the first ask the turn is paused on A: attach from B then.
      if (followed) return;
      const attached = await b.call(`/v1/sessions/${id}/stream`);
      expect(attached.status).toBe(200);
      followed = attached.text();
    });
    const textA = await onA;
    const textB = await followed!;
    expect(textB.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(answerText(textB)).toBe(answerText(textA));
    expect(parts(textB).find((part) => part.type === 'start')).toEqual(parts(textA).find((part) => part.type === 'start'));
    const outputs = (text: string): unknown[] => parts(text).filter((part) => part.type === 'tool-output-available').map((part) => part.toolCallId);
    expect(outputs(textB)).toEqual(outputs(textA));
    expect((await b.call(`/v1/sessions/${id}/stream`)).status).toBe(204);

    // A WebSocket client of B that only subscribed gets the next turn started on A, pushed to it.
    const socket = new WebSocket(`${b.url.replace('http', 'ws')}/v1/ws?token=${ALICE}`);
    const frames: Array<{ type: string; chunk?: Record<string, unknown> }> = [];
    socket.on('message', (data) => frames.push(JSON.parse(String(data)) as { type: string; chunk?: Record<string, unknown> }));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'subscribe', sessionId: id }));
    await until(() => frames.find((frame) => frame.type === 'result') ?? undefined, 'the subscription');
    expect(frames[0]).toMatchObject({ type: 'result', ok: true });
    const textOnA = await drain(await a.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 5b' } }), a, id);
    await until(() => frames.some((frame) => frame.chunk?.type === 'finish') || undefined, 'the turn on A to reach the socket on B', 20_000);
    const pushed = frames.filter((frame) => frame.type === 'chunk').map((frame) => frame.chunk!);
    expect(pushed.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.delta).join('')).toBe(answerText(textOnA));
    socket.close();

    // Prompts sent to both at once: one runs, the other is refused with 409.
    const [first, second] = await Promise.all([
      a.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 6 on A' } }),
      b.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 6 on B' } }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    const [winner, winnerResponse, loserResponse] = first.status === 200 ? [a, first, second] : [b, second, first];
    expect(((await loserResponse.json()) as { error: { code: string } }).error.code).toMatch(/^(session_busy|turn_in_progress)$/);
    await drain(winnerResponse, winner, id);

    const finalA = await historyOf(a, id);
    expect(await historyOf(b, id)).toEqual(finalA);
    expect(prompts(finalA)).toEqual(['turn 1', 'turn 2', 'turn 3', 'turn 4', 'turn 5', 'turn 5b', winner === a ? 'turn 6 on A' : 'turn 6 on B']);
    expect(finalA.slice(0, fromA.length)).toEqual(fromA);

    const client = new Redis({ host: '127.0.0.1', port: redis.port });
    try {
      const keys = await client.keys('*');
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.filter((key) => !key.startsWith('tessera:'))).toEqual([]);
    } finally {
      client.disconnect();
    }
    expect(await a.stop()).toBe(0);
    expect(await b.stop()).toBe(0);
  }, 120_000);

  it('answers permission asks and aborts a turn through the replica that does not run it; a dead replica is a clear error', async () => {
    redis = await startRedis();
    const root = tempDir('root');
    writeFileSync(join(root, 'plan.md'), '# Plan\nAnswer from anywhere.\n');
    // A short lock TTL, so the session of the replica killed at the end is free again soon.
    const config = { redis: { url: `redis://127.0.0.1:${redis.port}`, lockTtlMs: 1000 } };
    const [a, b] = await Promise.all([serve(['--root', root], config), serve(['--root', root], config)]);
    const created = await a.call('/v1/sessions', { method: 'POST', json: { name: 'controlled' } });
    const { id } = (await created.json()) as { id: string };

    // A turn on A, paused at its first ask (Bash); a client of B follows it and answers every ask on B.
    const onA = reading(await a.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 1' } }));
    const first = (await onA.until(PENDING_ASK))[1]!;
    const asked: string[] = [];
    const textB = await drain(await b.call(`/v1/sessions/${id}/stream`), b, id, async (requestId) => {
      asked.push(requestId);
      // B's view of the session shows the ask pending on A.
      const summary = await b.call(`/v1/sessions/${id}`);
      expect(await summary.json()).toMatchObject({ id, running: true, pendingPermissions: [{ requestId, status: 'pending' }] });
      // So does B's list of the owner's sessions, and another token's list is empty.
      expect(((await (await b.call('/v1/sessions')).json()) as { sessions: unknown[] }).sessions).toEqual([expect.objectContaining({ id, running: true, pendingPermissions: [expect.objectContaining({ requestId, status: 'pending' })] })]);
      expect(((await (await b.call('/v1/sessions', { token: BOB })).json()) as { sessions: unknown[] }).sessions).toEqual([]);
      // Another token reaches nothing, on B as on A; an unknown ask is not found.
      for (const replica of [a, b]) {
        expect(await errorOf(await replica.call(`/v1/sessions/${id}/permissions/${requestId}`, { method: 'POST', token: BOB, json: { decision: 'allow' } }))).toMatchObject({ status: 404, code: 'session_not_found' });
        expect(await errorOf(await replica.call(`/v1/sessions/${id}/abort`, { method: 'POST', token: BOB }))).toMatchObject({ status: 404, code: 'session_not_found' });
        expect(await errorOf(await replica.call(`/v1/sessions/${id}/permissions/not-an-ask`, { method: 'POST', json: { decision: 'allow' } }))).toMatchObject({ status: 404, code: 'permission_request_not_found' });
      }
    });
    const textA = await onA.rest();
    // Bash's ask and Write's, both answered through B: each allowed on A, each tool ran there, and the turn finished.
    expect(asked[0]).toBe(first);
    expect(asked).toHaveLength(2);
    for (const requestId of asked) expect(textA).toContain(`"requestId":"${requestId}","status":"allowed"`);
    expect(parts(textA).filter((part) => part.type === 'tool-output-available')).toHaveLength(4);
    expect(parts(textA).some((part) => part.type === 'abort')).toBe(false);
    expect(parts(textA).at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(existsSync(join(root, 'SUMMARY.md'))).toBe(true);
    expect(answerText(textB)).toBe(answerText(textA));
    // Answered once: a second answer finds nothing, anywhere.
    expect(await errorOf(await b.call(`/v1/sessions/${id}/permissions/${first}`, { method: 'POST', json: { decision: 'deny' } }))).toMatchObject({ status: 404, code: 'permission_request_not_found' });

    // A turn on A, aborted through B while it waits at its ask: it ends interrupted.
    const second = reading(await a.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 2' } }));
    await second.until(PENDING_ASK);
    const aborted = await b.call(`/v1/sessions/${id}/abort`, { method: 'POST' });
    expect(aborted.status).toBe(200);
    expect(await aborted.json()).toEqual({ aborted: true });
    const textAborted = await second.rest();
    expect(parts(textAborted)).toContainEqual({ type: 'abort', reason: 'interrupted' });
    expect(parts(textAborted).at(-1)).toEqual({ type: 'finish', finishReason: 'other' });
    expect(parts(textAborted).some((part) => part.type === 'tool-output-available')).toBe(false);
    // Nothing runs now: aborting again aborts nothing, and B runs the next turn (asks answered on A, where nothing runs).
    expect(await (await b.call(`/v1/sessions/${id}/abort`, { method: 'POST' })).json()).toEqual({ aborted: false });
    await drain(await b.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 3' } }), a, id);
    expect(prompts(await historyOf(a, id))).toEqual(['turn 1', 'turn 2', 'turn 3']);

    // A dies while its turn waits at an ask: B says so at once instead of hanging, until A's lock expires.
    const fourth = reading(await a.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 4' } }));
    const orphan = (await fourth.until(PENDING_ASK))[1]!;
    await a.kill();
    const answer = await errorOf(await b.call(`/v1/sessions/${id}/permissions/${orphan}`, { method: 'POST', json: { decision: 'allow' } }));
    expect(answer).toMatchObject({ status: 503, code: 'replica_unreachable' });
    expect(answer.message).toMatch(/server replica running (this session's turn|session)/);
    expect(await errorOf(await b.call(`/v1/sessions/${id}/abort`, { method: 'POST' }))).toMatchObject({ status: 503, code: 'replica_unreachable' });
    expect((await b.call(`/v1/sessions/${id}`)).status).toBe(200);
    // Once the dead replica's lock expired, nothing runs and B takes the session over.
    await until(async () => ((await b.call(`/v1/sessions/${id}/abort`, { method: 'POST' })).status === 200 ? true : undefined), "the dead replica's lock to expire");
    await drain(await b.call(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'turn 5' } }), b, id);
    expect(prompts(await historyOf(b, id)).at(-1)).toBe('turn 5');
    expect(await b.stop()).toBe(0);
  }, 120_000);

  it('with redis.background, says its background tasks run on workers (queue and prefix to start them with); a bad queue is refused by name', async () => {
    redis = await startRedis();
    const run = (config: Record<string, unknown>) => {
      const home = tempDir('home');
      mkdirSync(join(home, '.tessera'));
      writeFileSync(join(home, '.tessera', 'server.json'), JSON.stringify({ tokens: [{ id: 'alice', sha256: hashToken(ALICE) }], ...config }));
      const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--provider', 'demo', '--config', join(home, '.tessera', 'server.json')], { env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(proc);
      let output = '';
      proc.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      return { proc, output: () => output };
    };
    const url = `redis://127.0.0.1:${redis.port}`;
    const good = run({ redis: { url, prefix: 'acme', background: { queue: 'jobs' } } });
    await until(() => good.output().includes('Background tasks run on tessera worker processes (queue jobs): tessera worker --redis <url> --prefix acme --queue jobs') || undefined, `the background line in: ${good.output()}`);
    good.proc.kill('SIGTERM');
    const bad = run({ redis: { url, background: { queue: 'a:b' } } });
    expect(await new Promise((resolve) => bad.proc.on('exit', resolve))).not.toBe(0);
    expect(bad.output()).toMatch(/redis\.background\.queue.*queue must be/);
  });

  it('refuses a bad redis URL with the setting named', async () => {
    const home = tempDir('home');
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--provider', 'demo', '--redis', 'http://127.0.0.1:6379'], {
      env: { PATH: process.env.PATH, HOME: home, TESSERA_SERVER_TOKEN: ALICE },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(proc);
    let stderr = '';
    proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await new Promise((resolve) => proc.on('exit', resolve))).toBe(1);
    expect(stderr).toMatch(/--redis.*redis:\/\//);
  });
});
