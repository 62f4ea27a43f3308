import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@tessera/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpClientPool } from './mcp-client-pool.js';
import { listSource, session, testPool, toolContext, until } from './mcp.test-helper.js';
import { startOAuthServer, startSseOnlyServer, startStreamableServer, type LoopbackServer } from './remote-servers.test-helper.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
async function started<T extends LoopbackServer>(server: Promise<T>): Promise<T> {
  const value = await server;
  cleanup.push(() => value.close());
  return value;
}
function pooled(made: { pool: McpClientPool; logs: Array<{ code: string; message: string }> }) {
  cleanup.push(() => made.pool.close());
  return made;
}
const find = (tools: Tool[], name: string) => tools.find((tool) => tool.name === name)!;

describe('Streamable HTTP', () => {
  it('connects, sends the declared and helper headers, expands variables in them, and calls a tool', async () => {
    const server = await started(startStreamableServer());
    const { pool } = pooled(testPool({
      env: { ...process.env, REMOTE_TOKEN: 's3cret' },
      sources: [listSource([{ name: 'remote', spec: { type: 'http', url: server.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' }, headersHelper: `echo '{"X-From-Helper":"yes"}'` } }])],
    }));
    const tools = await pool.tools(session());
    expect(pool.servers()[0]).toMatchObject({ name: 'remote', status: 'connected', transport: 'http', prompts: 1 });
    expect(await find(tools, 'mcp__remote__greet').execute({ who: 'web' }, toolContext())).toMatchObject({ success: true, output: 'hello web' });
    expect(server.seenHeaders.some((headers) => headers.authorization === 'Bearer s3cret' && headers['x-from-helper'] === 'yes')).toBe(true);
  });

  it('falls back to the HTTP+SSE transport when the server refuses Streamable HTTP with a 4xx', async () => {
    const server = await started(startSseOnlyServer());
    const { pool, logs } = pooled(testPool({ sources: [listSource([{ name: 'legacy', spec: { type: 'http', url: server.url, headers: {} } }])] }));
    const tools = await pool.tools(session());
    expect(pool.servers()[0]).toMatchObject({ status: 'connected' });
    expect(await find(tools, 'mcp__legacy__greet').execute({ who: 'sse' }, toolContext())).toMatchObject({ output: 'hello sse' });
    expect(logs.some((entry) => entry.code === 'TESSERA_MCP_SSE_FALLBACK')).toBe(true);
  });

  it('speaks the SSE transport directly when the declaration says so', async () => {
    const server = await started(startSseOnlyServer());
    const { pool } = pooled(testPool({ sources: [listSource([{ name: 'legacy', spec: { type: 'sse', url: server.url, headers: {} } }])] }));
    expect(await find(await pool.tools(session()), 'mcp__legacy__greet').execute({ who: 'direct' }, toolContext())).toMatchObject({ output: 'hello direct' });
  });

  it('reports a headersHelper that prints no JSON object, naming the server and field', async () => {
    const server = await started(startStreamableServer());
    const { pool } = pooled(testPool({ restart: { maxAttempts: 0 }, sources: [listSource([{ name: 'remote', spec: { type: 'http', url: server.url, headers: {}, headersHelper: 'echo nope' } }])] }));
    await pool.tools(session());
    expect(pool.servers()[0]).toMatchObject({ status: 'failed', error: 'MCP server "remote": headersHelper printed something that is not JSON. It must print a JSON object of header names to string values.' });
  });

  it('keeps the secrets a failing headersHelper refers to out of /mcp and the diagnostics', async () => {
    const { pool, logs } = pooled(testPool({
      env: { ...process.env, CLIENT_SECRET: 'topsecret-123' },
      restart: { maxAttempts: 0 },
      sources: [listSource([{ name: 'remote', spec: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: {}, headersHelper: 'echo "bad $CLIENT_SECRET" >&2; exit 3 # ${CLIENT_SECRET}' } }])],
    }));
    await pool.tools(session());
    const error = pool.servers()[0]!.error!;
    expect(error).toBe('MCP server "remote": headersHelper "echo \\"bad $CLIENT_SECRET\\" >&2; exit 3 # ${CLIENT_SECRET}" failed (exit code 3): bad ${CLIENT_SECRET}.');
    expect(logs.map((entry) => entry.message).join('\n')).not.toContain('topsecret-123');
  });

  it('reports an unreachable server as failed', async () => {
    const server = await startStreamableServer();
    await server.close();
    const { pool } = pooled(testPool({ restart: { maxAttempts: 0 }, sources: [listSource([{ name: 'gone', spec: { type: 'http', url: server.url, headers: {} } }])] }));
    expect(await pool.tools(session())).toEqual([]);
    expect(pool.servers()[0]).toMatchObject({ status: 'failed', error: expect.any(String) });
  });
});

describe('OAuth', () => {
  it('runs authorization code + PKCE through the authorize callback, stores tokens privately, and reuses them', async () => {
    const server = await started(startOAuthServer());
    const directory = join(await mkdtemp(join(tmpdir(), 'tessera-mcp-oauth-')), 'tokens');
    cleanup.push(() => rm(join(directory, '..'), { recursive: true, force: true }));
    const asked: URL[] = [];
    // The "browser": follow the authorization URL and read the code off the redirect.
    const authorize = async ({ authorizationUrl }: { authorizationUrl: URL }) => {
      asked.push(authorizationUrl);
      const answer = await fetch(authorizationUrl, { redirect: 'manual' });
      const location = new URL(answer.headers.get('location')!);
      return { code: location.searchParams.get('code')!, state: location.searchParams.get('state') ?? undefined };
    };
    const spec = { type: 'http' as const, url: server.url, headers: {} };
    const first = pooled(testPool({ oauth: { directory, redirectUrl: 'http://127.0.0.1:1/callback', authorize }, sources: [listSource([{ name: 'secured', spec }])] }));
    const tools = await first.pool.tools(session());
    expect(first.pool.servers()[0]).toMatchObject({ status: 'connected' });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.searchParams.get('code_challenge_method')).toBe('S256');
    expect(await find(tools, 'mcp__secured__greet').execute({ who: 'me' }, toolContext())).toMatchObject({ output: `hello me (token ${server.issued[0]})` });
    expect((await stat(directory)).mode & 0o777).toBe(0o700);
    const files = await readdir(directory);
    expect(files).toHaveLength(1);
    expect((await stat(join(directory, files[0]!))).mode & 0o777).toBe(0o600);
    await first.pool.close();

    // A second client finds the stored token and does not ask again.
    const second = pooled(testPool({ oauth: { directory, authorize }, sources: [listSource([{ name: 'secured', spec }])] }));
    await second.pool.tools(session());
    expect(second.pool.servers()[0]).toMatchObject({ status: 'connected' });
    expect(asked).toHaveLength(1);
  });

  it('does not cut a slow sign-in off at the connect timeout, and asks the user once', async () => {
    const server = await started(startOAuthServer());
    const directory = join(await mkdtemp(join(tmpdir(), 'tessera-mcp-oauth-')), 'tokens');
    cleanup.push(() => rm(join(directory, '..'), { recursive: true, force: true }));
    const asked: URL[] = [];
    // The user needs longer in the browser than one connection attempt may take.
    const authorize = async ({ authorizationUrl }: { authorizationUrl: URL }) => {
      asked.push(authorizationUrl);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const answer = await fetch(authorizationUrl, { redirect: 'manual' });
      const location = new URL(answer.headers.get('location')!);
      return { code: location.searchParams.get('code')!, state: location.searchParams.get('state') ?? undefined };
    };
    const { pool } = pooled(testPool({
      connectTimeoutMs: 1_000,
      startupTimeoutMs: 200,
      restart: { initialDelayMs: 50, maxDelayMs: 100, maxAttempts: 3 },
      oauth: { directory, redirectUrl: 'http://127.0.0.1:1/callback', authorize },
      sources: [listSource([{ name: 'secured', spec: { type: 'http', url: server.url, headers: {} } }])],
    }));
    await pool.tools(session());
    // /mcp reconnect while the user is still signing in waits for that sign-in instead of starting another.
    await until(() => asked.length === 1, 5_000, 'the sign-in');
    const reconnecting = pool.reconnect('secured');
    await until(() => pool.servers()[0]?.status === 'connected', 8_000, 'the connection after the sign-in');
    await reconnecting;
    expect(asked).toHaveLength(1);
    expect(pool.servers()[0]).toMatchObject({ status: 'connected' });
  });

  it('fails clearly when a server needs authorization and the host offers no way to give it', async () => {
    const server = await started(startOAuthServer());
    const directory = await mkdtemp(join(tmpdir(), 'tessera-mcp-oauth-'));
    cleanup.push(() => rm(directory, { recursive: true, force: true }));
    const { pool } = pooled(testPool({ oauth: { directory }, sources: [listSource([{ name: 'secured', spec: { type: 'http', url: server.url, headers: {} } }])] }));
    await pool.tools(session());
    expect(pool.servers()[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('MCP server "secured" needs authorization, and this host offers no way to authorize') });
  });
});
