import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@tessera/contracts';
import { createKernel, toolsPlugin } from '@tessera/kernel';
import { scriptedProvider, ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentDefinitions, SubagentManagerToken, subagents } from './subagents-plugin.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-subagents-plugin-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tool = (name: string): Tool => ({ name, description: name, parameters: { type: 'object' }, execute: async () => ({ success: true, output: '' }) });

describe('subagents plugin', () => {
  it('discovers agents at boot and runs jobs on the kernel provider, tools and hooks', async () => {
    await mkdir(join(dir, '.claude', 'agents'), { recursive: true });
    await writeFile(join(dir, '.claude', 'agents', 'grepper.md'), '---\nname: grepper\ndescription: greps\ntools: Grep\n---\nOnly grep.\n');
    const provider = new ScriptedProvider({ turns: [{ text: 'grepped' }] });
    const kernel = await createKernel({
      plugins: [scriptedProvider(provider), toolsPlugin(tool('Grep'), tool('Write'), tool('Agent')), subagents({ cwd: dir, home: join(dir, 'home'), logsDir: join(dir, 'logs'), worktree: false })],
    });
    const starts: string[] = [];
    kernel.hooks.subagentStart.tap('t', ({ agentType }) => void starts.push(agentType));
    expect(kernel.get(AgentDefinitions).get('grepper')?.tools).toEqual(['Grep']);
    const manager = kernel.get(SubagentManagerToken);
    const job = await manager.spawn({ type: 'grepper', prompt: 'go', cwd: dir, parentSessionId: 'parent' });
    expect(await manager.wait(job.id)).toMatchObject({ status: 'completed', output: 'grepped' });
    expect(provider.requests[0]!.system).toBe('Only grep.');
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(['Grep']);
    expect(starts).toEqual(['grepper']);
    await kernel.shutdown();
  });

  it('cancels open jobs on kernel shutdown and refuses worktree jobs outside git with the actionable error', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'slow', delayMs: 10_000 }] });
    const kernel = await createKernel({ plugins: [scriptedProvider(provider), subagents({ cwd: dir, home: dir })] });
    const manager = kernel.get(SubagentManagerToken);
    const isolated = await manager.spawn({ type: 'Plan', prompt: 'p', cwd: dir, parentSessionId: 'parent', isolation: 'worktree' });
    expect(await manager.wait(isolated.id)).toMatchObject({ status: 'failed', error: { code: 'worktree_not_a_git_repository' } });
    const job = await manager.spawn({ type: 'Plan', prompt: 'p', cwd: dir, parentSessionId: 'parent' });
    await kernel.shutdown();
    expect(manager.get(job.id)?.status).toBe('cancelled');
  });
});

describe('subagents plugin values', () => {
  it('give each kernel its own registry and manager when composed twice in a row; contributed definitions join the registry', async () => {
    const { AgentDefinitionContribution } = await import('@tessera/contracts');
    const { definePlugin } = await import('@tessera/kernel');
    const plugin = subagents({ cwd: dir, home: dir, worktree: false });
    const contributed = definePlugin({
      name: 'bundle-agents',
      contributes: [AgentDefinitionContribution],
      register: ({ bind }) => void bind(AgentDefinitionContribution).toConstantValue({ name: 'bundled', description: 'from a bundle', systemPrompt: 'x', source: 'plugin:bundle' }),
    });
    const first = await createKernel({ plugins: [scriptedProvider({ turns: [] }), plugin, contributed] });
    const firstRegistry = first.get(AgentDefinitions);
    const firstManager = first.get(SubagentManagerToken);
    expect(firstRegistry.get('bundled')?.source).toBe('plugin:bundle');
    await first.shutdown();
    const second = await createKernel({ plugins: [scriptedProvider({ turns: [] }), plugin] });
    expect(second.get(AgentDefinitions)).not.toBe(firstRegistry);
    expect(second.get(SubagentManagerToken)).not.toBe(firstManager);
    expect(second.get(AgentDefinitions).get('bundled')).toBeUndefined();
    await second.shutdown();
  });
});
