import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTaskManager } from './background-task-manager.js';
import { createManagedShellProcessRunner, liveGroupMembers } from './managed-shell-process-runner.js';
import type { IBackgroundProcessTaskRequest, IBackgroundTaskHandle } from './types.js';

const posix = process.platform !== 'win32';
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-shell-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const request = (command: string, extra: Partial<IBackgroundProcessTaskRequest> = {}): IBackgroundProcessTaskRequest => ({
  kind: 'process',
  command,
  cwd: dir,
  ...extra,
});

function start(command: string, options: Parameters<typeof createManagedShellProcessRunner>[0] = {}, extra: Partial<IBackgroundProcessTaskRequest> = {}) {
  const runner = createManagedShellProcessRunner({ logDir: join(dir, 'logs'), ...options });
  return runner.start({ taskId: 'task_1', request: request(command, extra), emit: () => undefined });
}

async function waitForLine(handle: IBackgroundTaskHandle, text: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const page = await handle.readLog!();
    if (page.lines.some((line) => line.includes(text))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never saw "${text}" in the log`);
}

/** Live processes of a group, read from the process table. */
function livePids(pgid: number): number {
  return liveGroupMembers(pgid);
}

/**
 * Members of a killed group, once the kernel has reaped them. SIGKILL is immediate, but a busy
 * machine (the whole suite in parallel) can take a moment to tear the processes down.
 */
async function livePidsAfterKill(pgid: number): Promise<number> {
  for (let attempt = 0; attempt < 100 && livePids(pgid) > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return livePids(pgid);
}

describe.runIf(posix)('createManagedShellProcessRunner', () => {
  it('runs a command, prefixes log lines, writes the log file and reports exit code', async () => {
    const handle = start('echo out; echo err >&2; printf tail');
    const result = await handle.result;
    expect(result).toMatchObject({ exitCode: 0, signal: null });
    expect(result.output).toContain('out\n');
    const page = await handle.readLog!();
    expect(page.lines).toEqual(expect.arrayContaining(['[stdout] out', '[stderr] err', '[stdout] tail', '[exit] exit code 0']));
    expect(handle.logPath).toBe(join(dir, 'logs', 'task_1.log'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await readFile(handle.logPath!, 'utf8')).toContain('[stderr] err\n');
  });

  it('fails a non-zero exit with the exit code and output', async () => {
    const handle = start('echo bad; exit 3');
    await expect(handle.result).rejects.toMatchObject({ code: 'process_failed', taskCategory: 'process', details: { exitCode: 3, output: 'bad\n' } });
  });

  it('settles once when spawning fails (error followed by close)', async () => {
    const handle = start('true', {}, { cwd: join(dir, 'missing') });
    await expect(handle.result).rejects.toMatchObject({ code: 'process_spawn_failed' });
    const page = await handle.readLog!();
    expect(page.lines.filter((line) => line.startsWith('[exit]'))).toHaveLength(1);
  });

  it('writes stdin with send', async () => {
    const handle = start('read line; echo "got:$line"');
    await handle.send!('hello\n');
    expect((await handle.result).output).toBe('got:hello\n');
    await expect(handle.send!('late')).rejects.toMatchObject({ code: 'process_stdin_closed' });
  });

  it('kills a process that ignores SIGTERM with SIGKILL after the grace period', async () => {
    const handle = start("trap '' TERM; echo ready; while true; do sleep 0.05; done", { killGraceMs: 300 });
    await waitForLine(handle, 'ready');
    const pgid = handle.pid!;
    expect(livePids(pgid)).toBeGreaterThan(0);
    await handle.cancel('test');
    await expect(handle.result).rejects.toMatchObject({ code: 'process_cancelled', details: { signal: 'SIGKILL' } });
    expect(await livePidsAfterKill(pgid)).toBe(0);
  });

  it('kills grandchildren with the group', async () => {
    const handle = start('sleep 30 & sleep 30 & (sleep 30; echo never) & echo spawned; wait', { killGraceMs: 2000 });
    await waitForLine(handle, 'spawned');
    const pgid = handle.pid!;
    expect(livePids(pgid)).toBeGreaterThanOrEqual(4);
    await handle.cancel();
    await expect(handle.result).rejects.toMatchObject({ code: 'process_cancelled' });
    expect(await livePidsAfterKill(pgid)).toBe(0);
  });

  it('kills the group and reports a timeout after timeoutMs', async () => {
    const handle = start('echo started; sleep 30', { killGraceMs: 200 }, { timeoutMs: 200 });
    await expect(handle.result).rejects.toMatchObject({ code: 'process_timeout', taskCategory: 'timeout', timeoutReason: 'max_runtime' });
    expect(await livePidsAfterKill(handle.pid!)).toBe(0);
  });

  it('rejects an empty command and an unsafe task id', () => {
    const runner = createManagedShellProcessRunner();
    expect(() => runner.start({ taskId: 'task_1', request: request('  '), emit: () => undefined })).toThrow(/non-empty command/);
    expect(() => runner.start({ taskId: '../x', request: request('true'), emit: () => undefined })).toThrow(/Invalid task id/);
  });

  it('works under the manager: cancelled state, logPath and pid in state, exit projected', async () => {
    const manager = new BackgroundTaskManager({ runners: [createManagedShellProcessRunner({ logDir: dir, killGraceMs: 200 })] });
    const running = await manager.spawn(request('echo hi; sleep 30'));
    expect(running).toMatchObject({ status: 'running', logPath: join(dir, 'task_1.log') });
    expect(running.pid).toBeTypeOf('number');
    const cancelled = await manager.cancel('task_1');
    expect(cancelled.status).toBe('cancelled');
    expect(await livePidsAfterKill(running.pid!)).toBe(0);
    await manager.spawn(request('exit 4'));
    expect(await manager.wait('task_2')).toMatchObject({ status: 'failed', exitCode: 4, error: { category: 'process' } });
    await manager.spawn(request('echo fine'));
    expect(await manager.wait('task_3')).toMatchObject({ status: 'completed', exitCode: 0, output: 'fine\n' });
    await manager.shutdown();
  });
});
