import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpServerSource } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliMcpConfigSource, ProjectMcpJsonSource, StaticMcpServerSource } from './config-sources.js';
import { McpClientPool } from './mcp-client-pool.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-mcp-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cmd = (name: string) => ({ command: name });

describe('config sources', () => {
  it('reads .mcp.json in both shapes and reports bad entries with file and field', async () => {
    await writeFile(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { good: cmd('a'), bad: { type: 'carrier-pigeon' } } }));
    const source = new ProjectMcpJsonSource();
    expect(source.servers({ cwd: dir })).toEqual([{ name: 'good', scope: 'project', file: join(dir, '.mcp.json'), spec: { type: 'stdio', command: 'a', args: [], env: {} } }]);
    expect(source.diagnostics()).toEqual([expect.objectContaining({ severity: 'error', file: join(dir, '.mcp.json'), path: 'mcpServers.bad.type' })]);
    await writeFile(join(dir, '.mcp.json'), JSON.stringify({ bare: { type: 'http', url: 'https://x/mcp' } }));
    expect(source.servers({ cwd: dir })[0]).toMatchObject({ name: 'bare', spec: { type: 'http', url: 'https://x/mcp', headers: {} } });
  });

  it('takes --mcp-config files and inline JSON, resolving relative paths against the base directory', async () => {
    await writeFile(join(dir, 'servers.json'), JSON.stringify({ mcpServers: { fromFile: cmd('f') } }));
    const source = new CliMcpConfigSource(['servers.json', '{"mcpServers":{"inline":{"command":"i"}}}', '{not json', 'missing.json'], dir);
    expect(source.servers().map((server) => [server.name, server.scope, server.file])).toEqual([
      ['fromFile', 'cli', join(dir, 'servers.json')],
      ['inline', 'cli', '--mcp-config[1] (inline JSON)'],
    ]);
    const files = source.diagnostics().map((diagnostic) => diagnostic.file);
    expect(files).toContain('--mcp-config[2] (inline JSON)');
    expect(files).toContain(join(dir, 'missing.json'));
  });

  it('applies precedence local > project > user, with cli and sdk above them', async () => {
    await writeFile(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { shared: cmd('project'), onlyProject: cmd('p') } }));
    const sources: McpServerSource[] = [
      new StaticMcpServerSource('user', { shared: cmd('user'), onlyUser: cmd('u'), both: cmd('user-both') }, 'user', 'user settings'),
      new ProjectMcpJsonSource(),
      new StaticMcpServerSource('local', { shared: cmd('local') }, 'local', 'local settings'),
      new CliMcpConfigSource(['{"both":{"command":"cli-both"}}'], dir),
    ];
    const logs: string[] = [];
    const pool = new McpClientPool({ sources, oauth: false, approval: () => 'denied', log: (entry) => logs.push(entry.message) });
    await pool.connect({ sessionId: 's', cwd: dir });
    const states = Object.fromEntries(pool.servers().map((state) => [state.name, state.scope]));
    expect(states).toEqual({ both: 'cli', onlyProject: 'project', onlyUser: 'user', shared: 'local' });
    expect(logs.some((message) => message.includes('"shared"') && message.includes('shadowed'))).toBe(true);
    await pool.close();
  });

  it('reports a source that throws and keeps the others', async () => {
    const logs: string[] = [];
    const broken: McpServerSource = { name: 'broken', servers: () => { throw new Error('kaput'); } };
    const pool = new McpClientPool({ sources: [broken, new StaticMcpServerSource('user', { ok: cmd('x') }, 'user', 'user settings')], oauth: false, restart: { maxAttempts: 0 }, log: (entry) => logs.push(entry.message) });
    await pool.connect({ sessionId: 's', cwd: dir });
    expect(pool.servers().map((state) => state.name)).toEqual(['ok']);
    expect(logs).toContain('MCP server source "broken" failed: kaput');
    await pool.close();
  });
});
