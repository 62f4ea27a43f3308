import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noSessionServices, type Message, type PermissionMode, type PreToolUseContext, type Tool } from '@tessera/contracts';
import { createKernel, defineTool, toolsPlugin, type Kernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PermissionEnforcer } from './permission-enforcer.js';
import { permissionsPlugin } from './permissions-plugin.js';
import { RulesPermissionPolicy } from './rules-permission-policy.js';

// MCP-style tools the rules do not know by name; each says which family judges it.
const ran: string[] = [];
const writeFile = defineTool({
  name: 'mcp__fs__write_file',
  description: 'writes a file (fake)',
  inputSchema: z.object({ path: z.string(), content: z.string() }),
  permission: { family: 'edit', subject: 'path' },
  execute: ({ path }) => (ran.push(`write ${path}`), { success: true, output: 'written' }),
});
const runCommand = defineTool({
  name: 'mcp__shell__run',
  description: 'runs a command (fake)',
  inputSchema: z.object({ command: z.string() }),
  permission: { family: 'execute', subject: 'command' },
  execute: ({ command }) => (ran.push(`run ${command}`), { success: true, output: 'ran' }),
});
const fetchPage = defineTool({
  name: 'mcp__web__get',
  description: 'fetches a page (fake)',
  inputSchema: z.object({ url: z.string() }),
  permission: { family: 'fetch', subject: 'url' },
  execute: ({ url }) => (ran.push(`get ${url}`), { success: true, output: 'page' }),
});
const plainTool = defineTool({
  name: 'mcp__misc__do',
  description: 'no permission metadata (fake)',
  inputSchema: z.object({ path: z.string() }),
  execute: ({ path }) => (ran.push(`do ${path}`), { success: true, output: 'done' }),
});

let cwd: string;
let kernel: Kernel | undefined;
beforeEach(async () => {
  ran.length = 0;
  cwd = await realpath(await mkdtemp(join(tmpdir(), 'tessera-families-')));
  await mkdir(join(cwd, 'src'));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(cwd, { recursive: true, force: true });
});

type Call = { name: string; input: Record<string, string> };

async function run(calls: Call[], rules: object, permissionMode: PermissionMode = 'default'): Promise<string[]> {
  const turns = [...calls.map((call, index) => ({ toolCalls: [{ id: `t${index}`, ...call }] })), { text: 'done' }];
  kernel = await createKernel({
    plugins: testPreset({ turns, replace: [permissionsPlugin({ rules })], plugins: [toolsPlugin(writeFile, runCommand, fetchPage, plainTool)] }),
  });
  const session = kernel.createSession({ cwd, permissionMode });
  await session.run('go');
  return results(session.getHistory());
}

function results(history: readonly Message[]): string[] {
  return history.flatMap((message) => (message.role === 'tool' ? message.content.map((block) => String(block.content)) : []));
}

describe('tools judged by their declared family', () => {
  it('denies an edit tool by an Edit rule and runs it in acceptEdits inside the working directory', async () => {
    const output = await run(
      [
        { name: 'mcp__fs__write_file', input: { path: '/etc/passwd', content: 'x' } },
        { name: 'mcp__fs__write_file', input: { path: join(cwd, 'src/a.ts'), content: 'x' } },
      ],
      { deny: ['Edit(//etc/**)'] },
      'acceptEdits',
    );
    expect(output[0]).toMatch(/^Permission denied: .*Edit\(\/\/etc\/\*\*\)/);
    expect(ran).toEqual([`write ${join(cwd, 'src/a.ts')}`]);
  });

  it('denies an execute tool by a Bash rule on one subcommand of a compound command', async () => {
    const output = await run([{ name: 'mcp__shell__run', input: { command: 'ls && rm -rf /' } }, { name: 'mcp__shell__run', input: { command: 'ls' } }], {
      deny: ['Bash(rm:*)'],
      allow: ['Bash(ls)'],
    });
    expect(output[0]).toMatch(/^Permission denied: .*Bash\(rm:\*\)/);
    expect(ran).toEqual(['run ls']);
  });

  it('judges a fetch tool by WebFetch domain rules', async () => {
    await run(
      [
        { name: 'mcp__web__get', input: { url: 'https://example.com/a' } },
        { name: 'mcp__web__get', input: { url: 'https://blocked.example.org/' } },
      ],
      { allow: ['WebFetch(domain:example.com)'], deny: ['WebFetch(domain:*.example.org)'] },
    );
    expect(ran).toEqual(['get https://example.com/a']);
  });

  it('keeps judging a tool without metadata by its name alone', async () => {
    const output = await run([{ name: 'mcp__misc__do', input: { path: join(cwd, 'src/a.ts') } }], { allow: ['Edit(./src/**)'] }, 'acceptEdits');
    // Not an edit tool as far as the rules know: acceptEdits and Edit rules do not reach it.
    expect(output[0]).toMatch(/^Permission denied: .*no approval handler/);
    expect(ran).toEqual([]);
  });
});

describe('PermissionEnforcer and a declared subject field under a sandbox', () => {
  it('judges the declared field as the host path it stands for', async () => {
    const session = { sessionId: 's', cwd: '/work', services: noSessionServices, getPermissionMode: () => 'bypassPermissions' as const, getHistory: () => [] };
    const enforcer = new PermissionEnforcer({ policy: new RulesPermissionPolicy({ deny: ['Edit(./secrets/**)'] }), sandboxPaths: () => ({ root: '/workspace' }) });
    const tool = { name: 'mcp__fs__put', permission: { family: 'edit', subject: 'target' } } as unknown as Tool;
    const check = (target: string): Promise<unknown> =>
      enforcer.checkPermission({ session, round: 1, toolCallId: 't', toolName: 'mcp__fs__put', input: { target }, tool, signal: new AbortController().signal } satisfies PreToolUseContext);
    expect(await check('/workspace/secrets/key')).toMatchObject({ decision: 'deny', reason: expect.stringContaining('Edit(./secrets/**)') });
    expect(await check('/workspace/src/a.ts')).toBeUndefined();
  });
});
