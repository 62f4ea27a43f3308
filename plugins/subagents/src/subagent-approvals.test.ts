import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalHandler, SubagentLauncher, type ApprovalRequest, type Message } from '@tessera/contracts';
import { createKernel, defineTool, toolsPlugin, type Kernel } from '@tessera/kernel';
import { recordingApprovals, RecordingApprovalHandler } from '@tessera/kernel/testing';
import type { TBackgroundTaskRunnerEvent } from '@tessera/plugin-background';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SubagentApprovalRouter } from './subagent-approval-router.js';
import { SubagentManagerToken, subagents } from './subagents-plugin.js';

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
  dir = await mkdtemp(join(tmpdir(), 'tessera-subagent-approvals-'));
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

const bashTurn = { toolCalls: [{ id: 'call_1', name: 'Bash', input: { command: 'npm test' } }] };
const toolTexts = (history: readonly Message[]): string[] =>
  history.flatMap((m) => (m.role === 'tool' ? m.content.map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))) : []));

/** A kernel whose Bash calls need approval (real permissions plugin); `answer` is the parent's approver. */
async function boot(answer: (request: ApprovalRequest) => Promise<boolean | 'allow-session'>, via: 'option' | 'decorate') {
  const provider = new ScriptedProvider({ turns: [bashTurn, { text: 'child done' }] });
  const approver = new RecordingApprovalHandler(answer);
  const agents = subagents({ cwd: dir, home: dir, discover: false, worktree: false, ...(via === 'option' ? { approvalHandler: approver } : {}) });
  const preset = testPreset({
    provider,
    replace: [permissionsPlugin({ rules: { ask: ['Bash'] } })],
    plugins: [toolsPlugin(bash), via === 'decorate' ? definePluginApprover(approver) : undefined],
  });
  // Subagents come last on purpose: the decorated approver is used whatever the plugin order.
  kernel = await createKernel({ plugins: [...preset, agents] });
  const manager = kernel.get(SubagentManagerToken);
  const statuses: string[] = [];
  manager.getBackgroundTaskManager().subscribe((event) => {
    if (event.type === 'background_task_updated') statuses.push(event.task.status);
  });
  return { manager, approver, statuses, provider };
}

function definePluginApprover(approver: RecordingApprovalHandler) {
  const plugin = recordingApprovals();
  return { ...plugin, register: ({ bind }: { bind: (token: typeof ApprovalHandler) => { toConstantValue(value: ApprovalHandler): unknown } }) => void bind(ApprovalHandler).toConstantValue(approver) };
}

describe('subagent approvals move the job through waiting_permission', () => {
  for (const via of ['option', 'decorate'] as const) {
    it(`enters waiting_permission while the parent decides and returns to running (${via})`, async () => {
      let seen: string | undefined;
      let jobId = '';
      const { manager, approver, statuses } = await boot(async () => {
        seen = manager.get(jobId)?.status;
        return true;
      }, via);
      const job = await manager.spawn({ type: 'general-purpose', prompt: 'run the tests', cwd: dir, parentSessionId: 'parent' });
      jobId = job.id;
      const done = await manager.wait(job.id);
      expect(done).toMatchObject({ status: 'completed', output: 'child done', pendingPermissions: 0 });
      expect(seen).toBe('waiting_permission');
      expect(approver.requests.map((r) => [r.sessionId, r.toolName])).toEqual([[job.id, 'Bash']]);
      expect(statuses).toEqual(['waiting_permission', 'running']);
      expect(ran).toEqual(['npm test']);
    });
  }

  it('returns to running after a denial; the child sees the refusal', async () => {
    const { manager, statuses, provider } = await boot(async () => false, 'option');
    const job = await manager.spawn({ type: 'general-purpose', prompt: 'run the tests', cwd: dir, parentSessionId: 'parent' });
    expect(await manager.wait(job.id)).toMatchObject({ status: 'completed' });
    expect(statuses).toEqual(['waiting_permission', 'running']);
    expect(ran).toEqual([]);
    expect(toolTexts(provider.requests[1]!.messages as Message[]).join('\n')).toMatch(/denied|not approved/i);
  });

  it('leaves waiting_permission when the job is cancelled mid-question', async () => {
    let release: (() => void) | undefined;
    const { manager } = await boot(() => new Promise((resolve) => (release = () => resolve(true))), 'option');
    const job = await manager.spawn({ type: 'general-purpose', prompt: 'p', cwd: dir, parentSessionId: 'parent' });
    await vitestWaitFor(() => manager.get(job.id)?.status === 'waiting_permission');
    const cancelled = await manager.cancel(job.id, 'user');
    expect(cancelled.status).toBe('cancelled');
    release?.();
    expect(ran).toEqual([]);
  });
});

async function vitestWaitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

describe('SubagentApprovalRouter', () => {
  const request = (sessionId: string): ApprovalRequest => ({ toolName: 'Bash', input: {}, sessionId, toolCallId: 'c1', signal: new AbortController().signal });

  it('passes other sessions straight to the original approver and refuses without one', async () => {
    const router = new SubagentApprovalRouter();
    const inner = new RecordingApprovalHandler('allow-session');
    expect(await router.wrap(inner).requestApproval(request('main'))).toBe('allow-session');
    expect(await router.wrap(undefined).requestApproval(request('main'))).toBe(false);
    expect(inner.requests).toHaveLength(1);
  });

  it('reports request and decision for a registered child, also when the approver throws, and stops after unregister', async () => {
    const router = new SubagentApprovalRouter();
    const events: TBackgroundTaskRunnerEvent[] = [];
    const unregister = router.register('child', (event) => events.push(event));
    const failing: ApprovalHandler = { requestApproval: () => Promise.reject(new Error('ui gone')) };
    await expect(router.wrap(failing).requestApproval(request('child'))).rejects.toThrow('ui gone');
    expect(events).toMatchObject([
      { type: 'permission_request', toolName: 'Bash' },
      { type: 'permission_decision', allowed: false },
    ]);
    expect((events[0] as { requestId: string }).requestId).toBe((events[1] as { requestId: string }).requestId);
    expect(await router.wrap(new RecordingApprovalHandler(true)).requestApproval(request('child'))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'permission_decision', allowed: true });
    unregister();
    expect(router.isChildSession('child')).toBe(false);
  });
});

describe('SubagentLauncher', () => {
  it('is bound by the subagents plugin and returns the final text', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'the answer' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [subagents({ cwd: dir, home: dir, discover: false, worktree: false })] }) });
    const result = await kernel.get(SubagentLauncher).launch({ prompt: 'q', agentType: 'Explore', parentSessionId: 'p', cwd: dir, signal: new AbortController().signal });
    expect(result.text).toBe('the answer');
    expect(kernel.get(SubagentManagerToken).get(result.agentId)).toMatchObject({ status: 'completed', type: 'Explore', parentSessionId: 'p' });
  });

  it('background: returns at once with the job id; the job finishes on its own', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'later answer', delayMs: 20 }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [subagents({ cwd: dir, home: dir, discover: false, worktree: false })] }) });
    const result = await kernel.get(SubagentLauncher).launch({ prompt: 'q', parentSessionId: 'p', cwd: dir, signal: new AbortController().signal, background: true });
    expect(result.text).toMatch(/^Started general-purpose agent .+ in the background\.$/);
    const manager = kernel.get(SubagentManagerToken);
    expect(manager.get(result.agentId)).toMatchObject({ mode: 'background' });
    await expect(manager.wait(result.agentId)).resolves.toMatchObject({ status: 'completed', output: 'later answer' });
  });

  it('cancels the job when the signal aborts and reports a failed job as an error', async () => {
    const provider = new ScriptedProvider({
      turns: (request) => (JSON.stringify(request.messages).includes('please fail') ? { error: 'boom' } : { text: 'slow', delayMs: 60_000 }),
    });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [subagents({ cwd: dir, home: dir, discover: false, worktree: false })] }) });
    const launcher = kernel.get(SubagentLauncher);
    const manager = kernel.get(SubagentManagerToken);
    const controller = new AbortController();
    const pending = launcher.launch({ prompt: 'q', parentSessionId: 'p', cwd: dir, signal: controller.signal });
    await vitestWaitFor(() => manager.list().some((job) => job.status === 'running'));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(manager.list()[0]?.status).toBe('cancelled');
    await expect(launcher.launch({ prompt: 'please fail', parentSessionId: 'p', cwd: dir, signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'subagent_launch_failed',
      details: { status: 'failed' },
    });
  });

  it('refuses a launch from a subagent child session (no nested subagents) and skips Stop taps for children', async () => {
    let nested: unknown;
    const stops: string[] = [];
    const provider = new ScriptedProvider({ turns: [{ text: 'child' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [subagents({ cwd: dir, home: dir, discover: false, worktree: false })] }) });
    const launcher = kernel.get(SubagentLauncher);
    kernel.hooks.stop.tapPromise('test', async ({ session }) => void stops.push(session.sessionId));
    kernel.hooks.subagentStart.tapPromise('test', async ({ agentId }) => {
      nested = await launcher.launch({ prompt: 'again', parentSessionId: agentId, cwd: dir, signal: new AbortController().signal }).catch((error: unknown) => error);
    });
    const { text } = await launcher.launch({ prompt: 'q', parentSessionId: 'p', cwd: dir, signal: new AbortController().signal });
    expect(text).toBe('child');
    expect(nested).toMatchObject({ code: 'subagent_launch_failed', details: { reason: 'nested_subagent' } });
    expect(stops).toEqual([]);
  });
});
