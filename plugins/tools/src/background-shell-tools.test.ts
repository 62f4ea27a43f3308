import type { BackgroundOutputRead, BackgroundTasks, BackgroundTaskStatus } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';
import { bashOutputTool, killShellTool } from './background-shell-tools.js';
import { text, toolContext } from './test-support.js';

/** A runtime whose task `task_1` belongs to session-1 and has logged `log` so far. */
function fakeRuntime(log: string[], state: { status: BackgroundTaskStatus; exitCode?: number | null; dropped?: boolean }) {
  const reads: Array<{ id: string; from: number; session: string | undefined }> = [];
  const stops: string[] = [];
  const runtime: BackgroundTasks = {
    spawn: async () => ({ id: 'task_1' }),
    async readOutput(id, from, session): Promise<BackgroundOutputRead> {
      reads.push({ id, from, session });
      if (id !== 'task_1' || session !== 'session-1') throw new Error(`No background task "${id}" in this session.`);
      return {
        status: state.status,
        ...(state.exitCode === undefined ? {} : { exitCode: state.exitCode }),
        lines: log.slice(from),
        nextLine: log.length,
        dropped: state.dropped ?? false,
      };
    },
    async stop(id, session) {
      if (id !== 'task_1' || session !== 'session-1') throw new Error(`No background task "${id}" in this session.`);
      stops.push(id);
      const before = state.status;
      if (before === 'running') state.status = 'cancelled';
      return state.status;
    },
  };
  return { runtime, reads, stops };
}

describe('BashOutput', () => {
  it('returns the new lines since the last call, per session, with the status and exit code', async () => {
    const log = ['[stdout] compiling', '[stderr] warning: x'];
    const state: { status: BackgroundTaskStatus; exitCode?: number | null } = { status: 'running' };
    const { runtime, reads } = fakeRuntime(log, state);
    const tool = bashOutputTool({ backgroundTasks: () => runtime });
    const first = await tool.execute({ bash_id: 'task_1' }, toolContext('/ws'));
    expect(text(first)).toBe('Status: running\ncompiling\n[stderr] warning: x');
    expect(first.data).toEqual({ bashId: 'task_1', status: 'running', lines: 2, filtered: 0 });
    expect(text(await tool.execute({ bash_id: 'task_1' }, toolContext('/ws')))).toBe('Status: running\n(no new output)');
    log.push('[stdout] done', '[exit] exit code 0');
    state.status = 'completed';
    state.exitCode = 0;
    const last = await tool.execute({ bash_id: 'task_1' }, toolContext('/ws'));
    expect(text(last)).toBe('Status: completed (exit code 0)\ndone');
    expect(reads.map((read) => read.from)).toEqual([0, 2, 2]);
  });

  it('applies the filter (ripgrep syntax) and consumes the lines it drops', async () => {
    const log = ['[stdout] GET /a 200', '[stdout] GET /b 500', '[stdout] GET /c 200'];
    const { runtime } = fakeRuntime(log, { status: 'running' });
    const tool = bashOutputTool({ backgroundTasks: runtime });
    const filtered = await tool.execute({ bash_id: 'task_1', filter: ' 5[[:digit:]]{2}$' }, toolContext('/ws'));
    expect(text(filtered)).toBe('Status: running\nGET /b 500');
    expect(filtered.data).toMatchObject({ lines: 1, filtered: 2 });
    expect(text(await tool.execute({ bash_id: 'task_1' }, toolContext('/ws')))).toBe('Status: running\n(no new output)');
    const bad = await tool.execute({ bash_id: 'task_1', filter: '(' }, toolContext('/ws'));
    expect(bad).toMatchObject({ success: false, errorCode: 'invalid_pattern' });
  });

  it('says when more output is already waiting', async () => {
    const runtime: BackgroundTasks = {
      spawn: async () => ({ id: 'task_1' }),
      readOutput: async () => ({ status: 'completed', exitCode: 0, lines: ['[stdout] 1'], nextLine: 1, dropped: false, more: true }),
    };
    const result = await bashOutputTool({ backgroundTasks: runtime }).execute({ bash_id: 'task_1' }, toolContext('/ws'));
    expect(text(result)).toBe('Status: completed (exit code 0)\n1\n[More output is already waiting: call BashOutput again to read it.]');
    expect(result.data).toMatchObject({ more: true });
  });

  it('keeps the newest output within the size limit and says when the log dropped lines', async () => {
    const log = Array.from({ length: 100 }, (_, index) => `[stdout] line ${index}`);
    const { runtime } = fakeRuntime(log, { status: 'running', dropped: true });
    const result = await bashOutputTool({ backgroundTasks: runtime, maxOutputChars: 50 }).execute({ bash_id: 'task_1' }, toolContext('/ws'));
    const output = text(result);
    expect(output).toContain('[Earlier output was dropped from the log before it was read.]');
    expect(output).toContain('earlier characters not shown');
    expect(output.endsWith('line 99')).toBe(true);
  });

  it("fails clearly without a runtime, for another session's shell and for an unknown id", async () => {
    expect(await bashOutputTool().execute({ bash_id: 'task_1' }, toolContext('/ws'))).toMatchObject({ success: false, errorCode: 'unavailable' });
    const { runtime } = fakeRuntime([], { status: 'running' });
    const tool = bashOutputTool({ backgroundTasks: runtime });
    expect(await tool.execute({ bash_id: 'task_1' }, toolContext('/ws', { sessionId: 'intruder' }))).toMatchObject({ success: false, errorCode: 'not_found' });
    expect(await tool.execute({ bash_id: 'task_9' }, toolContext('/ws'))).toMatchObject({ success: false, errorCode: 'not_found' });
    const noLogs = bashOutputTool({ backgroundTasks: { spawn: runtime.spawn } });
    expect(await noLogs.execute({ bash_id: 'task_1' }, toolContext('/ws'))).toMatchObject({ success: false, errorCode: 'unavailable' });
  });
});

describe('KillShell', () => {
  it("stops the session's own shell and reports one that had already ended", async () => {
    const state: { status: BackgroundTaskStatus } = { status: 'running' };
    const { runtime, stops } = fakeRuntime([], state);
    const tool = killShellTool({ backgroundTasks: runtime });
    expect(await tool.execute({ shell_id: 'task_1' }, toolContext('/ws', { sessionId: 'intruder' }))).toMatchObject({ success: false, errorCode: 'not_found' });
    expect(stops).toEqual([]);
    const killed = await tool.execute({ shell_id: 'task_1' }, toolContext('/ws'));
    expect(text(killed)).toBe('Killed background shell task_1.');
    expect(killed.data).toEqual({ shellId: 'task_1', status: 'cancelled' });
    state.status = 'completed';
    expect(text(await tool.execute({ shell_id: 'task_1' }, toolContext('/ws')))).toBe('Background shell task_1 had already ended (completed).');
    expect(await killShellTool().execute({ shell_id: 'task_1' }, toolContext('/ws'))).toMatchObject({ success: false, errorCode: 'unavailable' });
  });
});
