import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HooksConfig, Message, SubagentLauncher } from '@tessera/contracts';
import { createKernel, defineTool, toolsPlugin, type Kernel } from '@tessera/kernel';
import { ScriptedProvider, type ScriptedRequest } from '@tessera/plugin-provider-scripted';
import { SubagentManagerToken, subagents } from '@tessera/plugin-subagents';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HookRunResult } from './hook-outcome.js';
import { hooksPlugin, type HooksPluginOptions } from './hooks-plugin.js';

let dir: string;
let kernel: Kernel | undefined;
const ran: string[] = [];
const bash = defineTool({
  name: 'Bash',
  description: 'fake bash',
  inputSchema: z.object({ command: z.string() }),
  execute: (input) => {
    ran.push(input.command);
    return { success: true, output: `ran ${input.command}` };
  },
});

beforeEach(async () => {
  ran.length = 0;
  dir = await mkdtemp(join(tmpdir(), 'tessera-agent-hooks-'));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

const isSubagent = (request: ScriptedRequest): boolean => JSON.stringify(request.messages[0]).includes('VERIFY');
const toolTexts = (history: readonly Message[]): string[] =>
  history.flatMap((m) => (m.role === 'tool' ? m.content.map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))) : []));

/** Parent turns and subagent turns come from one scripted provider; the hook prompt tells them apart. */
async function start(config: HooksConfig, parent: object[], child: (request: ScriptedRequest) => object, withSubagents = true, extra: Partial<HooksPluginOptions> = {}) {
  const results: HookRunResult[] = [];
  const childRequests: ScriptedRequest[] = [];
  let turn = 0;
  const provider = new ScriptedProvider({
    turns: (request) => {
      if (isSubagent(request)) {
        childRequests.push(request);
        return child(request) as never;
      }
      return parent[turn++] as never;
    },
  });
  kernel = await createKernel({
    plugins: testPreset({
      provider,
      plugins: [
        toolsPlugin(bash),
        withSubagents && subagents({ cwd: dir, home: dir, discover: false, worktree: false }),
        hooksPlugin({ configs: [{ config, source: { file: join(dir, 'settings.json') } }], onHookResult: (r) => results.push(r), ...extra }),
      ],
    }),
  });
  return { session: kernel.createSession({ cwd: dir }), results, childRequests };
}

const agentHook = { type: 'agent' as const, prompt: 'VERIFY this: $ARGUMENTS' };

describe('agent hooks through the subagents plugin', () => {
  it('a PreToolUse agent hook blocks or allows from the subagent verdict', async () => {
    const config = { PreToolUse: [{ matcher: 'Bash', hooks: [agentHook] }] };
    const calls = [
      { toolCalls: [{ id: 'c1', name: 'Bash', input: { command: 'rm -rf /' } }] },
      { toolCalls: [{ id: 'c2', name: 'Bash', input: { command: 'ls' } }] },
      { text: 'finished' },
    ];
    const { session, childRequests } = await start(config, calls, (request) =>
      JSON.stringify(request.messages).includes('rm -rf') ? { text: 'Checked. {"ok": false, "reason": "destructive command"}' } : { text: '{"ok": true}' },
    );
    expect(await session.run('go')).toBe('finished');
    expect(ran).toEqual(['ls']);
    expect(toolTexts(session.getHistory())).toEqual(['Blocked by hook: destructive command', 'ran ls']);
    expect(childRequests).toHaveLength(2);
    // The subagent got the hook input and the verdict format; it is a recorded subagent job.
    const asked = String((childRequests[0]!.messages[0] as { content: unknown }).content);
    expect(asked).toContain('"tool_name":"Bash"');
    expect(asked).toContain('{"ok": true}');
    const jobs = kernel!.get(SubagentManagerToken).list();
    expect(jobs.map((job) => [job.status, job.type, job.parentSessionId])).toEqual([
      ['completed', 'general-purpose', session.sessionId],
      ['completed', 'general-purpose', session.sessionId],
    ]);
  });

  it('a Stop agent hook that answers ok:false makes the session continue with its reason', async () => {
    const config = { Stop: [{ hooks: [agentHook] }] };
    let verdicts = 0;
    const { session, childRequests } = await start(config, [{ text: 'first answer' }, { text: 'second answer' }], () =>
      verdicts++ === 0 ? { text: '{"ok": false, "reason": "tests missing"}' } : { text: '{"ok": true}' },
    );
    expect(await session.run('go')).toBe('second answer');
    expect(childRequests).toHaveLength(2);
    expect(JSON.stringify(childRequests[0]!.messages)).toContain('first answer');
    expect(JSON.stringify(session.getHistory())).toContain('tests missing');
  });

  it('a subagent reply without a verdict is a non-blocking notice', async () => {
    const config = { PreToolUse: [{ hooks: [agentHook] }] };
    const { session, results } = await start(config, [{ toolCalls: [{ id: 'c1', name: 'Bash', input: { command: 'ls' } }] }, { text: 'ok' }], () => ({ text: 'I could not decide.' }));
    await session.run('go');
    expect(ran).toEqual(['ls']);
    expect(results[0]?.notices.join('\n')).toMatch(/did not answer with \{"ok": boolean\}/);
  });

  it('runAgentHook still overrides the bound launcher', async () => {
    const config = { PreToolUse: [{ hooks: [agentHook] }] };
    const { session, childRequests } = await start(config, [{ toolCalls: [{ id: 'c1', name: 'Bash', input: { command: 'ls' } }] }, { text: 'ok' }], () => ({ text: '{"ok": true}' }), true, {
      runAgentHook: async () => ({ ok: false, reason: 'override said no' }),
    });
    await session.run('go');
    expect(ran).toEqual([]);
    expect(childRequests).toHaveLength(0);
    expect(toolTexts(session.getHistory())).toEqual(['Blocked by hook: override said no']);
  });

  it('an explicit subagentLauncher option is used and gets the session cwd and id', async () => {
    const seen: Parameters<SubagentLauncher['launch']>[0][] = [];
    const launcher: SubagentLauncher = { launch: async (request) => (seen.push(request), { text: '{"ok": false, "reason": "nope"}', agentId: 'a1' }) };
    const config = { PreToolUse: [{ hooks: [{ ...agentHook, model: 'haiku-x' }] }] };
    const { session } = await start(config, [{ toolCalls: [{ id: 'c1', name: 'Bash', input: { command: 'ls' } }] }, { text: 'ok' }], () => ({ text: '' }), false, { subagentLauncher: launcher });
    await session.run('go');
    expect(ran).toEqual([]);
    expect(seen[0]).toMatchObject({ cwd: dir, parentSessionId: session.sessionId, model: 'haiku-x' });
  });

  it('without the subagents plugin the configuration error names the hook', async () => {
    const config = { Stop: [{ hooks: [agentHook] }] };
    const { session, results } = await start(config, [{ text: 'done' }], () => ({ text: '' }), false);
    await expect(session.run('go')).resolves.toBe('done');
    expect(results[0]?.notices[0]).toMatch(/settings\.json hooks\.Stop\[0\]\.hooks\[0\] is an "agent" hook, but no subagent runner is available: add the subagents plugin/);
  });
});
