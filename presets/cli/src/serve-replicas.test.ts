import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashToken } from '@tessera/plugin-transport-http';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { hasRedisServer, startRedis, type TestRedis } from '../../../plugins/background-bullmq/src/testing/redis-server.test-helper.js';

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
  };
}

/** Reads a turn's stream to its end, answering its permission asks on `answerOn` (the replica running it). */
async function drain(response: Response, answerOn: Replica, id: string, onAsk?: (requestId: string) => Promise<void>): Promise<string> {
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const answered = new Set<string>();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    for (const match of text.matchAll(/"requestId":"([^"]+)","status":"pending"/g)) {
      if (answered.has(match[1]!)) continue;
      answered.add(match[1]!);
      await onAsk?.(match[1]!);
      expect((await answerOn.call(`/v1/sessions/${id}/permissions/${match[1]}`, { method: 'POST', json: { decision: 'allow' } })).status).toBe(200);
    }
  }
  expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  return text;
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
    expect(prompts(finalA)).toEqual(['turn 1', 'turn 2', 'turn 3', 'turn 4', 'turn 5', winner === a ? 'turn 6 on A' : 'turn 6 on B']);
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
