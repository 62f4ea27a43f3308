import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTurnAnswering } from './ui-stream.test-helper.js';

// `tessera serve` through the built bin: the demo model, a token from the environment, a turn
// whose permission asks are answered over HTTP, a clean stop and a resume after the restart.
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');
const TOKEN = 'serve-test-token-0123456789';
let home: string;
let root: string;
let child: ChildProcess | undefined;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'tessera-serve-home-'));
  root = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-serve-root-')));
  mkdirSync(join(root, 'notes'));
  writeFileSync(join(root, 'notes', 'today.md'), '# Today\nShip the server.\n');
});

afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  rmSync(home, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

async function serve(): Promise<{ url: string; stop(): Promise<number | null> }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--root', root, '--provider', 'demo'], {
    env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0', TESSERA_SERVER_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.on('exit', (code) => reject(new Error(`tessera serve exited ${code}: ${output}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        proc.once('exit', (code) => resolve(code));
        proc.kill('SIGTERM');
      }),
  };
}

const api = (url: string) => (path: string, init: RequestInit & { json?: unknown } = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }) });

describe('tessera serve', () => {
  it('runs a turn whose permission asks are answered over HTTP; stops cleanly; a stored session resumes', async () => {
    const first = await serve();
    const call = api(first.url);
    expect((await fetch(`${first.url}/v1/sessions`)).status).toBe(401);
    const created = (await (await call('/v1/sessions', { method: 'POST', json: { name: 'notes' } })).json()) as { id: string; cwd: string };
    expect(created.cwd).toBe(root);
    const response = await call(`/v1/sessions/${created.id}/messages`, { method: 'POST', json: { prompt: 'summarise my notes' } });
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const { text, answered } = await readTurnAnswering(response, async (requestId) => {
      expect((await call(`/v1/sessions/${created.id}/permissions/${requestId}`, { method: 'POST', json: { decision: 'allow' } })).status).toBe(200);
    });
    expect(answered.size).toBeGreaterThan(0);
    expect(text).toContain('"type":"tool-output-available"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(existsSync(join(root, 'SUMMARY.md'))).toBe(true);

    // The same server speaks MCP at /mcp, behind the same token.
    const client = new Client({ name: 'serve-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('prompt');
    await client.close();
    expect((await fetch(`${first.url}/mcp`, { method: 'POST', body: '{}' })).status).toBe(401);
    expect(await first.stop()).toBe(0);

    const second = await serve();
    const resumed = await api(second.url)('/v1/sessions', { method: 'POST', json: { resume: created.id } });
    expect(resumed.status).toBe(201);
    expect(((await resumed.json()) as { messageCount: number }).messageCount).toBeGreaterThan(2);
    expect(await second.stop()).toBe(0);
  }, 60_000);

  it("a client cannot install a plugin for the whole server: /plugin over REST is refused and the user settings stay as they were", async () => {
    // A marketplace a client could point at: one plugin whose hook would run in every session.
    const market = join(root, 'market');
    mkdirSync(join(market, '.claude-plugin'), { recursive: true });
    writeFileSync(join(market, '.claude-plugin', 'marketplace.json'), JSON.stringify({ name: 'evil', owner: { name: 'x' }, plugins: [{ name: 'p', source: './p' }] }));
    const server = await serve();
    const call = api(server.url);
    const { id } = (await (await call('/v1/sessions', { method: 'POST', json: {} })).json()) as { id: string };
    for (const args of [`marketplace add ${market} --yes`, 'install p@evil --yes']) {
      const refused = await call(`/v1/sessions/${id}/commands`, { method: 'POST', json: { name: 'plugin', args } });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('command_not_allowed');
    }
    expect(existsSync(join(home, '.tessera', 'settings.json'))).toBe(false);
    expect(existsSync(join(home, '.tessera', 'plugins'))).toBe(false);
    expect(await server.stop()).toBe(0);
  }, 60_000);

  it('refuses to start without tokens, and hashes a token for the config file', async () => {
    const noTokens = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--provider', 'demo'], { env: { PATH: process.env.PATH, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    noTokens.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await new Promise((resolve) => noTokens.on('exit', resolve))).toBe(1);
    expect(stderr).toContain('No tokens');
    const hash = spawn(process.execPath, [BIN, 'serve', '--hash-token', 'abc'], { env: { PATH: process.env.PATH, HOME: home } });
    let stdout = '';
    hash.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await new Promise((resolve) => hash.on('exit', resolve));
    expect(stdout.trim()).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
