import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackgroundTasks, Diagnostics, type DiagnosticReport } from '@tessera/contracts';
import { createKernel, definePlugin } from '@tessera/kernel';
import { FakeClock, fakeClock } from '@tessera/kernel/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backgroundRuntime, BackgroundTaskManagerToken } from './background-runtime.js';
import { liveGroupMembers } from './managed-shell-process-runner.js';
import { ManualBackgroundTaskRunner } from './manual-background-task-runner.js';

/** Members of a killed group once the kernel has reaped them (a busy machine takes a moment). */
async function membersAfterKill(pgid: number): Promise<number> {
  for (let attempt = 0; attempt < 100 && liveGroupMembers(pgid) > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return liveGroupMembers(pgid);
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-bg-plugin-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(process.platform !== 'win32')('backgroundRuntime plugin', () => {
  it('binds BackgroundTasks for Bash run_in_background and cancels everything on kernel shutdown', async () => {
    const kernel = await createKernel({ plugins: [backgroundRuntime({ shell: { logDir: dir, killGraceMs: 200 } })] });
    const tasks = kernel.get(BackgroundTasks);
    const ticket = await tasks.spawn({ kind: 'process', command: 'echo started; sleep 30', cwd: dir, description: 'dev server', sessionId: 's1' });
    expect(ticket).toEqual({ id: 'task_1', logPath: join(dir, 'task_1.log') });
    const manager = kernel.get(BackgroundTaskManagerToken);
    const state = manager.get('task_1')!;
    expect(state).toMatchObject({ status: 'running', kind: 'process', label: 'dev server', parentSessionId: 's1', mode: 'background' });
    await kernel.shutdown();
    expect(manager.get('task_1')?.status).toBe('cancelled');
    expect(await membersAfterKill(state.pid!)).toBe(0);
    await expect(manager.spawn({ kind: 'process', command: 'true', cwd: dir })).rejects.toMatchObject({ code: 'background_manager_shut_down' });
  });

  it('gives each kernel its own manager when one plugin value is composed twice in a row (no shut-down manager handed on)', async () => {
    const plugin = backgroundRuntime({ shell: { logDir: dir, killGraceMs: 200 } });
    const first = await createKernel({ plugins: [plugin] });
    const firstManager = first.get(BackgroundTaskManagerToken);
    await first.get(BackgroundTasks).spawn({ kind: 'process', command: 'true', cwd: dir, sessionId: 's1' });
    await first.shutdown();
    const second = await createKernel({ plugins: [plugin] });
    try {
      expect(second.get(BackgroundTaskManagerToken)).not.toBe(firstManager);
      const ticket = await second.get(BackgroundTasks).spawn({ kind: 'process', command: 'echo again', cwd: dir, sessionId: 's2' });
      const finished = await second.get(BackgroundTaskManagerToken).wait(ticket.id);
      expect(finished.status).toBe('completed');
      expect((await second.get(BackgroundTasks).readOutput!(ticket.id, 0, 's2')).lines).toContain('[stdout] again');
    } finally {
      await second.shutdown();
    }
  });

  it('reads a task\'s output from a line on, with its status, and stops it — only for the session that started it', async () => {
    const kernel = await createKernel({ plugins: [backgroundRuntime({ shell: { logDir: dir, killGraceMs: 200 } })] });
    try {
      const tasks = kernel.get(BackgroundTasks);
      const done = await tasks.spawn({ kind: 'process', command: 'echo one; echo two >&2; exit 3', cwd: dir, sessionId: 's1' });
      await kernel.get(BackgroundTaskManagerToken).wait(done.id);
      const first = await tasks.readOutput!(done.id, 0, 's1');
      expect(first).toMatchObject({ status: 'failed', exitCode: 3, dropped: false });
      expect(first.lines).toEqual(expect.arrayContaining(['[stdout] one', '[stderr] two', '[exit] exit code 3']));
      const again = await tasks.readOutput!(done.id, first.nextLine, 's1');
      expect(again.lines).toEqual([]);
      await expect(tasks.readOutput!(done.id, 0, 'other-session')).rejects.toMatchObject({ code: 'background_task_not_found' });
      await expect(tasks.readOutput!('task_99', 0)).rejects.toMatchObject({ code: 'background_task_not_found' });

      // Long output: one read stops at 5,000 lines and says more is waiting.
      const long = await tasks.spawn({ kind: 'process', command: 'seq 1 12000; echo FINAL', cwd: dir, sessionId: 's1' });
      await kernel.get(BackgroundTaskManagerToken).wait(long.id);
      const part = await tasks.readOutput!(long.id, 0, 's1');
      expect(part.more).toBe(true);
      let all = [...part.lines];
      for (let next = part; next.more; ) {
        next = await tasks.readOutput!(long.id, next.nextLine, 's1');
        all = all.concat(next.lines);
      }
      expect(all).toContain('[stdout] FINAL');
      // A task started outside any session is no session's to read.
      const loose = await tasks.spawn({ kind: 'process', command: 'echo loose', cwd: dir });
      await expect(tasks.readOutput!(loose.id, 0, 's1')).rejects.toMatchObject({ code: 'background_task_not_found' });

      const server = await tasks.spawn({ kind: 'process', command: 'echo up; sleep 30', cwd: dir, sessionId: 's1' });
      await expect(tasks.stop!(server.id, 'other-session')).rejects.toMatchObject({ code: 'background_task_not_found' });
      expect(await tasks.stop!(server.id, 's1')).toBe('cancelled');
      const pid = kernel.get(BackgroundTaskManagerToken).get(server.id)!.pid!;
      expect(await membersAfterKill(pid)).toBe(0);
    } finally {
      await kernel.shutdown();
    }
  });

  it('uses the kernel Clock for watchdogs and accepts extra runners', async () => {
    const clock = new FakeClock();
    const agents = new ManualBackgroundTaskRunner({ kind: 'agent' });
    const kernel = await createKernel({ plugins: [fakeClock(clock), backgroundRuntime({ runners: [agents], watchdog: { idleTimeoutMs: 100 } })] });
    const manager = kernel.get(BackgroundTaskManagerToken);
    await manager.spawn({ kind: 'agent', agentType: 'general-purpose', prompt: 'p', cwd: dir });
    clock.advance(100);
    expect(manager.get('task_1')).toMatchObject({ status: 'failed', timeoutReason: 'idle' });
    await kernel.shutdown();
  });

  it('gives kernels composed side by side from one plugin value a manager each; shutting one down leaves the other running', async () => {
    const plugin = backgroundRuntime({ shell: { logDir: dir, killGraceMs: 200 } });
    const [a, b] = await Promise.all([createKernel({ plugins: [plugin] }), createKernel({ plugins: [plugin] })]);
    try {
      expect(a.get(BackgroundTaskManagerToken)).not.toBe(b.get(BackgroundTaskManagerToken));
      await a.shutdown();
      const ticket = await b.get(BackgroundTasks).spawn({ kind: 'process', command: 'true', cwd: dir });
      expect((await b.get(BackgroundTaskManagerToken).wait(ticket.id)).status).toBe('completed');
    } finally {
      await a.shutdown();
      await b.shutdown();
    }
  });

  it("reports a throwing event listener to the kernel's Diagnostics, looked up when reported (a rebind after createKernel is told)", async () => {
    const first: DiagnosticReport[] = [];
    const second: DiagnosticReport[] = [];
    const recording = definePlugin({
      name: 'recording-diagnostics',
      provides: [Diagnostics],
      register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => void first.push(report) }),
    });
    const kernel = await createKernel({ plugins: [recording, backgroundRuntime({ runners: [new ManualBackgroundTaskRunner({ kind: 'process', autoResolve: true })] })] });
    try {
      const manager = kernel.get(BackgroundTaskManagerToken);
      manager.subscribe(() => {
        throw new Error('listener broke');
      });
      await manager.wait((await manager.spawn({ kind: 'process', command: 'noop', cwd: dir })).id);
      expect(first[0]).toMatchObject({ severity: 'warning', code: 'TESSERA_BACKGROUND_TASK', source: 'background' });
      expect(first[0]?.message).toContain('listener broke');

      (await kernel.rebind(Diagnostics)).toConstantValue({ report: (report) => void second.push(report) });
      const seen = first.length;
      await manager.wait((await manager.spawn({ kind: 'process', command: 'noop', cwd: dir })).id);
      expect(first).toHaveLength(seen);
      expect(second.map((report) => report.code)).toContain('TESSERA_BACKGROUND_TASK');
    } finally {
      await kernel.shutdown();
    }
  });

  it('checks its options in the factory', () => {
    expect(() => backgroundRuntime({ maxConcurrent: 0 })).toThrow(expect.objectContaining({ code: 'invalid_plugin_options', message: expect.stringContaining('maxConcurrent') }));
    expect(() => backgroundRuntime({ shell: { killGraceMs: -1 } })).toThrow(/shell\.killGraceMs/);
    expect(() => backgroundRuntime({ runners: [{} as never] })).toThrow(/runners/);
    expect(() => backgroundRuntime({ maxQueued: Number.POSITIVE_INFINITY, maxDepth: 0 })).not.toThrow();
  });
});
