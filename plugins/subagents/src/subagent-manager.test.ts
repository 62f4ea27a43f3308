import { BackgroundTaskManager, ManualBackgroundTaskRunner } from '@tessera/plugin-background';
import { describe, expect, it, vi } from 'vitest';
import { ManualSubagentRunner } from './manual-subagent-runner.js';
import { createSubagentTaskRunner, SubagentManager, toAgentTaskRequest, toSubagentSpawnRequest } from './subagent-manager.js';
import type { ISubagentSpawnRequest } from './types.js';

const request = (extra: Partial<ISubagentSpawnRequest> = {}): ISubagentSpawnRequest => ({
  type: 'Explore',
  prompt: 'find it',
  cwd: '/repo',
  parentSessionId: 'p',
  ...extra,
});

describe('SubagentManager', () => {
  it('spawns, waits, lists, closes agent jobs through the background manager', async () => {
    const runner = new ManualSubagentRunner({ transcriptPath: '/t.jsonl' });
    const manager = new SubagentManager({ runner, idFactory: (_r, n) => `agent_${n}` });
    const job = await manager.spawn(request({ label: 'Explore code', metadata: { origin: 'command' } }));
    expect(job).toMatchObject({ id: 'agent_1', type: 'Explore', label: 'Explore code', status: 'running', depth: 1, mode: 'foreground', transcriptPath: '/t.jsonl', metadata: { origin: 'command' } });
    expect(runner.job('agent_1').start.request).toMatchObject({ type: 'Explore', prompt: 'find it', cwd: '/repo', parentSessionId: 'p' });
    runner.job('agent_1').resolve({ output: 'here' });
    expect(await manager.wait('agent_1')).toMatchObject({ status: 'completed', output: 'here' });
    expect(manager.list().map((j) => j.id)).toEqual(['agent_1']);
    expect(manager.close('agent_1').status).toBe('completed');
    expect(manager.get('agent_1')).toBeUndefined();
  });

  it('cancels, sends, reads logs and rejects nested subagents (depth)', async () => {
    const runner = new ManualSubagentRunner();
    const manager = new SubagentManager({ runner, idFactory: (_r, n) => `agent_${n}` });
    await manager.spawn(request());
    runner.job('agent_1').log.push('[tool] Read');
    expect((await manager.readLog('agent_1')).lines).toEqual(['[tool] Read']);
    await expect(manager.send('agent_1', 'more')).rejects.toMatchObject({ code: 'background_send_unsupported' });
    expect((await manager.cancel('agent_1', 'user')).status).toBe('cancelled');
    expect(runner.job('agent_1').cancelCalls).toEqual(['user']);
    await expect(manager.spawn(request({ depth: 2 }))).rejects.toMatchObject({ code: 'background_invalid_depth' });
  });

  it('validates requests and configuration', async () => {
    expect(() => new SubagentManager({})).toThrow(/needs a runner/);
    const manager = new SubagentManager({ runner: new ManualSubagentRunner() });
    await expect(manager.spawn(request({ prompt: '' }))).rejects.toMatchObject({ code: 'subagent_invalid_request', details: { field: 'prompt' } });
  });

  it('shares a background manager and only sees its agent tasks', async () => {
    const processRunner = new ManualBackgroundTaskRunner({ kind: 'process' });
    const background = new BackgroundTaskManager({ runners: [createSubagentTaskRunner(new ManualSubagentRunner()), processRunner] });
    const manager = new SubagentManager({ backgroundTaskManager: background });
    expect(manager.getBackgroundTaskManager()).toBe(background);
    await background.spawn({ kind: 'process', command: 'x', cwd: '/' });
    await manager.spawn(request());
    expect(manager.list().map((j) => j.id)).toEqual(['task_2']);
    expect(manager.get('task_1')).toBeUndefined();
    await expect(manager.cancel('task_1')).rejects.toMatchObject({ code: 'subagent_not_an_agent_task' });
  });

  it('gives admit and the runner one normalised request: defaults filled in, only the listed fields, the parent session kept', async () => {
    const runner = new ManualSubagentRunner();
    const admitted: ISubagentSpawnRequest[] = [];
    const manager = new SubagentManager({ runner, idFactory: (_r, n) => `agent_${n}`, admit: (spawned) => void admitted.push(spawned) });
    const parentSession = { services: {} as never };
    const caller = { ...request({ parentSession }), unlisted: 'x' } as ISubagentSpawnRequest;
    await manager.spawn(caller);
    const started = runner.job('agent_1').start.request;
    expect(started).toEqual({ type: 'Explore', prompt: 'find it', cwd: '/repo', parentSessionId: 'p', mode: 'foreground', depth: 1, label: 'Explore', parentSession });
    expect(started.parentSession).toBe(parentSession);
    // One object for both (a scope held by `admit` is the one the runner's job finds), not the caller's.
    expect(admitted[0]).toBe(started);
    expect(started).not.toBe(caller);
  });

  it('drops the request kept for a task when the task ends, one cancelled while queued included', async () => {
    const runner = new ManualSubagentRunner();
    const manager = new SubagentManager({ runner, maxConcurrent: 1, idFactory: (_r, n) => `agent_${n}` });
    // The kept request is the value of a WeakMap entry keyed by the task: found by what is set.
    const sets = vi.spyOn(WeakMap.prototype, 'set');
    try {
      await manager.spawn(request());
      const queued = await manager.spawn(request({ prompt: 'queued' }));
      const kept = sets.mock.calls.findIndex(([, value]) => (value as ISubagentSpawnRequest | undefined)?.prompt === 'queued');
      expect(kept).toBeGreaterThanOrEqual(0);
      const map = sets.mock.contexts[kept] as WeakMap<WeakKey, unknown>;
      const task = sets.mock.calls[kept]![0];
      expect(map.has(task)).toBe(true);
      expect((await manager.cancel(queued.id, 'user')).status).toBe('cancelled');
      await vi.waitFor(() => expect(map.has(task)).toBe(false));
      expect(() => runner.job(queued.id)).toThrow(/never started/);
    } finally {
      sets.mockRestore();
    }
  });

  it('round-trips requests through the agent task shape', () => {
    const full = request({ label: 'L', mode: 'background', depth: 1, model: 'm', isolation: 'worktree', worktreePath: '/w', branchName: 'b', metadata: { a: 1 }, idleTimeoutMs: 5, maxRuntimeMs: 6 });
    expect(toSubagentSpawnRequest(toAgentTaskRequest(full))).toEqual(full);
  });
});
