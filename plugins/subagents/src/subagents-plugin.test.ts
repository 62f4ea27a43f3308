import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Diagnostics, Provider, SubagentLauncher, ToolContribution, type DiagnosticReport, type SessionServices, type Tool } from '@tessera/contracts';
import { FORK_WORKER_PROMPT_SUFFIX, SUBAGENT_PROMPT_SUFFIX } from '@tessera/formats';
import { createKernel, definePlugin, toolsPlugin } from '@tessera/kernel';
import { AgentTaskManagerToken, BackgroundTaskManager, ManualBackgroundTaskRunner } from '@tessera/plugin-background';
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
    // The agent body, then the framework suffix (no context files here).
    expect(provider.requests[0]!.system).toBe(`Only grep.\n\n${SUBAGENT_PROMPT_SUFFIX}`);
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(['Grep']);
    expect(starts).toEqual(['grepper']);
    await kernel.shutdown();
  });

  it("builds a subagent's system prompt from its body, the parent's CLAUDE.md and AGENTS.md, and the framework suffix; a forked skill's run gets the fork worker suffix and only its allowed tools", async () => {
    await writeFile(join(dir, 'CLAUDE.md'), 'Use tabs.\n');
    await writeFile(join(dir, 'AGENTS.md'), 'Run npm test before finishing.\n');
    const provider = new ScriptedProvider({ turns: [{ text: 'one' }, { text: 'two' }] });
    const kernel = await createKernel({
      plugins: [scriptedProvider(provider), toolsPlugin(tool('Grep'), tool('Read'), tool('Write')), subagents({ cwd: dir, home: join(dir, 'home'), worktree: false })],
    });
    const launcher = kernel.get(SubagentLauncher);
    const signal = new AbortController().signal;
    await launcher.launch({ prompt: 'look', agentType: 'Explore', parentSessionId: 'parent', cwd: dir, signal });
    const explore = kernel.get(AgentDefinitions).get('Explore')!.systemPrompt.trim();
    expect(provider.requests[0]!.system).toBe(`${explore}\n\n## CLAUDE.md\n\nUse tabs.\n\n## AGENTS.md\n\nRun npm test before finishing.\n\n${SUBAGENT_PROMPT_SUFFIX}`);
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(['Grep', 'Read']);
    // A forked skill (context: fork, allowed-tools: Read) as the skills plugin launches it.
    await launcher.launch({ prompt: 'skill body', parentSessionId: 'parent', cwd: dir, signal, allowedTools: ['Read'], forkWorker: true });
    expect(provider.requests[1]!.system!.endsWith(FORK_WORKER_PROMPT_SUFFIX)).toBe(true);
    expect(provider.requests[1]!.system).not.toContain(SUBAGENT_PROMPT_SUFFIX);
    expect(provider.requests[1]!.tools.map((t) => t.name)).toEqual(['Read']);
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

/** A plugin binding `Diagnostics` to a reporter that keeps what it is told. */
function recordingDiagnostics(): { reports: DiagnosticReport[]; plugin: ReturnType<typeof definePlugin> } {
  const reports: DiagnosticReport[] = [];
  return {
    reports,
    plugin: definePlugin({ name: 'recording-diagnostics', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void reports.push(report) }) }),
  };
}

describe('subagents plugin values and the services they use', () => {
  it('one subagents() value in kernel A, then (A shut down) in kernel B: a job runs in each, on its own kernel', async () => {
    const plugin = subagents({ cwd: dir, home: dir, discover: false, worktree: false });
    const firstProvider = new ScriptedProvider({ turns: [{ text: 'from A' }] });
    const first = await createKernel({ plugins: [scriptedProvider(firstProvider), plugin] });
    const firstManager = first.get(SubagentManagerToken);
    const a = await firstManager.spawn({ type: 'Explore', prompt: 'go', cwd: dir, parentSessionId: 'p' });
    expect(await firstManager.wait(a.id)).toMatchObject({ status: 'completed', output: 'from A' });
    await first.shutdown();
    await expect(firstManager.spawn({ type: 'Explore', prompt: 'go', cwd: dir, parentSessionId: 'p' })).rejects.toMatchObject({ code: 'background_manager_shut_down' });

    const secondProvider = new ScriptedProvider({ turns: [{ text: 'from B' }] });
    const second = await createKernel({ plugins: [scriptedProvider(secondProvider), plugin] });
    try {
      const manager = second.get(SubagentManagerToken);
      expect(manager).not.toBe(firstManager);
      const b = await manager.spawn({ type: 'Explore', prompt: 'go', cwd: dir, parentSessionId: 'p' });
      expect(await manager.wait(b.id)).toMatchObject({ status: 'completed', output: 'from B' });
      expect(firstProvider.requests).toHaveLength(1);
      expect(secondProvider.requests).toHaveLength(1);
    } finally {
      await second.shutdown();
    }
  });

  it('looks the Provider and tools up when a job starts: a rebind after the manager was built reaches later jobs', async () => {
    const before = new ScriptedProvider({ turns: [{ text: 'before' }] });
    const kernel = await createKernel({ plugins: [scriptedProvider(before), toolsPlugin(tool('Grep')), subagents({ cwd: dir, home: dir, discover: false, worktree: false })] });
    try {
      const manager = kernel.get(SubagentManagerToken);
      const first = await manager.spawn({ type: 'Explore', prompt: 'go', cwd: dir, parentSessionId: 'p' });
      expect(await manager.wait(first.id)).toMatchObject({ output: 'before' });
      expect(before.requests[0]!.tools.map((t) => t.name)).toEqual(['Grep']);

      const after = new ScriptedProvider({ turns: [{ text: 'after' }] });
      (await kernel.rebind(Provider)).toConstantValue(after);
      kernel.container.bind(ToolContribution).toConstantValue(tool('Glob'));
      const second = await manager.spawn({ type: 'Explore', prompt: 'go', cwd: dir, parentSessionId: 'p' });
      expect(await manager.wait(second.id)).toMatchObject({ output: 'after' });
      expect(after.requests[0]!.tools.map((t) => t.name)).toEqual(['Grep', 'Glob']);
      expect(before.requests).toHaveLength(1);
    } finally {
      await kernel.shutdown();
    }
  });

  it("gives each job's child session services of its own (hook taps see context.session.services)", async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'done' }] });
    const kernel = await createKernel({ plugins: [scriptedProvider(provider), subagents({ cwd: dir, home: dir, discover: false, worktree: false })] });
    const seen = new Map<string, SessionServices>();
    kernel.hooks.sessionStart.tap('test', ({ session }) => void seen.set(session.sessionId, session.services));
    try {
      const manager = kernel.get(SubagentManagerToken);
      const job = await manager.spawn({ type: 'Explore', prompt: 'go', cwd: dir, parentSessionId: 'p' });
      await manager.wait(job.id);
      expect(seen.get(job.id)?.getOptional(Provider)).toBe(provider);
      expect(seen.get(job.id)?.get(AgentDefinitions)).toBe(kernel.get(AgentDefinitions));
    } finally {
      await kernel.shutdown();
    }
  });

  it("reports skipped agent files to the kernel's Diagnostics (code TESSERA_AGENT_DEFINITION)", async () => {
    const broken = join(dir, '.claude', 'agents', 'broken.md');
    await mkdir(join(dir, '.claude', 'agents'), { recursive: true });
    await writeFile(broken, '---\ndescription: no name\n---\nbody');
    const { reports, plugin } = recordingDiagnostics();
    const kernel = await createKernel({ plugins: [plugin, scriptedProvider({ turns: [] }), subagents({ cwd: dir, home: join(dir, 'home'), worktree: false })] });
    await kernel.shutdown();
    expect(reports).toEqual([expect.objectContaining({ severity: 'warning', code: 'TESSERA_AGENT_DEFINITION', source: 'subagents', file: broken })]);
    expect(reports[0]?.message).toMatch(/^Agent definition skipped: /);
  });

  it("reports a failing worktree hook to the kernel's Diagnostics (code TESSERA_WORKTREE_HOOK)", async () => {
    const { reports, plugin } = recordingDiagnostics();
    const worktree = {
      prepare: ({ jobId }: { jobId: string }) => ({ worktreePath: join(dir, jobId), branchName: `b/${jobId}` }),
      isClean: () => true,
      remove: () => undefined,
    };
    const provider = new ScriptedProvider({ turns: [{ text: 'isolated' }] });
    const kernel = await createKernel({ plugins: [plugin, scriptedProvider(provider), subagents({ cwd: dir, home: dir, discover: false, worktree })] });
    kernel.hooks.worktreeCreate.tapPromise('failing', async () => {
      throw new Error('hook exploded');
    });
    try {
      const manager = kernel.get(SubagentManagerToken);
      const job = await manager.spawn({ type: 'Explore', prompt: 'go', cwd: dir, parentSessionId: 'p', isolation: 'worktree' });
      expect(await manager.wait(job.id)).toMatchObject({ status: 'completed', output: 'isolated' });
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(reports).toEqual([expect.objectContaining({ severity: 'warning', code: 'TESSERA_WORKTREE_HOOK', source: 'subagents' })]);
      expect(reports[0]?.message).toContain('hook exploded');
    } finally {
      await kernel.shutdown();
    }
  });

  it("builds the manager on a session's first launch, not when the kernel or a session is created", async () => {
    // Building the manager looks up AgentTaskManagerToken: its resolutions count the builds.
    const runner = new ManualBackgroundTaskRunner({ kind: 'agent' });
    const remote = new BackgroundTaskManager({ runners: [runner] });
    let builds = 0;
    let fail = false;
    const workers = definePlugin({
      name: 'counted-workers',
      provides: [AgentTaskManagerToken],
      register: ({ bind }) =>
        void bind(AgentTaskManagerToken).toDynamicValue(() => {
          builds += 1;
          if (fail) throw new Error('workers unavailable');
          return remote;
        }),
    });
    const signal = new AbortController().signal;
    let kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), workers, subagents({ cwd: dir, home: dir, discover: false, worktree: false })] });
    try {
      const session = kernel.createSession({ sessionId: 'parent', cwd: dir });
      const launcher = session.services.get(SubagentLauncher);
      expect(builds).toBe(0);
      await launcher.launch({ prompt: 'go', parentSessionId: 'parent', cwd: dir, signal, background: true });
      expect(builds).toBe(1);
      expect(runner.runs).toHaveLength(1);
    } finally {
      await remote.shutdown('test');
      await kernel.shutdown();
    }
    // A manager that cannot be built fails the launch, not the session.
    fail = true;
    kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), workers, subagents({ cwd: dir, home: dir, discover: false, worktree: false })] });
    try {
      const session = kernel.createSession({ sessionId: 'parent', cwd: dir });
      await expect(session.services.get(SubagentLauncher).launch({ prompt: 'go', parentSessionId: 'parent', cwd: dir, signal })).rejects.toThrow(/workers unavailable/);
    } finally {
      await kernel.shutdown();
    }
  });

  it('checks its options in the factory', () => {
    expect(() => subagents({ maxConcurrent: 0 })).toThrow(expect.objectContaining({ code: 'invalid_plugin_options', message: expect.stringContaining('maxConcurrent') }));
    expect(() => subagents({ worktree: {} as never })).toThrow(/worktree/);
    expect(() => subagents({ worktree: false, definitions: [] })).not.toThrow();
  });
});
