import { McpServerSourceContribution, type Message } from '@tessera/contracts';
import { createKernel, definePlugin, type Kernel } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { testPreset } from '@tessera/preset-test';
import { afterEach, describe, expect, it } from 'vitest';
import { McpClients, mcpClient } from './mcp-plugin.js';
import { FIXTURE_BIN } from './mcp.test-helper.js';

let kernel: Kernel | undefined;
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
});

function toolOutputs(history: readonly Message[]): string[] {
  return history.flatMap((message) => (message.role === 'tool' ? message.content.map((block) => String(block.content)) : []));
}

describe('an MCP tool in a scripted session', () => {
  it('is offered to the model, judged by the permission rules, seen by hooks, and runs', async () => {
    const seen: string[] = [];
    const observer = definePlugin({
      name: 'observer',
      register({ hooks }) {
        hooks.preToolUse.tapPromise({ name: 'observer' }, async (context) => {
          seen.push(context.toolName);
        });
      },
    });
    const turns = [
      { toolCalls: [{ id: 't1', name: 'mcp__fx__echo', input: { text: 'hi' } }] },
      { toolCalls: [{ id: 't2', name: 'mcp__fx__env', input: { name: 'HOME' } }] },
      { text: 'done' },
    ];
    kernel = await createKernel({
      plugins: testPreset({
        turns,
        replace: [permissionsPlugin({ rules: { allow: ['mcp__fx'], deny: ['mcp__fx__env'] } })],
        plugins: [mcpClient({ servers: { fx: { command: process.execPath, args: [FIXTURE_BIN] } }, oauth: false }), observer],
      }),
    });
    const session = kernel.createSession({ cwd: process.cwd(), permissionMode: 'default' });
    await session.run('use the tools');
    const outputs = toolOutputs(session.getHistory());
    expect(outputs[0]).toBe('echo: hi');
    expect(outputs[1]).toMatch(/^Permission denied: .*mcp__fx__env/);
    // The permission guard bails before later preToolUse taps, as it does for built-in tools.
    expect(seen).toEqual(['mcp__fx__echo']);
    expect(kernel.get(McpClients).servers()).toMatchObject([{ name: 'fx', status: 'connected', scope: 'sdk' }]);
  });

  it('takes servers from a bound McpServerSourceContribution and names plugin servers mcp__plugin_<plugin>_<server>__<tool>', async () => {
    const bundle = definePlugin({
      name: 'bundle',
      contributes: [McpServerSourceContribution],
      register({ bind }) {
        bind(McpServerSourceContribution).toConstantValue({
          name: 'bundle acme',
          servers: () => [{ name: 'fx', scope: 'plugin', plugin: 'acme', spec: { type: 'stdio', command: process.execPath, args: [FIXTURE_BIN], env: {} } }],
        });
      },
    });
    kernel = await createKernel({
      plugins: testPreset({
        turns: [{ toolCalls: [{ id: 't1', name: 'mcp__plugin_acme_fx__echo', input: { text: 'from a plugin' } }] }, { text: 'done' }],
        plugins: [mcpClient({ projectConfig: false, oauth: false }), bundle],
      }),
    });
    const session = kernel.createSession({ cwd: process.cwd() });
    await session.run('go');
    expect(toolOutputs(session.getHistory())).toEqual(['echo: from a plugin']);
    expect(kernel.get(McpClients).servers()[0]).toMatchObject({ name: 'plugin:acme:fx', plugin: 'acme', scope: 'plugin' });
  });

  it('stops a server when the last session that used it ends, after the grace; the same id opened again within it keeps the server', async () => {
    kernel = await createKernel({
      plugins: testPreset({
        turns: [{ text: 'done' }, { text: 'again' }],
        plugins: [mcpClient({ servers: { fx: { command: process.execPath, args: [FIXTURE_BIN] } }, oauth: false, releaseGraceMs: 300 })],
      }),
    });
    const session = kernel.createSession({ cwd: process.cwd() });
    await session.run('go');
    const pool = kernel.get(McpClients);
    const first = pool.connection('fx');
    expect(first?.status).toBe('connected');
    await session.shutdown();
    // A copy of the same session opened again at once (as a server replica reopens one): the same server.
    const copy = kernel.createSession({ cwd: process.cwd(), sessionId: session.sessionId });
    await copy.run('go on');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(pool.connection('fx')).toBe(first);
    await copy.shutdown();
    expect(pool.connection('fx')).toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(pool.connection('fx')).toBeUndefined();
    expect(pool.servers()).toEqual([]);
  });

  it('rejects bad options with a message naming the option', () => {
    expect(() => mcpClient({ toolTimeoutMs: -1 })).toThrow('mcpClient(): toolTimeoutMs must be a positive number of milliseconds (got -1).');
    expect(() => mcpClient({ strictMcpConfig: true })).toThrow(/strictMcpConfig needs mcpConfig/);
  });
});
