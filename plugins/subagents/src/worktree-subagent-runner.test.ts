import { createHooks } from '@tessera/kernel';
import { describe, expect, it } from 'vitest';
import { ManualSubagentRunner } from './manual-subagent-runner.js';
import { SubagentManager } from './subagent-manager.js';
import type { ISubagentJobStart } from './types.js';
import { createWorktreeSubagentRunner, type IPreparedSubagentWorktree, type ISubagentWorktreeAdapter } from './worktree-subagent-runner.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

class FakeWorktreeAdapter implements ISubagentWorktreeAdapter {
  calls: string[] = [];
  clean = true;
  async = false;
  prepareError: unknown;
  private release: (() => void) | undefined;
  gate: Promise<void> | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }
  open(): void {
    this.release?.();
  }

  prepare({ jobId, cwd }: { jobId: string; cwd: string }) {
    this.calls.push(`prepare ${jobId} ${cwd}`);
    if (this.prepareError) throw this.prepareError;
    const worktree: IPreparedSubagentWorktree = { worktreePath: `/wt/${jobId}`, branchName: `b/${jobId}`, baseRevision: 'abc123', parentStatus: 'clean' };
    if (!this.async) return worktree;
    return (this.gate ?? Promise.resolve()).then(() => worktree);
  }
  isClean() {
    this.calls.push('isClean');
    return this.clean;
  }
  getStatus() {
    return 'dirty: 1 uncommitted change(s), 0 new commit(s)';
  }
  remove(worktree: IPreparedSubagentWorktree) {
    this.calls.push(`remove ${worktree.worktreePath}`);
  }
}

function setup() {
  const inner = new ManualSubagentRunner({ logPath: '/log', transcriptPath: '/t.jsonl' });
  const adapter = new FakeWorktreeAdapter();
  const hooks = createHooks();
  hooks.worktreeCreate.tap('test', ({ path, branch }) => void adapter.calls.push(`hook create ${path} ${branch}`));
  hooks.worktreeRemove.tap('test', ({ path }) => void adapter.calls.push(`hook remove ${path}`));
  const origStart = inner.start.bind(inner);
  inner.start = (job: ISubagentJobStart) => {
    adapter.calls.push(`inner start ${job.request.cwd}`);
    return origStart(job);
  };
  const runner = createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: adapter, hooks });
  return { inner, adapter, runner };
}

const job = (isolation?: 'worktree'): ISubagentJobStart => ({
  jobId: 'agent_1',
  request: { type: 'general-purpose', prompt: 'p', cwd: '/repo', parentSessionId: 's', ...(isolation ? { isolation } : {}) },
});

describe('WorktreeSubagentRunner', () => {
  it('passes non-worktree requests through unchanged', () => {
    const { inner, adapter, runner } = setup();
    const start = job();
    const handle = runner.start(start);
    expect(inner.jobs[0]?.start).toBe(start);
    expect(handle).toBe(inner.jobs[0]?.handle);
    expect(adapter.calls).toEqual(['inner start /repo']);
  });

  it('prepares, fires worktreeCreate, runs inside, removes a clean worktree once and fires worktreeRemove', async () => {
    const { inner, adapter, runner } = setup();
    const handle = runner.start(job('worktree'));
    expect(inner.jobs[0]?.start.request).toMatchObject({ cwd: '/wt/agent_1', worktreePath: '/wt/agent_1', branchName: 'b/agent_1', isolation: 'worktree' });
    expect(handle).toMatchObject({ logPath: '/log', transcriptPath: '/t.jsonl' });
    inner.jobs[0]!.log.push('line');
    expect((await handle.readLog!()).lines).toEqual(['line']);
    inner.jobs[0]!.resolve({ output: 'done', metadata: { keep: 'me' } });
    expect(await handle.result).toEqual({ output: 'done', metadata: { keep: 'me', worktreeRemoved: true } });
    expect(adapter.calls).toEqual([
      'prepare agent_1 /repo',
      'hook create /wt/agent_1 b/agent_1',
      'inner start /wt/agent_1',
      'isClean',
      'remove /wt/agent_1',
      'hook remove /wt/agent_1',
    ]);
  });

  it('keeps a dirty worktree and hands it over in the metadata', async () => {
    const { inner, adapter, runner } = setup();
    adapter.clean = false;
    const handle = runner.start(job('worktree'));
    inner.jobs[0]!.resolve({ output: 'done', metadata: { keep: 'me' } });
    const { metadata } = await handle.result;
    expect(metadata).toMatchObject({
      keep: 'me',
      worktreeRemoved: false,
      worktreePath: '/wt/agent_1',
      branchName: 'b/agent_1',
      worktreeStatus: 'dirty: 1 uncommitted change(s), 0 new commit(s)',
      worktreeBaseRevision: 'abc123',
      parentWorktreeStatus: 'clean',
    });
    expect(String(metadata?.worktreeNextAction)).toContain('merge the branch');
    expect(adapter.calls.filter((c) => c.startsWith('remove'))).toEqual([]);
  });

  it('removes a clean worktree once when the job fails', async () => {
    const { inner, adapter, runner } = setup();
    const handle = runner.start(job('worktree'));
    inner.jobs[0]!.reject(new Error('model broke'));
    await expect(handle.result).rejects.toMatchObject({ message: 'model broke', details: { worktreeRemoved: true } });
    expect(adapter.calls.filter((c) => c.startsWith('remove'))).toHaveLength(1);
  });

  it('removes a clean worktree once when the inner start throws synchronously', async () => {
    const inner = new ManualSubagentRunner({ startError: new Error('no provider') });
    const adapter = new FakeWorktreeAdapter();
    const handle = createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: adapter }).start(job('worktree'));
    await expect(handle.result).rejects.toThrow('no provider');
    expect(adapter.calls).toEqual(['prepare agent_1 /repo', 'isClean', 'remove /wt/agent_1']);
  });

  it('removes a clean worktree once on cancel, even when the cancelled result also settles', async () => {
    const { inner, adapter, runner } = setup();
    const handle = runner.start(job('worktree'));
    await Promise.all([handle.cancel('stop'), handle.cancel('again')]);
    await expect(handle.result).rejects.toBeDefined();
    await flush();
    expect(inner.jobs[0]?.cancelCalls).toEqual(['stop', 'again']);
    expect(adapter.calls.filter((c) => c.startsWith('remove'))).toHaveLength(1);
  });

  it('keeps the worktree when the inner cancel fails', async () => {
    const inner = new ManualSubagentRunner({ onCancel: () => Promise.reject(new Error('still running')) });
    const adapter = new FakeWorktreeAdapter();
    const handle = createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: adapter }).start(job('worktree'));
    await expect(handle.cancel()).rejects.toThrow('still running');
    expect(adapter.calls.filter((c) => c.startsWith('remove'))).toHaveLength(0);
  });

  it('with an asynchronous adapter: cancel during prepare never starts the job and removes the worktree', async () => {
    const { inner, adapter, runner } = setup();
    adapter.async = true;
    adapter.hold();
    const handle = runner.start(job('worktree'));
    expect(handle.logPath).toBeUndefined();
    const cancelled = handle.cancel('early');
    adapter.open();
    await cancelled;
    await expect(handle.result).rejects.toMatchObject({ code: 'subagent_cancelled' });
    expect(inner.jobs).toHaveLength(0);
    expect(adapter.calls.filter((c) => c.startsWith('remove'))).toHaveLength(1);
  });

  it('with an asynchronous adapter: paths appear once prepared and reach the task state', async () => {
    const { inner, adapter, runner } = setup();
    adapter.async = true;
    const manager = new SubagentManager({ runner });
    const spawned = await manager.spawn({ ...job('worktree').request });
    expect(spawned.transcriptPath).toBeUndefined();
    await flush();
    inner.jobs[0]!.resolve({ output: 'ok' });
    expect(await manager.wait(spawned.id)).toMatchObject({ status: 'completed', transcriptPath: '/t.jsonl', logPath: '/log' });
  });

  it('fails without removing anything when prepare fails', async () => {
    const { adapter, runner } = setup();
    adapter.prepareError = new Error('not a git repository');
    await expect(runner.start(job('worktree')).result).rejects.toThrow('not a git repository');
    expect(adapter.calls).toEqual(['prepare agent_1 /repo']);
  });

  it('projects a dirty worktree of a failed job onto the task state', async () => {
    const { inner, adapter, runner } = setup();
    adapter.clean = false;
    const manager = new SubagentManager({ runner });
    const spawned = await manager.spawn({ ...job('worktree').request });
    inner.jobs[0]!.reject(new Error('boom'));
    expect(await manager.wait(spawned.id)).toMatchObject({ status: 'failed', worktreePath: `/wt/${spawned.id}`, worktreeBaseRevision: 'abc123', parentWorktreeStatus: 'clean' });
  });

  it('reports a failing hook without failing the job', async () => {
    const inner = new ManualSubagentRunner();
    const adapter = new FakeWorktreeAdapter();
    const hooks = createHooks();
    hooks.worktreeCreate.tap('bad', () => {
      throw new Error('hook broke');
    });
    const hookErrors: string[] = [];
    const handle = createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: adapter, hooks, onHookError: (_e, hook) => hookErrors.push(hook) }).start(job('worktree'));
    inner.jobs[0]!.resolve({ output: 'ok' });
    expect((await handle.result).output).toBe('ok');
    expect(hookErrors).toEqual(['worktreeCreate']);
  });
});
