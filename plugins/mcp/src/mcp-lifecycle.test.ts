import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpServerDeclaration, McpServerSource, Tool } from '@tessera/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { ProjectMcpJsonSource } from './config-sources.js';
import type { McpClientPool } from './mcp-client-pool.js';
import { CRASH_DURING_LISTING_BIN, FIXTURE_BIN, alive, fixturePids, listSource, session, stdio, survivors, testPool, toolContext, until } from './mcp.test-helper.js';

const pools: McpClientPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function fixturePool(options: Parameters<typeof testPool>[0] extends infer O ? Partial<O> : never = {}, env: Record<string, string> = {}) {
  const made = testPool({ sources: [listSource([{ name: 'fx', spec: stdio(FIXTURE_BIN, [], env) }])], ...options });
  pools.push(made.pool);
  return made;
}
const find = (tools: Tool[], name: string) => tools.find((tool) => tool.name === name)!;

/** After a settling second, exactly one of the servers the pool started is alive; after `close()`, none. */
async function expectOneProcessThenNone(pool: { close(): Promise<void> }, logs: Parameters<typeof fixturePids>[0]): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const running = fixturePids(logs).filter(alive);
  await pool.close();
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(survivors(fixturePids(logs))).toEqual([]);
  expect(running).toHaveLength(1);
}

describe('tool calls', () => {
  it('cancels a call that outlives the tool timeout and says how to raise it', async () => {
    const { pool } = fixturePool({ toolTimeoutMs: 200 });
    const tools = await pool.tools(session());
    const started = Date.now();
    const result = await find(tools, 'mcp__fx__slow').execute({ ms: 5_000 }, toolContext());
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result).toMatchObject({ success: false, errorCode: 'mcp_tool_timeout' });
    expect(result.error).toContain('MCP_TOOL_TIMEOUT');
  });

  it('takes the tool timeout from MCP_TOOL_TIMEOUT', async () => {
    const { pool } = fixturePool({ env: { ...process.env, MCP_TOOL_TIMEOUT: '150' } });
    const result = await find(await pool.tools(session()), 'mcp__fx__slow').execute({ ms: 5_000 }, toolContext());
    expect(result.errorCode).toBe('mcp_tool_timeout');
  });

  it('stops a call when the tool signal aborts, and the server hears of it', async () => {
    const { pool, logs } = fixturePool();
    const tools = await pool.tools(session());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await find(tools, 'mcp__fx__slow').execute({ ms: 5_000 }, toolContext(controller.signal));
    expect(result).toMatchObject({ success: false, errorCode: 'aborted' });
    await until(() => logs.some((entry) => entry.message.includes('slow cancelled')), 5_000, 'the server to see the cancellation');
  });

  it('turns isError and malformed content into failed results without throwing', async () => {
    const { pool } = fixturePool();
    const tools = await pool.tools(session());
    expect(await find(tools, 'mcp__fx__fail').execute({}, toolContext())).toMatchObject({ success: false, error: 'it went wrong', errorCode: 'tool_error' });
    const garbage = await find(tools, 'mcp__fx__garbage').execute({}, toolContext());
    expect(garbage.success).toBe(false);
    expect(garbage.error).toContain('server "fx"');
  });

  it('sanitises tool names', async () => {
    const { pool } = fixturePool();
    const tools = await pool.tools(session());
    expect(await find(tools, 'mcp__fx__weird_name_with_spaces').execute({}, toolContext())).toMatchObject({ success: true, output: 'weird' });
  });
});

describe('server lifecycle', () => {
  it('restarts a crashed server with backoff; its tools fail clearly meanwhile', async () => {
    const { pool, logs } = fixturePool({ restart: { initialDelayMs: 400, maxDelayMs: 1_000, maxAttempts: 3 } });
    let changes = 0;
    pool.onChange(() => (changes += 1));
    const tools = await pool.tools(session());
    void find(tools, 'mcp__fx__crash').execute({}, toolContext());
    await until(() => pool.servers()[0]!.status === 'failed', 5_000, 'the crash to be seen');
    expect(pool.servers()[0]!.error).toMatch(/exited or closed the connection; retrying in 400 ms/);
    expect(pool.servers()[0]!.tools).toBeGreaterThan(0);
    const during = await find(tools, 'mcp__fx__echo').execute({ text: 'hi' }, toolContext());
    expect(during).toMatchObject({ success: false, errorCode: 'mcp_server_unavailable' });
    expect(during.error).toContain('MCP server "fx"');
    await until(() => pool.servers()[0]!.status === 'connected', 5_000, 'the restart');
    expect(await find(tools, 'mcp__fx__echo').execute({ text: 'back' }, toolContext())).toMatchObject({ success: true, output: 'echo: back' });
    expect(logs.some((entry) => entry.code === 'TESSERA_MCP_SERVER_FAILED')).toBe(true);
    expect(changes).toBeGreaterThan(0);
  });

  it('refreshes tools on tools/list_changed and signals the change', async () => {
    const { pool } = fixturePool();
    let changed = false;
    pool.onChange(() => (changed = true));
    const tools = await pool.tools(session());
    expect(tools.some((tool) => tool.name === 'mcp__fx__late')).toBe(false);
    await find(tools, 'mcp__fx__add_tool').execute({}, toolContext());
    await until(() => changed && pool.servers()[0]!.toolNames.includes('mcp__fx__late'), 5_000, 'list_changed');
    const after = await pool.tools(session());
    expect(await find(after, 'mcp__fx__late').execute({}, toolContext())).toMatchObject({ output: 'late tool' });
  });

  it('does not hold a session beyond the start-up bound; a slow server joins later', async () => {
    const { pool } = fixturePool({ startupTimeoutMs: 150 }, { FIXTURE_START_DELAY_MS: '1500' });
    let changed = false;
    pool.onChange(() => (changed = true));
    const started = Date.now();
    const tools = await pool.tools(session());
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(tools).toHaveLength(0);
    expect(pool.servers()[0]!.status).toBe('connecting');
    await until(() => pool.servers()[0]!.status === 'connected', 10_000, 'the slow server');
    expect(changed).toBe(true);
    expect((await pool.tools(session())).length).toBeGreaterThan(0);
  });

  it('fails an attempt that outlives the connect timeout, and plans a retry', async () => {
    const { pool } = fixturePool({ connectTimeoutMs: 300, startupTimeoutMs: 5_000, restart: { initialDelayMs: 50, maxDelayMs: 50, maxAttempts: 2 } }, { FIXTURE_START_DELAY_MS: '600' });
    await pool.tools(session());
    expect(pool.servers()[0]!.error).toMatch(/did not finish connecting within 300 ms \(MCP_TIMEOUT raises the limit\); retrying/);
  });

  it('expands ${VAR} and ${VAR:-default}, and names server, field and variable when one is missing', async () => {
    const env = { ...process.env, FX_VALUE: 'from-env' };
    const { pool } = testPool({
      env,
      sources: [listSource([
        { name: 'ok', spec: stdio(FIXTURE_BIN, [], { A: '${FX_VALUE}', B: '${FX_UNSET:-fallback}' }) },
        { name: 'broken', spec: stdio(FIXTURE_BIN, ['${FX_MISSING}']), file: '/repo/.mcp.json' },
      ])],
    });
    pools.push(pool);
    const tools = await pool.tools(session());
    expect(await find(tools, 'mcp__ok__env').execute({ name: 'A' }, toolContext())).toMatchObject({ output: 'from-env' });
    expect(await find(tools, 'mcp__ok__env').execute({ name: 'B' }, toolContext())).toMatchObject({ output: 'fallback' });
    const broken = pool.servers().find((server) => server.name === 'broken')!;
    expect(broken.status).toBe('failed');
    expect(broken.error).toBe('MCP server "broken" (declared in /repo/.mcp.json): args[1] uses ${FX_MISSING}, but FX_MISSING is not set. Set it in the environment, or write ${FX_MISSING:-default} to give it a default.');
  });

  it('reports a command that cannot start as failed, naming the server', async () => {
    const { pool } = testPool({ sources: [listSource([{ name: 'nope', spec: { type: 'stdio', command: '/definitely/not/here', args: [], env: {} } }])], restart: { maxAttempts: 0 } });
    pools.push(pool);
    expect(await pool.tools(session())).toEqual([]);
    expect(pool.servers()[0]).toMatchObject({ name: 'nope', status: 'failed', error: expect.stringMatching(/ENOENT|not found|closed/) });
  });

  it('restarts a server that crashes while its tools are listed once, leaving one process, and none after close', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-mcp-flag-'));
    try {
      const { pool, logs } = testPool({
        restart: { initialDelayMs: 100, maxDelayMs: 400, maxAttempts: 5 },
        sources: [listSource([{ name: 'lst', spec: stdio(CRASH_DURING_LISTING_BIN, [], { FLAG_FILE: join(dir, 'flag') }) }])],
      });
      pools.push(pool);
      await pool.tools(session());
      await until(() => pool.servers()[0]?.status === 'connected', 10_000, 'the restart');
      await expectOneProcessThenNone(pool, logs);
      expect(logs.filter((entry) => entry.code === 'TESSERA_MCP_SERVER_FAILED')).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reconnect() while an attempt is still connecting supersedes it without leaving its process behind', async () => {
    const { pool, logs } = fixturePool({ startupTimeoutMs: 100 }, { FIXTURE_START_DELAY_MS: '800' });
    await pool.tools(session());
    expect(pool.servers()[0]!.status).toBe('connecting');
    await until(() => fixturePids(logs).length === 1, 5_000, 'the first process');
    await pool.reconnect('fx');
    expect(pool.servers()[0]!.status).toBe('connected');
    await expectOneProcessThenNone(pool, logs);
  });

  it('backs off a server that dies soon after every start, and gives up with the reason', async () => {
    const { pool, logs } = fixturePool({ restart: { initialDelayMs: 50, maxDelayMs: 400, maxAttempts: 3 } }, { FIXTURE_EXIT_AFTER_MS: '200' });
    await pool.tools(session());
    await until(() => pool.servers()[0]!.error?.includes('gave up') === true, 10_000, 'the restarts to run out');
    expect(pool.servers()[0]).toMatchObject({ status: 'failed', error: 'MCP server "fx" exited or closed the connection; gave up after 3 restarts in a row. Fix the server, then use /mcp reconnect.' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(logs.filter((entry) => entry.code === 'TESSERA_MCP_SERVER_FAILED')).toHaveLength(4);
    expect(fixturePids(logs)).toHaveLength(4);
  });

  it('takes the start-up timeout of each attempt from MCP_TIMEOUT', async () => {
    const { pool } = fixturePool({ env: { ...process.env, MCP_TIMEOUT: '300' }, startupTimeoutMs: 3_000, restart: { maxAttempts: 0 } }, { FIXTURE_START_DELAY_MS: '1500' });
    await pool.tools(session());
    expect(pool.servers()[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('did not finish connecting within 300 ms') });
  });

  it('stops a server no source declares any more, and forgets it', async () => {
    let declarations: McpServerDeclaration[] = [{ name: 'fx', spec: stdio(FIXTURE_BIN), scope: 'plugin', plugin: 'p' }];
    let changed: (() => void) | undefined;
    const source: McpServerSource = { name: 'bundle plugins', servers: () => declarations, onChange: (listener) => ((changed = listener), () => undefined) };
    const { pool, logs } = testPool({ sources: [source] });
    pools.push(pool);
    expect((await pool.tools(session())).length).toBeGreaterThan(0);
    const [pid] = fixturePids(logs);
    declarations = [];
    changed!();
    expect(await pool.tools(session())).toEqual([]);
    await until(() => !alive(pid!), 5_000, 'the server to stop');
    expect(pool.connection('fx')).toBeUndefined();
    expect(pool.resources()).toEqual([]);
  });

  it('stops the servers of a session that ended once no other session uses them', async () => {
    const other = await mkdtemp(join(tmpdir(), 'tessera-mcp-other-'));
    try {
      const { pool, logs } = fixturePool({ releaseGraceMs: 0 });
      await pool.tools(session(process.cwd(), 'a'));
      await pool.tools(session(other, 'b'));
      await pool.tools(session(other, 'c'));
      const [first, second] = fixturePids(logs);
      pool.release('b');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect([alive(first!), alive(second!)]).toEqual([true, true]);
      pool.release('c');
      await until(() => !alive(second!), 5_000, 'the folder\'s server to stop');
      expect(alive(first!)).toBe(true);
      expect(pool.servers()).toHaveLength(1);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('starts nothing for a session still resolving when the pool closes; it gets a closed error', async () => {
    const { pool, logs } = fixturePool();
    const connecting = pool.connect(session());
    await pool.close();
    await expect(connecting).rejects.toMatchObject({ code: 'mcp_closed' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(survivors(fixturePids(logs))).toEqual([]);
  });

  it('starts nothing for tools() after close(); it gets a closed error', async () => {
    const { pool, logs } = fixturePool();
    await pool.tools(session());
    await pool.close();
    await expect(pool.tools(session('/tmp', 's2'))).rejects.toThrow(/MCP client pool is closed/);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(survivors(fixturePids(logs))).toEqual([]);
  });
});

describe('project .mcp.json approval', () => {
  it('lists unapproved servers as needing approval, honours the settings keys, and starts a server once approved', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'tessera-mcp-project-'));
    try {
      const server = { command: process.execPath, args: [FIXTURE_BIN] };
      await writeFile(join(cwd, '.mcp.json'), JSON.stringify({ mcpServers: { one: server, two: server, three: server } }));
      const { pool } = testPool({ sources: [new ProjectMcpJsonSource()], approval: { enabledMcpjsonServers: ['one'], disabledMcpjsonServers: ['three'] } });
      pools.push(pool);
      const tools = await pool.tools(session(cwd));
      expect(tools.every((tool) => tool.name.startsWith('mcp__one__'))).toBe(true);
      const states = Object.fromEntries(pool.servers().map((state) => [state.name, state.status]));
      expect(states).toEqual({ one: 'connected', two: 'needs approval', three: 'disabled' });
      expect(pool.servers().find((state) => state.name === 'two')!.error).toContain('.mcp.json');
      pool.approveProjectServer('two');
      const after = await pool.tools(session(cwd));
      expect(after.some((tool) => tool.name === 'mcp__two__echo')).toBe(true);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('approves a server for its own project only', async () => {
    const repoA = await mkdtemp(join(tmpdir(), 'tessera-mcp-a-'));
    const repoB = await mkdtemp(join(tmpdir(), 'tessera-mcp-b-'));
    try {
      await writeFile(join(repoA, '.mcp.json'), JSON.stringify({ mcpServers: { db: { command: process.execPath, args: [FIXTURE_BIN] } } }));
      // Another repository (say, an untrusted clone) that uses the same name for its own server.
      await writeFile(join(repoB, '.mcp.json'), JSON.stringify({ mcpServers: { db: { command: process.execPath, args: [FIXTURE_BIN, '--other'] } } }));
      const { pool } = testPool({ sources: [new ProjectMcpJsonSource()] });
      pools.push(pool);
      await pool.tools(session(repoA, 'a'));
      pool.approveProjectServer('db');
      expect((await pool.tools(session(repoA, 'a'))).length).toBeGreaterThan(0);
      expect(await pool.tools(session(repoB, 'b'))).toEqual([]);
      expect(pool.servers().filter((state) => state.file?.startsWith(repoB)).map((state) => state.status)).toEqual(['needs approval']);
      pool.approveProjectServer('db', { cwd: repoB });
      expect((await pool.tools(session(repoB, 'b'))).length).toBeGreaterThan(0);
    } finally {
      await rm(repoA, { recursive: true, force: true });
      await rm(repoB, { recursive: true, force: true });
    }
  });

  it('keeps listing the servers for /mcp right after an approval', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'tessera-mcp-project-'));
    try {
      const server = { command: process.execPath, args: [FIXTURE_BIN] };
      await writeFile(join(cwd, '.mcp.json'), JSON.stringify({ mcpServers: { one: server, two: server } }));
      const { pool } = testPool({ sources: [new ProjectMcpJsonSource()], approval: { enabledMcpjsonServers: ['one'] } });
      pools.push(pool);
      await pool.tools(session(cwd));
      pool.approveProjectServer('two');
      expect(pool.servers().map((state) => state.name)).toEqual(['one', 'two']);
      // The approved server starts without waiting for the session's next tools listing.
      await until(() => pool.servers().find((state) => state.name === 'two')?.status === 'connected', 10_000, 'the approved server');
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
