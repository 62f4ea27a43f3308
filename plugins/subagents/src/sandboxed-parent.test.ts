import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPaths, serviceOverride, SubagentLauncher, type SessionServices, type Tool } from '@tessera/contracts';
import { createKernel, definePlugin, toolsPlugin, type Kernel, type KernelSessionOptions } from '@tessera/kernel';
import { AgentTaskManagerToken, BackgroundTaskManager, ManualBackgroundTaskRunner } from '@tessera/plugin-background';
import { scriptedProvider, ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SubagentManagerToken, subagents } from './subagents-plugin.js';

// A session given tools and services of its own (an InteractiveSession with a sandboxClient:
// sandboxed Bash, Read, Write, Edit and `SandboxPaths`) must not have subagents that escape it.

let dir: string;
let kernel: Kernel | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-subagents-sandbox-'));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A Write tool that records where it ran. */
function writeTool(where: string, calls: string[]): Tool {
  return { name: 'Write', description: 'writes', parameters: { type: 'object' }, execute: async () => (calls.push(where), { success: true, output: `wrote on the ${where}` }) };
}

function sandboxScope(calls: string[]): Pick<KernelSessionOptions, 'replaceTools' | 'serviceOverrides'> {
  return { replaceTools: [writeTool('sandbox', calls)], serviceOverrides: [serviceOverride(SandboxPaths, { root: '/workspace' })] };
}

const signal = new AbortController().signal;

describe('subagents of a session with its own tools and services', () => {
  it("runs the child with the parent's replaced tools and service overrides; other parents keep the kernel's", async () => {
    const calls: string[] = [];
    const provider = new ScriptedProvider({
      turns: [{ toolCalls: [{ name: 'Write', input: {} }] }, { text: 'sandboxed child' }, { toolCalls: [{ name: 'Write', input: {} }] }, { text: 'host child' }],
    });
    kernel = await createKernel({ plugins: [scriptedProvider(provider), toolsPlugin(writeTool('host', calls)), subagents({ cwd: dir, home: dir, discover: false, worktree: false })] });
    const roots: Array<string | undefined> = [];
    kernel.hooks.preToolUse.tap('watch', ({ session }) => void roots.push(session.services.getOptional(SandboxPaths)?.root));
    const parent = kernel.createSession({ sessionId: 'sandboxed-parent', cwd: dir, ...sandboxScope(calls) });
    const launcher = kernel.get(SubagentLauncher);
    expect(await launcher.launch({ prompt: 'write', parentSessionId: parent.sessionId, cwd: dir, signal })).toMatchObject({ text: 'sandboxed child' });
    expect(await launcher.launch({ prompt: 'write', parentSessionId: 'host-parent', cwd: dir, signal })).toMatchObject({ text: 'host child' });
    expect(calls).toEqual(['sandbox', 'host']);
    expect(roots).toEqual(['/workspace', undefined]);
  });

  it('keeps the parent scope for a queued background job that starts after its parent ended', async () => {
    const calls: string[] = [];
    const provider = new ScriptedProvider({ turns: [{ text: 'first', delayMs: 40 }, { toolCalls: [{ name: 'Write', input: {} }] }, { text: 'second' }] });
    kernel = await createKernel({ plugins: [scriptedProvider(provider), toolsPlugin(writeTool('host', calls)), subagents({ cwd: dir, home: dir, discover: false, worktree: false, maxConcurrent: 1 })] });
    const parent = kernel.createSession({ sessionId: 'sandboxed-parent', cwd: dir, ...sandboxScope(calls) });
    const manager = kernel.get(SubagentManagerToken);
    const first = await manager.spawn({ type: 'general-purpose', prompt: 'wait', cwd: dir, parentSessionId: 'someone-else' });
    const queued = await manager.spawn({ type: 'general-purpose', prompt: 'write', cwd: dir, parentSessionId: parent.sessionId, mode: 'background' });
    await parent.shutdown();
    expect(kernel.sessionScope(parent.sessionId)).toBeUndefined();
    expect(await manager.wait(first.id)).toMatchObject({ status: 'completed' });
    expect(await manager.wait(queued.id)).toMatchObject({ status: 'completed', output: 'second' });
    expect(calls).toEqual(['sandbox']);
  });

  it('keeps "no scope" for a queued id-only job: a sandboxed session opened later with that id does not lend it its sandbox', async () => {
    const calls: string[] = [];
    const provider = new ScriptedProvider({ turns: [{ text: 'first', delayMs: 40 }, { toolCalls: [{ name: 'Write', input: {} }] }, { text: 'host child' }] });
    kernel = await createKernel({ plugins: [scriptedProvider(provider), toolsPlugin(writeTool('host', calls)), subagents({ cwd: dir, home: dir, discover: false, worktree: false, maxConcurrent: 1 })] });
    const manager = kernel.get(SubagentManagerToken);
    const first = await manager.spawn({ type: 'general-purpose', prompt: 'wait', cwd: dir, parentSessionId: 'someone-else' });
    // Only the id (no parentSession), and no session with it has a scope at spawn.
    const queued = await manager.spawn({ type: 'general-purpose', prompt: 'write', cwd: dir, parentSessionId: 'reused', mode: 'background' });
    const later = kernel.createSession({ sessionId: 'reused', cwd: dir, ...sandboxScope(calls) });
    expect(kernel.sessionScope('reused')).toBeDefined();
    expect(await manager.wait(first.id)).toMatchObject({ status: 'completed' });
    expect(await manager.wait(queued.id)).toMatchObject({ status: 'completed', output: 'host child' });
    expect(calls).toEqual(['host']);
    await later.shutdown();
  });

  it('keeps "no scope" for a queued id-only worktree job too (its runner works on a copy of the request)', async () => {
    const calls: string[] = [];
    const provider = new ScriptedProvider({ turns: [{ text: 'first', delayMs: 40 }, { toolCalls: [{ name: 'Write', input: {} }] }, { text: 'host child' }] });
    // A worktree adapter that makes no git worktree: the job runs in the folder it names.
    const worktree = { prepare: async () => ({ worktreePath: dir, branchName: 'agent/test', baseRevision: 'abc', parentStatus: 'clean' as const }), isClean: async () => true, remove: async () => undefined };
    kernel = await createKernel({ plugins: [scriptedProvider(provider), toolsPlugin(writeTool('host', calls)), subagents({ cwd: dir, home: dir, discover: false, worktree, maxConcurrent: 1 })] });
    const manager = kernel.get(SubagentManagerToken);
    const first = await manager.spawn({ type: 'general-purpose', prompt: 'wait', cwd: dir, parentSessionId: 'someone-else' });
    const queued = await manager.spawn({ type: 'general-purpose', prompt: 'write', cwd: dir, parentSessionId: 'reused', mode: 'background', isolation: 'worktree' });
    const later = kernel.createSession({ sessionId: 'reused', cwd: dir, ...sandboxScope(calls) });
    expect(await manager.wait(first.id)).toMatchObject({ status: 'completed' });
    expect(await manager.wait(queued.id)).toMatchObject({ status: 'completed', output: 'host child' });
    expect(calls).toEqual(['host']);
    await later.shutdown();
  });

  it('finds the parent by its session, not its id: a fork or resumed copy with the same id neither takes nor gives a sandbox', async () => {
    const calls: string[] = [];
    const write = { toolCalls: [{ name: 'Write', input: {} }] };
    const provider = new ScriptedProvider({ turns: [{ text: 'first', delayMs: 40 }, write, { text: 'a' }, write, { text: 'fork' }, write, { text: 'copy' }] });
    kernel = await createKernel({ plugins: [scriptedProvider(provider), toolsPlugin(writeTool('host', calls)), subagents({ cwd: dir, home: dir, discover: false, worktree: false, maxConcurrent: 1 })] });
    const manager = kernel.get(SubagentManagerToken);
    // Holds the one slot, so the jobs below queue and start in order.
    const first = await manager.spawn({ type: 'general-purpose', prompt: 'wait', cwd: dir, parentSessionId: 'someone-else' });
    const original = kernel.createSession({ sessionId: 'shared', cwd: dir, replaceTools: [writeTool('first sandbox', calls)] });
    const launch = (session: { services: SessionServices }) =>
      session.services.get(SubagentLauncher).launch({ prompt: 'write', parentSessionId: 'shared', cwd: dir, signal, background: true });
    const queued = await launch(original);
    await original.shutdown();
    // A fork in a sandbox of its own, then a resumed copy on the host, both with the same id.
    const fork = kernel.createSession({ sessionId: 'shared', cwd: dir, replaceTools: [writeTool('second sandbox', calls)] });
    const forked = await launch(fork);
    const copy = kernel.createSession({ sessionId: 'shared', cwd: dir });
    const copied = await launch(copy);
    for (const job of [first.id, queued.agentId, forked.agentId, copied.agentId]) expect(await manager.wait(job)).toMatchObject({ status: 'completed' });
    expect(calls).toEqual(['first sandbox', 'second sandbox', 'host']);
    expect(kernel.sessionScope(copy)).toBeUndefined();
    expect(kernel.sessionScope(fork)?.replaceTools).toHaveLength(1);
  });

  it('takes away from the child the tools its parent removed (a call to one is an unknown tool)', async () => {
    const calls: string[] = [];
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'Write', input: {} }] }, { text: 'no Write here' }] });
    kernel = await createKernel({ plugins: [scriptedProvider(provider), toolsPlugin(writeTool('host', calls)), subagents({ cwd: dir, home: dir, discover: false, worktree: false })] });
    const parent = kernel.createSession({ sessionId: 'parent', cwd: dir, removeTools: ['Write'] });
    expect(await parent.services.get(SubagentLauncher).launch({ prompt: 'write', parentSessionId: parent.sessionId, cwd: dir, signal })).toMatchObject({ text: 'no Write here' });
    expect(calls).toEqual([]);
    expect(provider.requests[0]?.tools.map((tool) => tool.name)).not.toContain('Write');
    expect(JSON.stringify(provider.requests[1]?.messages.at(-1))).toContain('Tool \\"Write\\" is not available');
  });

  it('refuses to send such a job to remote workers (AgentTaskManagerToken) or into a worktree, saying why', async () => {
    const runner = new ManualBackgroundTaskRunner({ kind: 'agent' });
    const remote = new BackgroundTaskManager({ runners: [runner] });
    const workers = definePlugin({ name: 'fake-workers', provides: [AgentTaskManagerToken], register: ({ bind }) => void bind(AgentTaskManagerToken).toConstantValue(remote) });
    kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), workers, subagents({ cwd: dir, home: dir, discover: false, worktree: false })] });
    const parent = kernel.createSession({ sessionId: 'sandboxed-parent', cwd: dir, ...sandboxScope([]) });
    const launcher = kernel.get(SubagentLauncher);
    await expect(launcher.launch({ prompt: 'go', parentSessionId: parent.sessionId, cwd: dir, signal, background: true })).rejects.toMatchObject({
      code: 'subagent_sandbox_unsupported',
      message: expect.stringContaining("outside that sandbox"),
    });
    expect(runner.runs).toEqual([]);
    // A session without a scope of its own still goes to the workers.
    await launcher.launch({ prompt: 'go', parentSessionId: 'host-parent', cwd: dir, signal, background: true });
    expect(runner.runs).toHaveLength(1);
    await remote.shutdown('test');
    await kernel.shutdown();

    kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), subagents({ cwd: dir, home: dir, discover: false })] });
    const isolated = kernel.createSession({ sessionId: 'sandboxed-parent', cwd: dir, ...sandboxScope([]) });
    await expect(kernel.get(SubagentManagerToken).spawn({ type: 'general-purpose', prompt: 'go', cwd: dir, parentSessionId: isolated.sessionId, isolation: 'worktree' })).rejects.toMatchObject({
      code: 'subagent_sandbox_unsupported',
      message: expect.stringContaining('worktree'),
    });
  });
});
