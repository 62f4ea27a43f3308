import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeAnthropicServer } from '@tessera/test-servers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loopbackAuthorize } from './mcp-setup.js';

// MCP servers in a `tessera` run: --mcp-config, the project's .mcp.json and its approval, a real
// registry server (server-everything over stdio) called by the model through the permission rules.
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');
const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'plugins', 'mcp', 'package.json'));
const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json');
const EVERYTHING = join(dirname(manifest), (require(manifest) as { bin: Record<string, string> }).bin['mcp-server-everything']!);
const everything = { command: process.execPath, args: [EVERYTHING] };

let server: FakeAnthropicServer;
let home: string;
let workspace: string;

beforeEach(async () => {
  server = new FakeAnthropicServer();
  await server.listen();
  home = mkdtempSync(join(tmpdir(), 'tessera-mcp-home-'));
  workspace = mkdtempSync(join(tmpdir(), 'tessera-mcp-ws-'));
});

afterEach(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

async function run(argv: string[]): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...argv, '--output-format', 'stream-json', '--verbose'], {
    cwd: workspace,
    env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.baseURL },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, lines: stdout.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>), stderr };
}

const toolResults = (lines: Array<Record<string, unknown>>): string =>
  JSON.stringify(lines.filter((line) => line.type === 'user').map((line) => (line.message as { content: unknown }).content));

describe('MCP servers in a run', () => {
  it('--mcp-config: the model calls a server-everything tool, allowed by an mcp__ rule; mcp_servers in init', async () => {
    server.reply({ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'hello over stdio' } }] }, { text: ['done'] });
    const config = JSON.stringify({ mcpServers: { everything } });
    const { code, lines, stderr } = await run(['-p', 'echo it', '--mcp-config', config, '--allowedTools', 'mcp__everything']);
    expect(code, stderr).toBe(0);
    const init = lines[0] as { mcp_servers: Array<{ name: string }>; tools: string[] };
    expect(init.mcp_servers.map((entry) => entry.name)).toEqual(['everything']);
    expect(toolResults(lines)).toContain('Echo: hello over stdio');
    // The tool was offered to the model under its MCP name.
    const offered = (server.requests[0]!.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    expect(offered).toContain('mcp__everything__echo');
  });

  it('a .mcp.json server is not started until approved; enabledMcpjsonServers approves it', async () => {
    writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { everything } }));
    server.reply({ text: ['no tools'] });
    const before = await run(['-p', 'hi']);
    expect(before.code).toBe(0);
    expect((server.requests[0]!.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name).filter((name) => name.startsWith('mcp__'))).toEqual([]);
    mkdirSync(join(workspace, '.tessera'), { recursive: true });
    writeFileSync(join(workspace, '.tessera', 'settings.local.json'), JSON.stringify({ enabledMcpjsonServers: ['everything'] }));
    server.reply({ text: ['with tools'] });
    const after = await run(['-p', 'hi']);
    expect(after.code).toBe(0);
    expect((server.requests[1]!.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toContain('mcp__everything__echo');
  });

  it('--strict-mcp-config uses only the given servers; a broken --mcp-config value is reported, the run goes on', async () => {
    writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { project: everything } }));
    mkdirSync(join(workspace, '.tessera'), { recursive: true });
    writeFileSync(join(workspace, '.tessera', 'settings.local.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
    server.reply({ text: ['ok'] });
    const { code, lines, stderr } = await run(['-p', 'hi', '--strict-mcp-config', '--mcp-config', '{"mcpServers": {"broken": {"type": "http"}}}']);
    expect(code).toBe(0);
    expect((lines[0] as { mcp_servers: unknown[] }).mcp_servers).toEqual([]);
    expect(stderr).toMatch(/broken/);
  });
});

describe('the OAuth sign-in helper', () => {
  it('takes two mcp sign-ins at once one after the other on the shared redirect port', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const redirectUrl = `http://127.0.0.1:${port}/callback`;
    const opened: string[] = [];
    // The "browser": each sign-in page redirects back with a code a moment later.
    const authorize = loopbackAuthorize(() => undefined, (url) => {
      opened.push(url);
      setTimeout(() => void fetch(`${redirectUrl}?code=${new URL(url).searchParams.get('code')}&state=s`), 50);
    });
    const ask = (server: string) => authorize({ server, authorizationUrl: new URL(`https://auth.example/authorize?code=${server}`), redirectUrl });
    expect(await Promise.all([ask('github'), ask('linear')])).toEqual([{ code: 'github', state: 's' }, { code: 'linear', state: 's' }]);
    expect(opened).toHaveLength(2);
  });
});
