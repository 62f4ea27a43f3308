import { SessionStore } from '@tessera/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { httpTransportOf, startMcpHost, type McpHost } from './mcp-server.test-helper.js';
import type { PromptOutput } from './mcp-tool-schemas.js';

let host: McpHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

function post(url: URL, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
}

describe('createMcpHttpHandler', () => {
  it('refuses a foreign Host or Origin with 403 before anything else', async () => {
    host = await startMcpHost();
    const foreignHost = await host.handler(post(host.url, initialize, { host: 'rebound.example' }));
    expect(foreignHost.status).toBe(403);
    expect(((await foreignHost.json()) as { error: { message: string } }).error.message).toContain('Host "rebound.example" is not allowed');
    const foreignOrigin = await host.handler(post(host.url, initialize, { origin: 'https://evil.example' }));
    expect(foreignOrigin.status).toBe(403);
    expect(host.handler.sessionCount).toBe(0);
  });

  it('answers an unknown mcp-session-id with 404 and a request without one (not initialize) with 400', async () => {
    host = await startMcpHost();
    const unknown = await host.handler(post(host.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': 'nope' }));
    expect(unknown.status).toBe(404);
    const noSession = await host.handler(post(host.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(noSession.status).toBe(400);
    const get = await host.handler(new Request(host.url, { method: 'GET', headers: { accept: 'text/event-stream' } }));
    expect(get.status).toBe(400);
    expect(host.handler.sessionCount).toBe(0);
  });

  it('an MCP session belongs to the owner that opened it: another owner holding its id gets 404', async () => {
    host = await startMcpHost();
    const opened = await host.handler(post(host.url, initialize), 'alice');
    expect(opened.status).toBe(200);
    const mcpSessionId = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const headers = { 'mcp-session-id': mcpSessionId, 'mcp-protocol-version': '2025-06-18' };
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    for (const stranger of ['bob', undefined]) {
      const refused = await host.handler(post(host.url, list, headers), stranger);
      expect(refused.status).toBe(404);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('Session not found');
    }
    const deleted = await host.handler(new Request(host.url, { method: 'DELETE', headers }), 'bob');
    expect(deleted.status).toBe(404);
    expect(host.handler.sessionCount).toBe(1);
    const own = await host.handler(post(host.url, list, headers), 'alice');
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('"prompt"');
  });

  it('caps the MCP sessions one owner holds (429), leaving other owners their share', async () => {
    host = await startMcpHost({ handler: { maxSessionsPerOwner: 2 } });
    const open = async (owner: string): Promise<Response> => {
      const response = await host!.handler(post(host!.url, initialize), owner);
      await response.clone().text();
      return response;
    };
    const first = await open('alice');
    expect((await open('alice')).status).toBe(200);
    const refused = await open('alice');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('holds 2 MCP sessions');
    expect((await open('bob')).status).toBe(200);
    expect(host.handler.sessionCount).toBe(3);
    // Ending one gives the slot back.
    const ended = await host.handler(new Request(host.url, { method: 'DELETE', headers: { 'mcp-session-id': first.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' } }), 'alice');
    expect(ended.status).toBe(200);
    await expect.poll(() => host!.handler.sessionCount).toBe(2);
    expect((await open('alice')).status).toBe(200);
  });

  it('holds at most maxSessionsPerConnection Tessera sessions per MCP session: a new one ends the least recently used idle one, saved', async () => {
    host = await startMcpHost({ turns: [{ text: 'one' }, { text: 'two' }, { text: 'again' }, { text: 'three' }], transport: { maxSessionsPerConnection: 2 } });
    const client = await host.client();
    const ask = async (prompt: string, sessionId?: string) => (await client.callTool({ name: 'prompt', arguments: { prompt, ...(sessionId === undefined ? {} : { sessionId }) } })) as { structuredContent?: PromptOutput; isError?: boolean; content: Array<{ text?: string }> };
    const a = (await ask('first')).structuredContent!.sessionId;
    const b = (await ask('second')).structuredContent!.sessionId;
    // Using a makes b the least recently used.
    expect((await ask('a again', a)).structuredContent?.response).toBe('again');
    const c = (await ask('third')).structuredContent!.sessionId;
    expect(new Set([a, b, c]).size).toBe(3);
    const gone = await ask('b?', b);
    expect(gone.isError).toBe(true);
    expect(gone.content[0]!.text).toContain(`No session "${b}"`);
    // The ended session was saved before it went.
    expect((await host.kernel.get(SessionStore).load(b))?.messages.length).toBe(2);
  });

  it("asks the host's turn gate before each prompt, with the owner's MCP turns running now; a refusal is the tool's error", async () => {
    const asked: Array<[string, number]> = [];
    host = await startMcpHost({
      owner: 'alice',
      turns: [{ text: 'slow', delayMs: 300 }, { text: 'after' }],
      handler: { turnGate: (owner, turns) => (asked.push([owner, turns]), turns >= 1 ? 'At most 1 turn at once for this token.' : undefined) },
    });
    const first = await host.client();
    const second = await host.client();
    const running = first.callTool({ name: 'prompt', arguments: { prompt: 'take your time' } });
    await expect.poll(() => host!.handler.runningTurns('alice')).toBe(1);
    const refused = (await second.callTool({ name: 'prompt', arguments: { prompt: 'me too' } })) as { isError?: boolean; content: Array<{ text?: string }> };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toContain('At most 1 turn at once');
    expect(((await running) as unknown as { structuredContent: PromptOutput }).structuredContent.response).toBe('slow');
    expect(host.handler.runningTurns('alice')).toBe(0);
    expect((await second.callTool({ name: 'prompt', arguments: { prompt: 'now' } }) as unknown as { structuredContent: PromptOutput }).structuredContent.response).toBe('after');
    expect(asked).toEqual([['alice', 0], ['alice', 1], ['alice', 0]]);
  });

  it('two prompts sent at the same moment cannot both take the last free turn while their sessions open', async () => {
    host = await startMcpHost({
      owner: 'alice',
      turns: [{ text: 'only one', delayMs: 100 }, { text: 'unused' }],
      handler: { turnGate: (_owner, turns) => (turns >= 1 ? 'At most 1 turn at once for this token.' : undefined) },
      // Opening a session takes a while: both prompts are past the gate before either session is open.
      beforeOpen: () => new Promise((resolve) => setTimeout(resolve, 50)),
    });
    const [first, second] = await Promise.all([host.client(), host.client()]);
    // Neither has a session yet: each prompt opens one (a wait) after passing the gate.
    const results = (await Promise.all([first, second].map((client) => client.callTool({ name: 'prompt', arguments: { prompt: 'go' } })))) as Array<{ isError?: boolean; content: Array<{ text?: string }> }>;
    expect(results.filter((result) => result.isError)).toHaveLength(1);
    expect(results.find((result) => result.isError)!.content[0]!.text).toContain('At most 1 turn at once');
    expect(host.handler.runningTurns('alice')).toBe(0);
  });

  it('keeps one MCP session per mcp-session-id and ends it (saving its sessions) on DELETE', async () => {
    host = await startMcpHost({ turns: [{ text: 'Saved.' }] });
    const client = await host.client();
    expect(host.handler.sessionCount).toBe(1);
    const { sessionId } = (await client.callTool({ name: 'prompt', arguments: { prompt: 'remember me' } })).structuredContent as PromptOutput;
    const transport = httpTransportOf(client);
    const mcpSessionId = transport.sessionId!;
    await transport.terminateSession();
    await expect.poll(() => host!.handler.sessionCount).toBe(0);
    await expect.poll(async () => (await host!.kernel.get(SessionStore).load(sessionId))?.messages.length ?? 0).toBeGreaterThan(0);
    const after = await host.handler(post(host.url, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { 'mcp-session-id': mcpSessionId, 'mcp-protocol-version': '2025-06-18' }));
    expect(after.status).toBe(404);
  });

  it('resumes a stored session in a new MCP session only when allowResume is on', async () => {
    host = await startMcpHost({ turns: [{ text: 'One.' }, { text: 'Two.' }], transport: { allowResume: true } });
    const first = await host.client();
    const { sessionId } = (await first.callTool({ name: 'prompt', arguments: { prompt: 'one' } })).structuredContent as PromptOutput;
    // While the first MCP session holds it, nobody else can resume it.
    const second = await host.client();
    const refused = await second.callTool({ name: 'prompt', arguments: { prompt: 'two', sessionId } });
    expect(refused.isError).toBe(true);
    await httpTransportOf(first).terminateSession();
    await expect.poll(() => host!.handler.sessionCount).toBe(1);
    const resumed = await second.callTool({ name: 'prompt', arguments: { prompt: 'two', sessionId } });
    expect(resumed.isError).toBeFalsy();
    expect((resumed.structuredContent as PromptOutput).response).toBe('Two.');
    expect(host.provider.requests[1]!.messages.some((message) => JSON.stringify(message.content).includes('one'))).toBe(true);
  });

  it('refuses to resume a stored session by default', async () => {
    host = await startMcpHost({ turns: [{ text: 'One.' }] });
    const first = await host.client();
    const { sessionId } = (await first.callTool({ name: 'prompt', arguments: { prompt: 'one' } })).structuredContent as PromptOutput;
    await httpTransportOf(first).terminateSession();
    const second = await host.client();
    const refused = await second.callTool({ name: 'prompt', arguments: { prompt: 'two', sessionId } });
    expect(refused.isError).toBe(true);
  });
});
