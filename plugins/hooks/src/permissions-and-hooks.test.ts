import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHandler, PermissionPolicy, type Message } from '@tessera/contracts';
import { createKernel, definePlugin, defineTool, toolsPlugin, type Kernel } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { hooksPlugin } from './hooks-plugin.js';

let dir: string;
let kernel: Kernel | undefined;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-perm-hooks-')));
});
afterEach(async () => {
  await kernel?.shutdown();
  await rm(dir, { recursive: true, force: true });
});

/** A `Bash` tool that only records the commands it was given. */
function fakeBash(): { ran: string[]; bash: ReturnType<typeof defineTool> } {
  const ran: string[] = [];
  const bash = defineTool({
    name: 'Bash',
    description: 'fake',
    inputSchema: z.object({ command: z.string() }),
    execute: ({ command }) => (ran.push(command), { success: true, output: 'ok' }),
  });
  return { ran, bash };
}

/** An executable hook script in the test folder. */
async function hookScript(name: string, body: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `#!/bin/sh\n${body}`);
  await chmod(file, 0o755);
  return file;
}

it('runs hooks before the permission guard: a hook blocks, deny rules still deny and ask rules still ask what a hook allows, and a hook allow spares the prompt otherwise', async () => {
  const { ran, bash } = fakeBash();
  // Blocks `git push`; answers `allow` for everything else.
  const hook = await hookScript(
    'guard.sh',
    'input=$(cat)\necho "$input" >> "$CLAUDE_PROJECT_DIR/seen"\necho "$input" | grep -q "git push" && { echo "no pushing on Fridays" >&2; exit 2; }\n' +
      'echo \'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}\'\n',
  );
  const turns = [
    { toolCalls: [{ id: 'a', name: 'Bash', input: { command: 'rm -rf /' } }] },
    { toolCalls: [{ id: 'b', name: 'Bash', input: { command: 'git push' } }] },
    { toolCalls: [{ id: 'c', name: 'Bash', input: { command: 'git status' } }] },
    { toolCalls: [{ id: 'd', name: 'Bash', input: { command: 'npm test' } }] },
    { toolCalls: [{ id: 'e', name: 'Bash', input: { command: 'make build' } }] },
    { text: 'done' },
  ];
  const approvals: string[] = [];
  kernel = await createKernel({
    plugins: [
      ...testPreset({
        turns,
        replace: [
          permissionsPlugin({
            rules: { allow: ['Bash(git *)'], deny: ['Bash(rm *)'], ask: ['Bash(npm *)'] },
            permissionHandler: async (toolName, input) => (approvals.push(JSON.stringify(input)), false),
          }),
        ],
        plugins: [toolsPlugin(bash)],
      }),
      hooksPlugin({ configs: [{ config: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] }, source: { file: 'settings.json' } }] }),
    ],
  });
  const session = kernel.createSession({ cwd: dir });
  await session.run('go');
  const results = session.getHistory().flatMap((m: Message) => (m.role === 'tool' ? m.content.map((b) => String(b.content)) : []));
  expect(results[0]).toMatch(/^Permission denied: /); // the hook said allow; the deny rule still wins
  expect(results[1]).toBe('Blocked by hook: no pushing on Fridays');
  expect(results[2]).toBe('ok');
  // An ask rule: the hook's allow does not override it (Claude Code), so the user is asked and declines.
  expect(results[3]).toMatch(/^Permission denied: Bash was not approved/);
  expect(results[4]).toBe('ok'); // no rule, only the mode would ask: the hook's allow spares that prompt
  expect(approvals).toEqual([JSON.stringify({ command: 'npm test' })]);
  expect(ran).toEqual(['git status', 'make build']);
  const seen = await readFile(join(dir, 'seen'), 'utf8');
  expect(seen).toContain('rm -rf'); // hooks see every call first, as in Claude Code
  expect(existsSync(join(dir, 'seen'))).toBe(true);
});

it('composes the same permissions and hooks plugin values into two kernels in a row; each kernel denies by rule and runs the hook', async () => {
  const { ran, bash } = fakeBash();
  const hook = await hookScript('seen.sh', 'cat >> "$CLAUDE_PROJECT_DIR/seen"\necho >> "$CLAUDE_PROJECT_DIR/seen"\n');
  const permissions = permissionsPlugin({ rules: { allow: ['Bash(ls)'], deny: ['Bash(rm *)'] } });
  const hooks = hooksPlugin({ configs: [{ config: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] }, source: { file: 'settings.json' } }] });
  const turns = [
    { toolCalls: [{ id: 'a', name: 'Bash', input: { command: 'rm -rf /' } }] },
    { toolCalls: [{ id: 'b', name: 'Bash', input: { command: 'ls' } }] },
    { text: 'done' },
  ];
  const boot = () => createKernel({ plugins: [...testPreset({ turns, replace: [permissions], plugins: [toolsPlugin(bash)] }), hooks] });
  const first = await boot();
  const second = await boot();
  try {
    expect(first.get(PermissionPolicy)).not.toBe(second.get(PermissionPolicy));
    for (const [index, kernel] of [first, second].entries()) {
      const session = kernel.createSession({ cwd: dir });
      await session.run('go');
      const results = session.getHistory().flatMap((m: Message) => (m.role === 'tool' ? m.content.map((b) => String(b.content)) : []));
      expect(results[0]).toMatch(/^Permission denied: .*Bash\(rm \*\)/);
      expect(results[1]).toBe('ok');
      expect(ran).toEqual(Array(index + 1).fill('ls'));
      const seen = (await readFile(join(dir, 'seen'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { session_id: string; tool_input: unknown });
      // Each kernel's hook saw both calls of its own session, once each.
      expect(seen.filter((entry) => entry.session_id === session.sessionId).map((entry) => entry.tool_input)).toEqual([{ command: 'rm -rf /' }, { command: 'ls' }]);
      expect(seen).toHaveLength(2 * (index + 1));
    }
  } finally {
    await first.shutdown();
    await second.shutdown();
  }
});


it("a hook's ask that the person approved is not asked again by an ask rule for the same call", async () => {
  const { ran, bash } = fakeBash();
  const hook = await hookScript('ask.sh', 'cat > /dev/null\necho \'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}\'\n');
  const prompts: string[] = [];
  kernel = await createKernel({
    plugins: [
      ...testPreset({
        turns: [{ toolCalls: [{ id: 'a', name: 'Bash', input: { command: 'npm test' } }] }, { text: 'done' }],
        replace: [permissionsPlugin({ rules: { allow: [], deny: [], ask: ['Bash(npm *)'] } })],
        // One person answering every prompt, the hook's and the guard's alike.
        plugins: [toolsPlugin(bash), definePlugin({ name: 'person', provides: [ApprovalHandler], register: ({ bind }) => void bind(ApprovalHandler).toConstantValue({ requestApproval: async (request) => (prompts.push(JSON.stringify(request.input)), true) }) })],
      }),
      hooksPlugin({ configs: [{ config: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] }, source: { file: 'settings.json' } }] }),
    ],
  });
  const session = kernel.createSession({ cwd: dir });
  await session.run('go');
  // One prompt (the hook's), answered yes: the ask rule's prompt would be the same question again.
  expect(prompts).toEqual([JSON.stringify({ command: 'npm test' })]);
  expect(ran).toEqual(['npm test']);
});
