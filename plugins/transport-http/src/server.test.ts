import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultChatTransport, parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage } from 'ai';
import WebSocket from 'ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commandModulePlugin } from '@tessera/plugin-commands';
import { ApprovalRouter, type SessionCluster } from '@tessera/session-hub';
import { hashToken, TokenAuth } from './auth.js';
import { createServerApp } from './app.js';
import { startServer } from './serve.js';
import { SessionHub } from './session-hub.js';
import { readSse, removeRoot, startServerHarness, TOKEN_A, TOKEN_B, type ServerHarness } from './server.test-helper.js';

/** Every harness a test started and has not closed itself (a test may start several). */
const harnesses = new Set<ServerHarness>();
const roots: string[] = [];

afterEach(async () => {
  for (const open of [...harnesses]) await open.close();
  for (const root of roots.splice(0)) removeRoot(root);
});

async function start(options: Parameters<typeof startServerHarness>[0] = {}): Promise<ServerHarness> {
  const started = await startServerHarness(options);
  const close = started.close.bind(started);
  started.close = () => {
    harnesses.delete(started);
    return close();
  };
  harnesses.add(started);
  roots.push(started.root);
  return started;
}

async function createSession(h: ServerHarness, body: Record<string, unknown> = {}, token = TOKEN_A): Promise<{ id: string }> {
  const response = await h.request('/v1/sessions', { method: 'POST', json: body, token });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
}

async function errorOf(response: Response): Promise<{ status: number; code: string; field?: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; field?: string; message: string } };
  return { status: response.status, ...body.error };
}

/** A WebSocket client of `h` for `token`: every frame kept in order; `until` waits for one; `result` for a request's answer. */
async function connectWs(h: ServerHarness, token: string) {
  const socket = new WebSocket(`${h.server.url.replace('http', 'ws')}/v1/ws`, { headers: { authorization: `Bearer ${token}` } });
  const frames: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  socket.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Record<string, unknown>);
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise((resolve) => socket.once('open', resolve));
  const until = async (predicate: (frame: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = frames.find(predicate);
      if (found) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const result = (request: string) => until((frame) => frame.type === 'result' && frame.request === request);
  return { socket, frames, until, result };
}

/** The streamed turn read by the AI SDK's own parser into its final UI message. */
async function readWithAiSdk(response: Response): Promise<UIMessage> {
  expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const chunks = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        if (!part.success) throw part.error;
        controller.enqueue(part.value);
      },
    }),
  );
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: chunks })) last = message;
  return last!;
}

describe('HTTP transport: sessions', () => {
  it('create, list, get, rename, history, command, delete — and each error code', async () => {
    const h = await start({ server: { maxBodyBytes: 16 * 1024 } });
    const created = await createSession(h, { name: 'first' });
    expect(created).toMatchObject({ name: 'first', cwd: h.workspace, running: false, permissionMode: 'default' });
    expect(((await (await h.request('/v1/sessions')).json()) as { sessions: unknown[] }).sessions).toHaveLength(1);
    expect(await (await h.request(`/v1/sessions/${created.id}`)).json()).toMatchObject({ id: created.id });
    expect(await (await h.request(`/v1/sessions/${created.id}`, { method: 'PATCH', json: { name: 'renamed' } })).json()).toMatchObject({ name: 'renamed' });
    expect(((await (await h.request(`/v1/sessions/${created.id}/history`)).json()) as { history: unknown[] }).history).toEqual([]);
    const help = (await (await h.request(`/v1/sessions/${created.id}/commands`, { method: 'POST', json: { name: 'help' } })).json()) as { success: boolean; message: string };
    expect(help.success).toBe(true);
    expect(help.message).toContain('compact');
    // A name given by the /rename command is the session's name for every route, as PATCH's is.
    expect(((await (await h.request(`/v1/sessions/${created.id}/commands`, { method: 'POST', json: { name: 'rename', args: 'by command' } })).json()) as { success: boolean }).success).toBe(true);
    expect(await (await h.request(`/v1/sessions/${created.id}`)).json()).toMatchObject({ name: 'by command' });
    expect(((await (await h.request('/v1/sessions')).json()) as { sessions: Array<{ name?: string }> }).sessions[0]).toMatchObject({ name: 'by command' });
    expect(await (await h.request(`/v1/sessions/${created.id}`, { method: 'PATCH', json: { name: 'renamed' } })).json()).toMatchObject({ name: 'renamed' });

    expect(await errorOf(await h.request('/v1/sessions', { token: null }))).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await errorOf(await h.request('/v1/sessions', { token: 'wrong-token' }))).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { cwd: h.workspace, colour: 'blue' } }))).toMatchObject({ status: 400, code: 'invalid_request', field: 'colour' });
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } }))).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { name: 'x'.repeat(40 * 1024) } }))).toMatchObject({ status: 413, code: 'body_too_large' });
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { cwd: '/etc' } }))).toMatchObject({ status: 403, code: 'cwd_not_allowed', field: 'cwd' });
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { cwd: join(h.workspace, '..', '..') } }))).toMatchObject({ status: 403, code: 'cwd_not_allowed' });
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { cwd: join(h.workspace, 'missing') } }))).toMatchObject({ status: 400, code: 'invalid_cwd' });
    // Outside the roots, an existing folder, a missing one and a file get the same answer: a client cannot probe the disk.
    for (const cwd of ['/root', '/no-such-folder-here', '/etc/passwd']) {
      expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { cwd } })), cwd).toMatchObject({ status: 403, code: 'cwd_not_allowed', field: 'cwd' });
    }
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { permissionMode: 'bypassPermissions' } }))).toMatchObject({ status: 403, code: 'bypass_not_allowed' });
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { permissionMode: 'yolo' } }))).toMatchObject({ status: 400, field: 'permissionMode' });
    expect(await errorOf(await h.request('/v1/sessions/nope-id-000'))).toMatchObject({ status: 404, code: 'session_not_found' });
    expect(await errorOf(await h.request('/v1/sessions/..%2F..%2Fetc'))).toMatchObject({ status: 400, code: 'invalid_session_id' });
    expect(await errorOf(await h.request(`/v1/sessions/${created.id}/commands`, { method: 'POST', json: { name: 'no-such-command' } }))).toMatchObject({ status: 404, code: 'unknown_command' });
    expect(await errorOf(await h.request(`/v1/sessions/${created.id}/permissions/abc`, { method: 'POST', json: { decision: 'allow' } }))).toMatchObject({ status: 404, code: 'permission_request_not_found' });
    expect(await errorOf(await h.request(`/v1/sessions/${created.id}/permissions/abc`, { method: 'POST', json: { decision: 'maybe' } }))).toMatchObject({ status: 400, field: 'decision' });
    expect(await errorOf(await h.request('/v1/nowhere'))).toMatchObject({ status: 404, code: 'not_found' });
    expect((await h.request(`/v1/sessions/${created.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await errorOf(await h.request(`/v1/sessions/${created.id}`))).toMatchObject({ status: 404 });
  });

  it("answers each route's bad bodies with its error code and field; /health and the ?token= upgrade work without a header; idle abort is false; a closing hub refuses", async () => {
    const h = await start({ turns: [] });
    const { id } = await createSession(h);
    const post = (path: string, json: unknown) => h.request(path, { method: 'POST', json });
    const cases: Array<[Promise<Response>, number, string, string | undefined]> = [
      [h.request(`/v1/sessions/${id}`, { method: 'PATCH', json: {} }), 400, 'invalid_request', 'name'],
      [h.request(`/v1/sessions/${id}`, { method: 'PATCH', json: { name: '' } }), 400, 'invalid_request', 'name'],
      [h.request(`/v1/sessions/${id}`, { method: 'PATCH', json: { name: 'x', colour: 'red' } }), 400, 'invalid_request', 'colour'],
      [post(`/v1/sessions/${id}/commands`, {}), 400, 'invalid_request', 'name'],
      [post(`/v1/sessions/${id}/messages`, { prompt: '' }), 400, 'invalid_request', 'prompt'],
      [post(`/v1/sessions/${id}/messages`, { prompt: 'x', stream: true }), 400, 'invalid_request', 'stream'],
      [post(`/v1/sessions/${id}/chat`, { messages: [] }), 400, 'invalid_request', 'messages'],
      [post(`/v1/sessions/${id}/chat`, { messages: [{ role: 'user', parts: [{ type: 'file' }] }] }), 400, 'invalid_request', 'messages'],
      [post('/v1/sessions', { resume: '../x' }), 400, 'invalid_session_id', 'resume'],
    ];
    for (const [response, status, code, field] of cases) {
      const error = await errorOf(await response);
      expect({ status: error.status, code: error.code, field: error.field }).toEqual({ status, code, field });
    }
    expect(await (await post(`/v1/sessions/${id}/abort`, {})).json()).toEqual({ aborted: false });
    expect(await (await h.request('/health', { token: null })).json()).toEqual({ ok: true });
    // A browser cannot set headers on a WebSocket: the token may come as ?token=.
    const viaQuery = new WebSocket(`${h.server.url.replace('http', 'ws')}/v1/ws?token=${TOKEN_A}`);
    await new Promise((resolve, reject) => {
      viaQuery.once('open', resolve);
      viaQuery.once('error', reject);
    });
    viaQuery.close();
    const closing = h.hub.shutdown();
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: {} }))).toMatchObject({ status: 503, code: 'shutting_down' });
    await closing;
  });

  it('bypassPermissions stays refused after creation: /permissions over REST and WebSocket cannot switch to it', async () => {
    const h = await start();
    const { id } = await createSession(h);
    const refused = (await (await h.request(`/v1/sessions/${id}/commands`, { method: 'POST', json: { name: 'permissions', args: 'bypassPermissions' } })).json()) as { success: boolean; message: string };
    expect(refused).toMatchObject({ success: false, message: expect.stringContaining('not allowed here') });
    expect(await (await h.request(`/v1/sessions/${id}`)).json()).toMatchObject({ permissionMode: 'default' });
    const { socket, result } = await connectWs(h, TOKEN_A);
    socket.send(JSON.stringify({ type: 'command', sessionId: id, name: 'permissions', args: 'bypassPermissions' }));
    expect(JSON.stringify(await result('command'))).toContain('not allowed here');
    socket.close();
    expect(await (await h.request(`/v1/sessions/${id}`)).json()).toMatchObject({ permissionMode: 'default' });
    // Other modes still switch.
    expect(((await (await h.request(`/v1/sessions/${id}/commands`, { method: 'POST', json: { name: 'permissions', args: 'plan' } })).json()) as { success: boolean }).success).toBe(true);
    expect(await (await h.request(`/v1/sessions/${id}`)).json()).toMatchObject({ permissionMode: 'plan' });
  });

  it('host-wide commands (/plugin, /reload-plugins, /reset) are refused to clients over REST and WebSocket; another token learns only that the session is not found', async () => {
    const h = await start();
    const { id } = await createSession(h);
    for (const name of ['plugin', '/plugin', 'reload-plugins', 'RESET']) {
      expect(await errorOf(await h.request(`/v1/sessions/${id}/commands`, { method: 'POST', json: { name, args: 'marketplace add /tmp --yes' } })), name).toMatchObject({ status: 403, code: 'command_not_allowed', field: 'name' });
    }
    expect(await errorOf(await h.request(`/v1/sessions/${id}/commands`, { method: 'POST', json: { name: 'plugin', args: 'install p@m --yes' }, token: TOKEN_B }))).toMatchObject({ status: 404, code: 'session_not_found' });
    const alice = await connectWs(h, TOKEN_A);
    alice.socket.send(JSON.stringify({ type: 'command', sessionId: id, name: 'plugin', args: 'install p@m --yes' }));
    expect(await alice.result('command')).toMatchObject({ ok: false, error: { code: 'command_not_allowed' } });
    alice.socket.close();
    // Session commands still run.
    expect(((await (await h.request(`/v1/sessions/${id}/commands`, { method: 'POST', json: { name: 'help' } })).json()) as { success: boolean }).success).toBe(true);
    // The refusal follows the command's scope, not a list of names: a plugin's own host command is refused too.
    const wiped: string[] = [];
    const withHostCommand = await start({
      plugins: [commandModulePlugin('wipe-cache', [{ name: 'wipe-cache', description: 'Wipe the shared cache', scope: 'host', execute: () => (wiped.push('ran'), { success: true, message: 'wiped' }) }])],
    });
    const mine = await createSession(withHostCommand);
    expect(await errorOf(await withHostCommand.request(`/v1/sessions/${mine.id}/commands`, { method: 'POST', json: { name: '/wipe-cache' } }))).toMatchObject({ status: 403, code: 'command_not_allowed' });
    expect(wiped).toEqual([]);
    // A host that trusts its clients may allow them.
    const open = await start({ hub: { allowHostCommands: true } });
    const other = await createSession(open);
    expect(((await (await open.request(`/v1/sessions/${other.id}/commands`, { method: 'POST', json: { name: 'plugin' } })).json()) as { success: boolean }).success).toBe(true);
  });

  it('WebSocket: bob’s socket can neither watch, prompt, abort, answer nor command alice’s session; alice subscribes, aborts and unsubscribes', async () => {
    const h = await start({ turns: [{ text: Array.from({ length: 200 }, (_, index) => `s${index} `), delayMs: 5 }, { text: 'later' }] });
    const { id } = await createSession(h);
    const bob = await connectWs(h, TOKEN_B);
    for (const message of [
      { type: 'subscribe', sessionId: id },
      { type: 'prompt', sessionId: id, prompt: 'mine now' },
      { type: 'abort', sessionId: id },
      { type: 'permission', sessionId: id, requestId: 'r1', decision: 'allow' },
      { type: 'command', sessionId: id, name: 'help' },
    ]) {
      bob.socket.send(JSON.stringify(message));
      expect(await bob.result(message.type), message.type).toMatchObject({ ok: false, error: { code: 'session_not_found' } });
    }
    const alice = await connectWs(h, TOKEN_A);
    alice.socket.send(JSON.stringify({ type: 'subscribe', sessionId: id }));
    expect(await alice.result('subscribe')).toMatchObject({ ok: true });
    const turn = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'talk' } });
    await alice.until((frame) => frame.type === 'chunk' && (frame.chunk as { type: string }).type === 'text-delta');
    alice.socket.send(JSON.stringify({ type: 'abort', sessionId: id }));
    expect(await alice.result('abort')).toMatchObject({ ok: true, aborted: true });
    expect(await turn.text()).toContain('"type":"abort"');
    alice.socket.send(JSON.stringify({ type: 'unsubscribe', sessionId: id }));
    expect(await alice.result('unsubscribe')).toMatchObject({ ok: true });
    const seen = alice.frames.length;
    await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'again' } }));
    expect(alice.frames.slice(seen).filter((frame) => frame.type === 'chunk')).toEqual([]);
    expect(bob.frames.filter((frame) => frame.type === 'chunk')).toEqual([]);
    bob.socket.close();
    alice.socket.close();
  });

  it('a background task that ends between turns reaches the session\'s WebSocket watchers as a data-tessera-background part', async () => {
    const h = await start({ background: true, allow: ['Bash'], turns: [{ toolCalls: [{ id: 'bg', name: 'Bash', input: { command: 'sleep 0.3; echo later', run_in_background: true } }] }, { text: 'started it' }] });
    const { id } = await createSession(h);
    const alice = await connectWs(h, TOKEN_A);
    alice.socket.send(JSON.stringify({ type: 'subscribe', sessionId: id }));
    await alice.result('subscribe');
    await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'start it in the background' } }));
    expect(h.hub.get('alice', id).summary().running).toBe(false);
    const seenDuringTurn = alice.frames.length;
    const done = await alice.until((frame) => frame.type === 'chunk' && (frame.chunk as { type?: string; data?: { type?: string } }).type === 'data-tessera-background' && (frame.chunk as { data: { type: string } }).data.type === 'background_task_completed');
    expect(alice.frames.indexOf(done)).toBeGreaterThanOrEqual(seenDuringTurn);
    expect(done).toMatchObject({ sessionId: id, chunk: { type: 'data-tessera-background' } });
    alice.socket.close();
  });

  it('WebSocket: a subscriber that joins mid-turn gets the turn so far first; a socket that started a turn and left aborts it when nobody else watches', async () => {
    const slow = { text: ['one ', 'two ', 'three ', 'four ', 'five'], delayMs: 60 };
    const h = await start({ turns: [slow, slow] });
    const { id } = await createSession(h);
    const starter = await connectWs(h, TOKEN_A);
    starter.socket.send(JSON.stringify({ type: 'prompt', sessionId: id, prompt: 'count' }));
    await starter.until((frame) => frame.type === 'chunk' && JSON.stringify(frame.chunk).includes('two '));
    const late = await connectWs(h, TOKEN_A);
    late.socket.send(JSON.stringify({ type: 'subscribe', sessionId: id }));
    await late.result('subscribe');
    const lateChunks = () => late.frames.filter((frame) => frame.type === 'chunk').map((frame) => frame.chunk as { type: string; delta?: string });
    expect(lateChunks()[0]).toMatchObject({ type: 'start' });
    expect(lateChunks().some((chunk) => chunk.delta?.includes('one '))).toBe(true);
    // The starter leaves; the late subscriber still watches, so the turn goes on to its end.
    starter.socket.close();
    await late.until((frame) => frame.type === 'chunk' && (frame.chunk as { type: string }).type === 'finish');
    late.socket.close();

    const leaving = await connectWs(h, TOKEN_A);
    leaving.socket.send(JSON.stringify({ type: 'prompt', sessionId: id, prompt: 'count again' }));
    await leaving.until((frame) => frame.type === 'chunk' && JSON.stringify(frame.chunk).includes('one '));
    leaving.socket.close();
    const deadline = Date.now() + 5_000;
    while (h.hub.get('alice', id).summary().running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(h.hub.get('alice', id).summary().running).toBe(false);
    const history = (await (await h.request(`/v1/sessions/${id}/history`)).json()) as { history: Array<{ type: string; data?: { state?: string } }> };
    expect(history.history.filter((entry) => entry.type === 'assistant').at(-1)?.data?.state).toBe('interrupted');
  });

  it("counts the owner's turns on another transport (MCP) against the same per-token turn limit", async () => {
    let mcpTurns = 2;
    const h = await start({ turns: [{ text: 'ran' }], hub: { maxConcurrentTurnsPerOwner: 2, externalTurns: (owner) => (owner === 'alice' ? mcpTurns : 0) } });
    const { id } = await createSession(h);
    expect(await errorOf(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'go' } }))).toMatchObject({ status: 429, code: 'too_many_turns' });
    expect(h.hub.turnRefusal('alice', 0)).toBeUndefined();
    expect(h.hub.turnRefusal('alice', 2)).toContain('At most 2 turns');
    mcpTurns = 1;
    expect((await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'go' } }))).join('\n')).toContain('ran');
  });

  it('limits: a token past its requests per minute gets 429 rate_limited (another token does not); CORS is off unless origins are listed', async () => {
    const h = await start({ server: { rateLimitPerMinute: 3 } });
    for (let request = 0; request < 3; request += 1) expect((await h.request('/v1/sessions')).status).toBe(200);
    expect(await errorOf(await h.request('/v1/sessions'))).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((await h.request('/v1/sessions', { token: TOKEN_B })).status).toBe(200);
    // A WebSocket message counts as a request too: B's list, create and upgrade use its three.
    const { id } = await createSession(h, {}, TOKEN_B);
    const bob = await connectWs(h, TOKEN_B);
    bob.socket.send(JSON.stringify({ type: 'abort', sessionId: id }));
    expect(await bob.result('abort')).toMatchObject({ ok: false, error: { code: 'rate_limited' } });
    // Malformed frames count too: once the budget is spent they get rate_limited, not an answer each.
    bob.socket.send('{not json');
    expect(await bob.until((frame) => frame.type === 'error')).toMatchObject({ error: { code: 'rate_limited' } });
    bob.socket.close();
    const preflight = await h.request('/v1/sessions', { method: 'OPTIONS', token: null, headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const cross = await h.request('/v1/sessions', { token: TOKEN_B, headers: { origin: 'https://app.example' } });
    expect(cross.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a turn whose model call fails ends with an error part the AI SDK reads, and the session takes the next prompt', async () => {
    const h = await start({ turns: [{ text: 'Half ', error: 'the model service is overloaded' }, { text: 'recovered' }] });
    const { id } = await createSession(h);
    const list = await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'go' } }));
    const parts = list.join('\n');
    expect(parts).toContain('"type":"error"');
    expect(parts).toContain('overloaded');
    expect(parts).toContain('"finishReason":"error"');
    const chunks = parseJsonEventStream({ stream: new Response(list.filter((data) => data.startsWith('{')).map((data) => `data: ${data}\n\n`).join('')).body!, schema: uiMessageChunkSchema });
    const types: string[] = [];
    for await (const part of chunks as unknown as AsyncIterable<{ success: boolean; value: { type: string } }>) {
      expect(part.success).toBe(true);
      types.push(part.value.type);
    }
    expect(types).toContain('error');
    expect(await (await h.request(`/v1/sessions/${id}`)).json()).toMatchObject({ running: false });
    expect((await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'again' } }))).join('\n')).toContain('recovered');
  });

  it('sends keep-alive comments while a turn is quiet', async () => {
    const h = await start({ server: { keepAliveMs: 40 }, turns: [{ text: ['slow ', 'answer'], delayMs: 150 }] });
    const { id } = await createSession(h);
    const text = await (await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'wait' } })).text();
    expect(text).toContain(': keep-alive\n\n');
    expect(text).toContain('slow answer'.split(' ')[1]);
  });

  it('a server that allows bypassPermissions lets /permissions switch to it', async () => {
    const h = await start({ hub: { allowBypassPermissions: true } });
    const { id } = await createSession(h);
    expect(((await (await h.request(`/v1/sessions/${id}/commands`, { method: 'POST', json: { name: 'permissions', args: 'bypassPermissions' } })).json()) as { success: boolean }).success).toBe(true);
    expect(await (await h.request(`/v1/sessions/${id}`)).json()).toMatchObject({ permissionMode: 'bypassPermissions' });
  });

  it('a token reaches only its own sessions: every route refuses bob on alice’s session', async () => {
    const h = await start();
    const { id } = await createSession(h);
    const attempts: Array<[string, RequestInit & { json?: unknown }]> = [
      [`/v1/sessions/${id}`, {}],
      [`/v1/sessions/${id}`, { method: 'PATCH', json: { name: 'mine now' } }],
      [`/v1/sessions/${id}/history`, {}],
      [`/v1/sessions/${id}/abort`, { method: 'POST' }],
      [`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'hi' } }],
      [`/v1/sessions/${id}/chat`, { method: 'POST', json: { messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }] } }],
      [`/v1/sessions/${id}/stream`, {}],
      [`/v1/sessions/${id}/permissions/req-1`, { method: 'POST', json: { decision: 'allow' } }],
      [`/v1/sessions/${id}/commands`, { method: 'POST', json: { name: 'help' } }],
      [`/v1/sessions/${id}`, { method: 'DELETE' }],
      [`/v1/sessions/${id}?keep=true`, { method: 'DELETE' }],
      [`/v1/sessions/${id}/chat/${id}/stream`, {}],
      ['/v1/sessions', { method: 'POST', json: { resume: id } }],
    ];
    for (const [path, init] of attempts) {
      const response = await h.request(path, { ...init, token: TOKEN_B });
      expect({ path, method: init.method ?? 'GET', status: response.status }).toEqual({ path, method: init.method ?? 'GET', status: 404 });
    }
    // A socket opened with bob's token in the query (as a browser does) cannot watch or leave alice's session either.
    const bob = new WebSocket(`${h.server.url.replace('http', 'ws')}/v1/ws?token=${TOKEN_B}`);
    const frames: Array<Record<string, unknown>> = [];
    bob.on('message', (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
    await new Promise((resolve) => bob.once('open', resolve));
    for (const type of ['subscribe', 'unsubscribe']) bob.send(JSON.stringify({ type, sessionId: id }));
    await vi.waitFor(() => expect(frames.filter((frame) => frame.type === 'result')).toHaveLength(2));
    expect(frames.find((frame) => frame.request === 'subscribe')).toMatchObject({ ok: false, error: { code: 'session_not_found' } });
    // Unsubscribing touches only this socket's own subscriptions: the same answer for any id, so it tells nothing.
    expect(frames.find((frame) => frame.request === 'unsubscribe')).toMatchObject({ ok: true });
    bob.close();
    expect(((await (await h.request('/v1/sessions', { token: TOKEN_B })).json()) as { sessions: unknown[] }).sessions).toEqual([]);
    expect((await h.request(`/v1/sessions/${id}`)).status).toBe(200);
  });

  it('a failing session factory is internal_error (500); a failing shared store is store_unavailable (503); neither stops the server', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-http-failures-')));
    const failing = async (): Promise<never> => {
      throw new Error('the store is unplugged');
    };
    // Every cluster call fails, as when Redis is down.
    const cluster = new Proxy({}, { get: () => failing }) as unknown as SessionCluster;
    const hubs = [
      new SessionHub({ sessions: { open: failing, list: failing }, approvals: new ApprovalRouter(), allowedRoots: [root] }),
      new SessionHub({ sessions: { open: failing, list: failing }, approvals: new ApprovalRouter(), allowedRoots: [root], cluster }),
    ];
    const servers = await Promise.all(hubs.map((hub) => startServer({ hub, auth: new TokenAuth([{ id: 'alice', sha256: hashToken(TOKEN_A) }]), websocket: false })));
    const call = (index: number, path: string, init: RequestInit = {}) => fetch(`${servers[index]!.url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' } });
    try {
      expect(await errorOf(await call(0, '/v1/sessions', { method: 'POST', body: '{}' }))).toMatchObject({ status: 500, code: 'internal_error', message: expect.stringContaining('the store is unplugged') });
      expect(await errorOf(await call(1, '/v1/sessions/some-stored-id'))).toMatchObject({ status: 503, code: 'store_unavailable', message: expect.stringContaining('Retry') });
      expect(await errorOf(await call(1, '/v1/sessions'))).toMatchObject({ status: 503, code: 'store_unavailable' });
      // Still serving.
      expect((await fetch(`${servers[0]!.url}/health`)).status).toBe(200);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('serves the OpenAPI document generated from the body schemas', async () => {
    const h = await start();
    const document = (await (await h.request('/openapi.json', { token: null })).json()) as { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown>; additionalProperties?: unknown } }> } }>> };
    expect(document.openapi).toBe('3.1.0');
    const create = document.paths['/v1/sessions']!.post!.requestBody!.content['application/json']!.schema;
    expect(Object.keys(create.properties!)).toEqual(['cwd', 'name', 'model', 'permissionMode', 'resume']);
    expect(create.additionalProperties).toBe(false);
    expect(Object.keys(document.paths)).toContain('/v1/sessions/{id}/chat');
    // Every route the app serves is in the document, with that method; every /v1 route lists the errors any of them can give.
    const app = createServerApp({ hub: h.hub, auth: new TokenAuth([]), mcpHandler: async () => new Response(null) });
    const served = app.routes.filter((route) => !route.path.includes('*') && route.method !== 'OPTIONS');
    expect(served.length).toBeGreaterThan(12);
    for (const route of served) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      const method = route.method === 'ALL' ? 'post' : route.method.toLowerCase();
      expect(document.paths[path]?.[method], `${route.method} ${route.path}`).toBeDefined();
      const responses = (document.paths[path]![method] as { responses: Record<string, unknown> }).responses;
      if (path.startsWith('/v1/')) expect(Object.keys(responses), path).toEqual(expect.arrayContaining(['401', '429', '500', '503']));
      if ((document.paths[path]![method] as { requestBody?: unknown }).requestBody) expect(Object.keys(responses), path).toEqual(expect.arrayContaining(['400', '413']));
    }
  });
});

describe('HTTP transport: turns as the AI SDK UI message stream', () => {
  it('a multi-tool turn, read by the AI SDK’s readUIMessageStream', async () => {
    let workspace = '';
    const h = await start({
      allow: ['Bash(echo:*)', 'Read'],
      turns: (request) =>
        request.index === 0
          ? { text: ['Looking ', 'around.'], toolCalls: [{ name: 'Bash', input: { command: 'echo from-the-tool' } }, { name: 'Read', input: { file_path: join(workspace, 'notes.md') } }] }
          : { thinking: 'Both worked.', text: ['All ', 'done.'] },
    });
    workspace = h.workspace;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(h.workspace, 'notes.md'), 'a note\n');
    const { id } = await createSession(h);
    const message = await readWithAiSdk(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'look' } }));
    expect(message.role).toBe('assistant');
    const types = message.parts.map((part) => part.type);
    expect(types.filter((type) => type === 'step-start')).toHaveLength(2);
    const text = message.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text);
    expect(text).toEqual(['Looking around.', 'All done.']);
    expect(message.parts.find((part) => part.type === 'reasoning')).toMatchObject({ text: 'Both worked.' });
    const tools = message.parts.filter((part) => part.type.startsWith('tool-') || part.type === 'dynamic-tool') as Array<{ state: string; output?: { output?: string }; input?: unknown; toolName?: string; type: string }>;
    expect(tools).toHaveLength(2);
    expect(tools.every((tool) => tool.state === 'output-available')).toBe(true);
    expect(tools[0]!.output!.output).toContain('from-the-tool');
  });

  it('useChat’s request body runs a turn; a permission ask travels to the client and its answer lets the call run', async () => {
    let workspace = '';
    const h = await start({
      turns: (request) => (request.index === 0 ? { toolCalls: [{ name: 'Write', input: { file_path: join(workspace, 'made.txt'), content: 'approved\n' } }] } : { text: 'written' }),
    });
    workspace = h.workspace;
    const { id } = await createSession(h);
    const response = await h.request(`/v1/sessions/${id}/chat`, { method: 'POST', json: { id: 'chat-1', trigger: 'submit-message', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'write the file' }] }] } });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    let requestId: string | undefined;
    while (requestId === undefined) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before the permission request: ${seen}`);
      seen += value;
      requestId = /"requestId":"([^"]+)","status":"pending"/.exec(seen)?.[1];
    }
    expect(seen).toContain('"type":"data-tessera-permission"');
    expect((await h.request(`/v1/sessions/${id}`).then((r) => r.json())) as object).toMatchObject({ pendingPermissions: [{ requestId, toolName: 'Write' }] });
    const answer = await h.request(`/v1/sessions/${id}/permissions/${requestId}`, { method: 'POST', json: { decision: 'allow' } });
    expect(answer.status).toBe(200);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    expect(seen).toContain('"status":"allowed"');
    expect(seen).toContain('"type":"tool-output-available"');
    expect(seen.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(readFileSync(join(h.workspace, 'made.txt'), 'utf8')).toBe('approved\n');
  });

  it('a second turn while one runs is refused; an unanswered ask times out to deny', async () => {
    let workspace = '';
    const h = await start({
      permissionTimeoutMs: 300,
      turns: (request) => (request.index === 0 ? { toolCalls: [{ name: 'Write', input: { file_path: join(workspace, 'never.txt'), content: 'x' } }] } : { text: 'ok, not written' }),
    });
    workspace = h.workspace;
    const { id } = await createSession(h);
    const first = h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'write' } });
    const firstResponse = await first;
    expect(await errorOf(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'again' } }))).toMatchObject({ status: 409, code: 'turn_in_progress' });
    const parts = await readSse(firstResponse);
    expect(parts.join('\n')).toContain('"status":"timed_out"');
    expect(parts.join('\n')).toContain('ok, not written');
    expect(existsSync(join(h.workspace, 'never.txt'))).toBe(false);
  });

  it('abort while a permission ask waits: the ask is shown cancelled to the client, the call is refused, the session is usable', async () => {
    let workspace = '';
    const h = await start({
      turns: (request) => (request.index === 0 ? { toolCalls: [{ name: 'Write', input: { file_path: join(workspace, 'never.txt'), content: 'x' } }] } : { text: 'next turn' }),
    });
    workspace = h.workspace;
    const { id } = await createSession(h);
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'write' } });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('"status":"pending"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before the ask: ${text}`);
      text += value;
    }
    expect(await errorOf(await h.request(`/v1/sessions/${id}/abort`, { method: 'POST', json: { force: true } }))).toMatchObject({ status: 400, code: 'invalid_request', field: 'force' });
    expect(await (await h.request(`/v1/sessions/${id}/abort`, { method: 'POST' })).json()).toEqual({ aborted: true });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const asks = text.split('\n').filter((line) => line.includes('data-tessera-permission')).map((line) => (JSON.parse(line.slice('data: '.length)) as { data: { status: string } }).data.status);
    expect(asks).toEqual(['pending', 'cancelled']);
    expect(existsSync(join(h.workspace, 'never.txt'))).toBe(false);
    expect(await (await h.request(`/v1/sessions/${id}`)).json()).toMatchObject({ running: false, pendingPermissions: [] });
    expect((await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'again' } }))).join('\n')).toContain('next turn');
  });

  it('per-token limits: live sessions and turns running at once; another token is not counted', async () => {
    const h = await start({ hub: { maxSessionsPerOwner: 2, maxConcurrentTurnsPerOwner: 1 }, turns: [{ text: Array.from({ length: 30 }, (_, index) => `w${index} `), delayMs: 10 }, { text: 'second' }] });
    const first = await createSession(h);
    const second = await createSession(h);
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: {} }))).toMatchObject({ status: 429, code: 'too_many_sessions' });
    await createSession(h, {}, TOKEN_B);
    const running = await h.request(`/v1/sessions/${first.id}/messages`, { method: 'POST', json: { prompt: 'slow' } });
    expect(await errorOf(await h.request(`/v1/sessions/${second.id}/messages`, { method: 'POST', json: { prompt: 'too' } }))).toMatchObject({ status: 429, code: 'too_many_turns' });
    await readSse(running);
    const after = await h.request(`/v1/sessions/${second.id}/messages`, { method: 'POST', json: { prompt: 'now' } });
    expect(after.status).toBe(200);
    await readSse(after);
    expect((await h.request(`/v1/sessions/${first.id}`, { method: 'DELETE' })).status).toBe(204);
    await createSession(h);
  });

  it('a chunked body past the limit is refused while it is read', async () => {
    const h = await start({ server: { maxBodyBytes: 16 * 1024 } });
    const big = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"name":"${'x'.repeat(40 * 1024)}"}`));
        controller.close();
      },
    });
    const response = await fetch(`${h.server.url}/v1/sessions`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json' }, body: big, duplex: 'half' } as RequestInit);
    expect(await errorOf(response)).toMatchObject({ status: 413, code: 'body_too_large' });
    expect(h.hub.size).toBe(0);
    // A WebSocket frame is a body too: past the same limit the socket is closed (1009, message too big).
    const { socket } = await connectWs(h, TOKEN_A);
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    socket.send(JSON.stringify({ type: 'prompt', sessionId: 'x', prompt: 'y'.repeat(40 * 1024) }));
    expect(await closed).toBe(1009);
    expect(h.hub.size).toBe(0);
  });

  it('a client that disconnects mid-turn aborts it by default', async () => {
    const h = await start({ turns: [{ text: Array.from({ length: 200 }, (_, index) => `w${index} `), delayMs: 20 }] });
    const { id } = await createSession(h);
    const controller = new AbortController();
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'talk' }, signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const aborted = Date.now();
    const deadline = Date.now() + 5000;
    while (h.hub.get('alice', id).summary().running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.hub.get('alice', id).summary().running).toBe(false);
    // Well before the 4 s the whole answer would take.
    expect(Date.now() - aborted).toBeLessThan(1500);
    expect(h.hub.get('alice', id).turn!.chunks.some((chunk) => chunk.type === 'abort')).toBe(true);
  });

  it('a client that disconnects mid-turn does not abort it while a WebSocket watches the session; the turn ends in full there', async () => {
    const words = Array.from({ length: 30 }, (_, index) => `v${index} `);
    const h = await start({ turns: [{ text: words, delayMs: 15 }] });
    const { id } = await createSession(h);
    const watcher = await connectWs(h, TOKEN_A);
    watcher.socket.send(JSON.stringify({ type: 'subscribe', sessionId: id }));
    expect(await watcher.result('subscribe')).toMatchObject({ ok: true });
    const controller = new AbortController();
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'talk' }, signal: controller.signal });
    await response.body!.getReader().read();
    controller.abort();
    await watcher.until((frame) => frame.type === 'chunk' && (frame.chunk as { type: string }).type === 'finish');
    const parts = watcher.frames.filter((frame) => frame.type === 'chunk').map((frame) => frame.chunk as { type: string; delta?: string });
    expect(parts.some((part) => part.type === 'abort')).toBe(false);
    expect(parts.filter((part) => part.type === 'text-delta').map((part) => part.delta).join('')).toBe(words.join(''));
    watcher.socket.close();
  });

  it('with abortOnDisconnect off, the turn goes on and the client re-attaches to the rest', async () => {
    const h = await start({ server: { abortOnDisconnect: false }, turns: [{ text: Array.from({ length: 40 }, (_, index) => `w${index} `), delayMs: 15 }] });
    const { id } = await createSession(h);
    const controller = new AbortController();
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'talk' }, signal: controller.signal });
    await response.body!.getReader().read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(h.hub.get('alice', id).summary().running).toBe(true);
    const again = await h.request(`/v1/sessions/${id}/stream`);
    expect(again.status).toBe(200);
    const message = await readWithAiSdk(again);
    expect((message.parts.find((part) => part.type === 'text') as { text: string }).text).toBe(Array.from({ length: 40 }, (_, index) => `w${index} `).join(''));
    expect((await h.request(`/v1/sessions/${id}/stream`)).status).toBe(204);
  });

  it('useChat resume: the AI SDK chat transport reconnects to a running turn at its own URL, and gets nothing when none runs', async () => {
    const words = Array.from({ length: 30 }, (_, index) => `r${index} `);
    const h = await start({ server: { abortOnDisconnect: false }, turns: [{ text: words, delayMs: 15 }] });
    const { id } = await createSession(h);
    const transport = new DefaultChatTransport({ api: `${h.server.url}/v1/sessions/${id}/chat`, headers: { authorization: `Bearer ${TOKEN_A}` } });
    expect(await transport.reconnectToStream({ chatId: id })).toBeNull();
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'talk' } });
    const stream = await transport.reconnectToStream({ chatId: id });
    expect(stream).not.toBeNull();
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream: stream! })) last = message;
    expect((last!.parts.find((part) => part.type === 'text') as { text: string }).text).toBe(words.join(''));
    await response.text();
    expect(await transport.reconnectToStream({ chatId: id })).toBeNull();
    expect(await errorOf(await h.request(`/v1/sessions/${id}/chat/other-id/stream`))).toMatchObject({ status: 400, code: 'invalid_request', field: 'chatId' });
    expect(await errorOf(await h.request(`/v1/sessions/${id}/chat/${id}/stream`, { token: TOKEN_B }))).toMatchObject({ status: 404 });
  });

  it('a tool call that fails streams tool-output-error with the reason, and the AI SDK reads it as an errored tool part', async () => {
    let missing = '';
    const h = await start({ allow: ['Read'], turns: (request) => (request.index === 0 ? { toolCalls: [{ name: 'Read', input: { file_path: missing } }] } : { text: 'It is not there.' }) });
    missing = join(h.workspace, 'nowhere.txt');
    const { id } = await createSession(h);
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'read nowhere.txt' } });
    const message = await readWithAiSdk(response);
    const tool = message.parts.find((part) => part.type === 'tool-Read') as { state: string; errorText?: string } | undefined;
    expect(tool).toMatchObject({ state: 'output-error' });
    expect(tool!.errorText).toContain('not_found');
    expect((message.parts.find((part) => part.type === 'text') as { text: string }).text).toBe('It is not there.');
  });

  it('a session that tracks its context window streams its usage as transient data-tessera-context parts', async () => {
    const h = await start({ contextWindow: true, turns: [{ text: 'Measured.' }] });
    const { id } = await createSession(h);
    const parts = (await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'how full is it?' } })))
      .filter((data) => data.startsWith('{'))
      .map((data) => JSON.parse(data) as { type: string; id?: string; transient?: boolean; data?: { usedTokens: number; maxTokens: number; usedPercentage: number } });
    const context = parts.filter((part) => part.type === 'data-tessera-context');
    expect(context.length).toBeGreaterThan(0);
    for (const part of context) {
      expect(part).toMatchObject({ id: 'context', transient: true });
      expect(part.data!.maxTokens).toBeGreaterThan(0);
      expect(part.data!.usedTokens).toBeGreaterThan(0);
      expect(part.data!.usedPercentage).toBeCloseTo((part.data!.usedTokens / part.data!.maxTokens) * 100, 0);
    }
    // Before the finish, so a client shows it with the answer.
    expect(parts.findIndex((part) => part.type === 'data-tessera-context')).toBeLessThan(parts.findIndex((part) => part.type === 'finish'));
  });

  it('a slow reader cannot grow the server’s memory: past the bound its stream ends, the turn goes on', async () => {
    const big = 'x'.repeat(4000);
    const h = await start({ server: { maxBufferedBytes: 64 * 1024 }, turns: [{ text: Array.from({ length: 600 }, () => big) }] });
    const { id } = await createSession(h);
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'flood' } });
    // Do not read until the turn is over: 2.4 MB of parts are produced meanwhile.
    const deadline = Date.now() + 10_000;
    while (h.hub.get('alice', id).summary().running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.hub.get('alice', id).summary().running).toBe(false);
    const text = await response.text();
    expect(text).toContain('read too slowly');
    expect(text.length).toBeLessThan(2_000_000);
  });

  it('a WebSocket watcher that stops reading is closed (1008) past the bound; the turn goes on to its end', async () => {
    const big = 'z'.repeat(16_000);
    const h = await start({ server: { maxBufferedBytes: 64 * 1024, abortOnDisconnect: false }, turns: [{ text: Array.from({ length: 1000 }, () => big) }] });
    const { id } = await createSession(h);
    const slow = await connectWs(h, TOKEN_A);
    slow.socket.send(JSON.stringify({ type: 'subscribe', sessionId: id }));
    expect(await slow.result('subscribe')).toMatchObject({ ok: true });
    const closed = new Promise<number>((resolve) => slow.socket.once('close', resolve));
    // Stop reading the socket: 16 MB of parts are produced meanwhile, more than loopback's socket buffers hold.
    (slow.socket as unknown as { pause(): void }).pause();
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'flood' } });
    const deadline = Date.now() + 10_000;
    while (h.hub.get('alice', id).summary().running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.hub.get('alice', id).summary().running).toBe(false);
    const chunks = h.hub.get('alice', id).turn!.chunks;
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(chunks.some((chunk) => chunk.type === 'abort')).toBe(false);
    (slow.socket as unknown as { resume(): void }).resume();
    expect(await closed).toBe(1008);
    expect(slow.frames.filter((frame) => frame.type === 'chunk').length).toBeLessThan(1000);
    await response.body?.cancel();
  });

  it('keep-alives sent while the socket is backed up never strand the stream: the reader that catches up gets every part and [DONE]', async () => {
    const big = 'y'.repeat(16_000);
    const h = await start({ server: { keepAliveMs: 5, maxBufferedBytes: 256 * 1024 * 1024 }, turns: [{ text: Array.from({ length: 600 }, () => big) }] });
    const { id } = await createSession(h);
    const response = await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'flood' } });
    // Unread until the turn is over, and a while longer: keep-alives fire while writes wait for the socket.
    const deadline = Date.now() + 10_000;
    while (h.hub.get('alice', id).summary().running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const text = await Promise.race([response.text(), new Promise<string>((resolve) => setTimeout(() => resolve('(the stream never ended)'), 10_000))]);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text.split(big).length - 1).toBe(600);
  });

  it('DELETE removes the stored transcript (no resume afterwards); ?keep=true only ends the session here', async () => {
    const h = await start({ turns: [{ text: 'kept answer' }, { text: 'gone answer' }] });
    const { id } = await createSession(h);
    await readSse(await h.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'keep me' } }));
    expect(await errorOf(await h.request(`/v1/sessions/${id}?keep=maybe`, { method: 'DELETE' }))).toMatchObject({ status: 400, code: 'invalid_request', field: 'keep' });
    expect((await h.request(`/v1/sessions/${id}?keep=true`, { method: 'DELETE' })).status).toBe(204);
    expect(await errorOf(await h.request(`/v1/sessions/${id}`))).toMatchObject({ status: 404 });
    const resumed = await h.request('/v1/sessions', { method: 'POST', json: { resume: id } });
    expect(resumed.status).toBe(201);
    expect(await resumed.json()).toMatchObject({ id, messageCount: 2 });
    expect((await h.request(`/v1/sessions/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await errorOf(await h.request('/v1/sessions', { method: 'POST', json: { resume: id } }))).toMatchObject({ status: 404, code: 'session_not_found' });
    expect((await (await h.request('/v1/sessions')).json()) as { sessions: Array<{ id: string }> }).toMatchObject({ sessions: [] });
  });

  it('resumes a stored session after a restart, for its owner only', async () => {
    const first = await start({ turns: [{ text: 'remembered answer' }] });
    const { id } = await createSession(first);
    await readSse(await first.request(`/v1/sessions/${id}/messages`, { method: 'POST', json: { prompt: 'remember this' } }));
    const { root, storeDir } = first;
    await first.close();
    const second = await start({ root, storeDir, turns: [{ text: 'second' }] });
    expect(await errorOf(await second.request('/v1/sessions', { method: 'POST', json: { resume: id }, token: TOKEN_B }))).toMatchObject({ status: 404, code: 'session_not_found' });
    // A resumed session keeps its folder and model: naming others is refused with the field.
    expect(await errorOf(await second.request('/v1/sessions', { method: 'POST', json: { resume: id, cwd: second.workspace } }))).toMatchObject({ status: 400, code: 'invalid_request', field: 'cwd' });
    expect(await errorOf(await second.request('/v1/sessions', { method: 'POST', json: { resume: id, model: 'other-model' } }))).toMatchObject({ status: 400, code: 'invalid_request', field: 'model' });
    const resumed = await second.request('/v1/sessions', { method: 'POST', json: { resume: id, name: 'back again' } });
    expect(resumed.status).toBe(201);
    expect(await resumed.json()).toMatchObject({ id, messageCount: 2, name: 'back again', permissionMode: 'default' });
    // Resuming it again while it is live returns the same session, with the mode the request asks for.
    const again = await second.request('/v1/sessions', { method: 'POST', json: { resume: id, permissionMode: 'plan' } });
    expect(await again.json()).toMatchObject({ id, permissionMode: 'plan' });
    expect(second.hub.size).toBe(1);
  });
});

describe('HTTP transport: WebSocket', () => {
  it('subscribe, prompt, permission answer and command over one socket; bad frames get errors', async () => {
    let workspace = '';
    const h = await start({
      turns: (request) => (request.index === 0 ? { toolCalls: [{ name: 'Write', input: { file_path: join(workspace, 'ws.txt'), content: 'via ws\n' } }] } : { text: 'done over ws' }),
    });
    workspace = h.workspace;
    const { id } = await createSession(h);
    expect(await new Promise<number>((resolve) => {
      const refused = new WebSocket(`${h.server.url.replace('http', 'ws')}/v1/ws`);
      refused.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      refused.on('error', () => undefined);
    })).toBe(401);
    const { socket, frames, until } = await connectWs(h, TOKEN_A);
    socket.send('not json');
    expect(await until((frame) => frame.type === 'error')).toMatchObject({ error: { code: 'invalid_json' } });
    socket.send(JSON.stringify({ type: 'prompt', sessionId: id }));
    expect(await until((frame) => frame.type === 'error' && (frame.error as { code: string }).code === 'invalid_request')).toMatchObject({ error: { field: 'prompt' } });
    socket.send(JSON.stringify({ type: 'prompt', sessionId: 'not-mine-000' , prompt: 'x' }));
    expect(await until((frame) => frame.type === 'result' && frame.ok === false)).toMatchObject({ error: { code: 'session_not_found' } });
    socket.send(JSON.stringify({ type: 'prompt', sessionId: id, prompt: 'write it' }));
    const ask = (await until((frame) => frame.type === 'chunk' && (frame.chunk as { type: string }).type === 'data-tessera-permission')) as { chunk: { data: { requestId: string } } };
    socket.send(JSON.stringify({ type: 'permission', sessionId: id, requestId: ask.chunk.data.requestId, decision: 'allow' }));
    await until((frame) => frame.type === 'chunk' && (frame.chunk as { type: string }).type === 'finish');
    expect(frames.some((frame) => frame.type === 'chunk' && JSON.stringify(frame.chunk).includes('done over ws'))).toBe(true);
    expect(readFileSync(join(h.workspace, 'ws.txt'), 'utf8')).toBe('via ws\n');
    socket.send(JSON.stringify({ type: 'command', sessionId: id, name: 'cost' }));
    expect(await until((frame) => frame.type === 'result' && frame.request === 'command')).toMatchObject({ ok: true });
    socket.close();
  });
});
