import { FakeClock } from '@tessera/kernel/testing';
import { describe, expect, it, vi } from 'vitest';
import { BackgroundTaskError } from './background-task-error.js';
import { BackgroundTaskManager, type BackgroundTaskManagerOptions } from './background-task-manager.js';
import { ManualBackgroundTaskRunner, type ManualBackgroundTaskRunnerOptions } from './manual-background-task-runner.js';
import type { IBackgroundAgentTaskRequest, IBackgroundTaskRequest, TBackgroundTaskEvent } from './types.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const agent = (extra: Partial<IBackgroundAgentTaskRequest> = {}): IBackgroundTaskRequest => ({
  kind: 'agent',
  agentType: 'general-purpose',
  prompt: 'do it',
  cwd: '/tmp',
  ...extra,
});

function setup(runnerOptions: ManualBackgroundTaskRunnerOptions = {}, options: Partial<BackgroundTaskManagerOptions> = {}) {
  const runner = new ManualBackgroundTaskRunner(runnerOptions);
  const events: TBackgroundTaskEvent[] = [];
  const errors: Array<{ error: unknown; phase: string }> = [];
  const manager = new BackgroundTaskManager({
    runners: [runner],
    eventSink: (event) => events.push(event),
    onError: (error, context) => errors.push({ error, phase: context.phase }),
    ...options,
  });
  const types = () => events.map((event) => event.type);
  return { runner, manager, events, errors, types };
}

describe('BackgroundTaskManager lifecycle', () => {
  it('creates, starts and completes a task, with events and an unread flag', async () => {
    const { runner, manager, types } = setup();
    const state = await manager.spawn(agent({ label: 'L', parentSessionId: 'p1' }));
    expect(state).toMatchObject({ id: 'task_1', status: 'running', kind: 'agent', label: 'L', depth: 1, mode: 'background' });
    runner.run('task_1').resolve({ output: 'done', metadata: { worktreePath: '/w', branchName: 'b', extra: 1 } });
    const final = await manager.wait('task_1');
    expect(final).toMatchObject({ status: 'completed', output: 'done', unread: true, worktreePath: '/w', branchName: 'b' });
    expect(final.resultMetadata).toEqual({ worktreePath: '/w', branchName: 'b', extra: 1 });
    expect(final.completedAt).toBeTypeOf('number');
    expect(types()).toEqual(['background_task_created', 'background_task_started', 'background_task_completed']);
  });

  it('keeps a foreground task read', async () => {
    const { runner, manager } = setup();
    await manager.spawn(agent({ mode: 'foreground' }));
    runner.run('task_1').resolve();
    expect((await manager.wait('task_1')).unread).toBeUndefined();
  });

  it('queues FIFO beyond maxConcurrent and starts the next when a slot frees', async () => {
    const { runner, manager } = setup({}, { maxConcurrent: 2 });
    for (let i = 0; i < 4; i++) await manager.spawn(agent());
    expect(manager.list({ status: 'queued' }).map((t) => t.id)).toEqual(['task_3', 'task_4']);
    expect(manager.activeCount).toBe(2);
    runner.run('task_2').resolve();
    await flush();
    expect(manager.get('task_3')?.status).toBe('running');
    expect(manager.get('task_4')?.status).toBe('queued');
    expect(runner.runs.map((r) => r.taskId)).toEqual(['task_1', 'task_2', 'task_3']);
  });

  it('never starts a cancelled queued task', async () => {
    const { runner, manager, events } = setup({}, { maxConcurrent: 1 });
    await manager.spawn(agent());
    await manager.spawn(agent());
    const cancelled = await manager.cancel('task_2', 'not needed');
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelReason: 'not needed' });
    runner.run('task_1').resolve();
    await flush();
    expect(runner.runs).toHaveLength(1);
    expect(events.filter((e) => e.taskId === 'task_2').map((e) => e.type)).toEqual(['background_task_created', 'background_task_cancelled']);
  });

  it('cancels a running task through its handle once and stays cancelled', async () => {
    const { runner, manager, types } = setup();
    await manager.spawn(agent());
    const [first, second] = await Promise.all([manager.cancel('task_1', 'stop'), manager.cancel('task_1', 'again')]);
    expect(first.status).toBe('cancelled');
    expect(second.status).toBe('cancelled');
    expect(runner.run('task_1').cancelCalls).toEqual(['stop']);
    runner.run('task_1').resolve({ output: 'late' });
    await flush();
    expect(manager.get('task_1')).toMatchObject({ status: 'cancelled' });
    expect(manager.get('task_1')?.output).toBeUndefined();
    expect(types().filter((t) => t === 'background_task_cancelled')).toHaveLength(1);
    expect((await manager.cancel('task_1')).status).toBe('cancelled');
  });

  it('treats a result that arrives while cancelling as cancelled', async () => {
    const { runner, manager } = setup({ onCancel: (run) => run.resolve({ output: 'partial' }) });
    await manager.spawn(agent());
    expect((await manager.cancel('task_1')).status).toBe('cancelled');
  });

  it('cancel while the runner is still inside start() cancels the handle after it returns', async () => {
    let manager!: BackgroundTaskManager;
    let pending: Promise<unknown> | undefined;
    const runner = new ManualBackgroundTaskRunner({
      duringStart: (start) => {
        pending = manager.cancel(start.taskId, 'early');
      },
    });
    manager = new BackgroundTaskManager({ runners: [runner] });
    await manager.spawn(agent());
    await pending;
    expect(manager.get('task_1')?.status).toBe('cancelled');
    expect(runner.run('task_1').cancelCalls).toEqual(['early']);
  });

  it('fails with category runner when start() throws', async () => {
    const { manager, types } = setup({ startError: new Error('boom') });
    const state = await manager.spawn(agent());
    expect(state.status).toBe('failed');
    expect(state.error).toEqual({ code: 'background_runner_failed', category: 'runner', recoverable: true, message: 'boom' });
    expect(manager.activeCount).toBe(0);
    expect(types()).toEqual(['background_task_created', 'background_task_failed']);
  });

  it('drains a long queue of synchronous start failures without deep recursion', async () => {
    let first = true;
    let release!: () => void;
    const runner = {
      kind: 'agent' as const,
      start: ({ taskId }: { taskId: string }) => {
        if (!first) throw new Error('cannot start');
        first = false;
        return { taskId, result: new Promise<{ output: string }>((resolve) => (release = () => resolve({ output: '' }))), cancel: async () => undefined };
      },
    };
    const manager = new BackgroundTaskManager({ runners: [runner], maxConcurrent: 1 });
    await manager.spawn(agent());
    for (let i = 0; i < 20_000; i++) void manager.spawn(agent());
    release();
    expect((await manager.wait('task_20001')).status).toBe('failed');
    expect(manager.list({ status: 'failed' })).toHaveLength(20_000);
  });

  it('projects a runner failure as plain data and keeps exit codes', async () => {
    const { runner, manager } = setup({ kind: 'process' });
    await manager.spawn({ kind: 'process', command: 'x', cwd: '/' });
    class VendorError extends Error {
      secret = 'sk-123';
    }
    runner.run('task_1').reject(new VendorError('vendor broke'));
    const state = await manager.wait('task_1');
    expect(state.error).toEqual({ code: 'background_process_failed', category: 'process', recoverable: true, message: 'vendor broke' });
    expect(JSON.stringify(state)).not.toContain('sk-123');
    await manager.spawn({ kind: 'process', command: 'y', cwd: '/' });
    runner.run('task_2').reject(new BackgroundTaskError('process', 'exit 3', { code: 'process_exit', details: { exitCode: 3, signal: null, output: 'o' } }));
    expect(await manager.wait('task_2')).toMatchObject({ exitCode: 3, signal: null, output: 'o', error: { code: 'process_exit' } });
  });

  it('projects pid, logPath and transcriptPath at start', async () => {
    const { manager, events } = setup({ pid: 42, logPath: '/l.log', transcriptPath: '/t.jsonl' });
    const state = await manager.spawn(agent());
    expect(state).toMatchObject({ pid: 42, logPath: '/l.log', transcriptPath: '/t.jsonl' });
    const started = events.find((e) => e.type === 'background_task_started');
    expect(started && 'task' in started ? started.task.logPath : undefined).toBe('/l.log');
  });

  it('closes only terminal tasks, keeps them until then, and emits closed', async () => {
    const { runner, manager, types } = setup();
    await manager.spawn(agent());
    expect(() => manager.close('task_1')).toThrow(/while it is running; cancel it or wait/);
    runner.run('task_1').resolve();
    await manager.wait('task_1');
    expect(manager.close('task_1').status).toBe('completed');
    expect(manager.get('task_1')).toBeUndefined();
    expect(types().at(-1)).toBe('background_task_closed');
    expect(() => manager.close('task_1')).toThrow(/No background task/);
    await expect(manager.wait('task_1')).rejects.toMatchObject({ code: 'background_task_not_found' });
  });
});

describe('BackgroundTaskManager validation', () => {
  it('rejects unknown kinds, bad depth, bad cwd, bad metadata and unsafe ids', async () => {
    const { manager } = setup({}, { maxDepth: 1 });
    await expect(manager.spawn({ kind: 'process', command: 'x', cwd: '/' })).rejects.toMatchObject({ code: 'background_unknown_kind', taskCategory: 'validation' });
    await expect(manager.spawn(agent({ depth: 2 }))).rejects.toMatchObject({ code: 'background_invalid_depth' });
    await expect(manager.spawn(agent({ cwd: '' }))).rejects.toMatchObject({ code: 'background_invalid_request' });
    await expect(manager.spawn(agent({ metadata: { nested: {} as never } }))).rejects.toThrow(/metadata\.nested/);
    const unsafe = new BackgroundTaskManager({ runners: [new ManualBackgroundTaskRunner()], idFactory: () => '../x' });
    await expect(unsafe.spawn(agent())).rejects.toMatchObject({ code: 'background_invalid_task_id' });
    expect(() => new BackgroundTaskManager({ runners: [new ManualBackgroundTaskRunner(), new ManualBackgroundTaskRunner()] })).toThrow(/one runner per kind/);
    expect(() => new BackgroundTaskManager({ runners: [], maxConcurrent: 0 })).toThrow(/maxConcurrent/);
  });

  it('enforces maxQueued with a capacity error', async () => {
    const { manager } = setup({}, { maxConcurrent: 1, maxQueued: 1 });
    await manager.spawn(agent());
    await manager.spawn(agent());
    await expect(manager.spawn(agent())).rejects.toMatchObject({ taskCategory: 'capacity', code: 'background_queue_full' });
  });

  it('clones metadata in and out and never interprets it', async () => {
    const { runner, manager } = setup();
    const metadata = { origin: 'command', status: 'completed', kind: 'process' };
    await manager.spawn(agent({ metadata }));
    metadata.origin = 'changed';
    const snapshot = manager.get('task_1')!;
    expect(snapshot).toMatchObject({ status: 'running', kind: 'agent', metadata: { origin: 'command', status: 'completed', kind: 'process' } });
    snapshot.metadata.origin = 'mutated';
    snapshot.status = 'failed';
    expect(manager.get('task_1')).toMatchObject({ status: 'running', metadata: { origin: 'command' } });
    expect(runner.runs).toHaveLength(1);
  });
});

describe('BackgroundTaskManager events and progress', () => {
  it('hands listeners frozen clones and isolates a throwing listener', async () => {
    const { manager, errors } = setup();
    const seen: TBackgroundTaskEvent[] = [];
    manager.subscribe(() => {
      throw new Error('listener broke');
    });
    const unsubscribe = manager.subscribe((event) => {
      seen.push(event);
      if ('task' in event) expect(() => ((event.task as { status: string }).status = 'failed')).toThrow(TypeError);
    });
    await manager.spawn(agent());
    expect(manager.get('task_1')?.status).toBe('running');
    expect(errors.map((e) => e.phase)).toEqual(['listener for background_task_created', 'listener for background_task_started']);
    unsubscribe();
    await manager.spawn(agent());
    expect(seen).toHaveLength(2);
  });

  it('tracks currentAction from tool events; progress never changes lifecycle', async () => {
    const { runner, manager, types } = setup();
    await manager.spawn(agent());
    const run = runner.run('task_1');
    run.emit({ type: 'tool_start', toolName: 'Bash', toolCallId: 'c1', action: 'Bash: npm test' });
    expect(manager.get('task_1')?.currentAction).toBe('Bash: npm test');
    run.emit({ type: 'tool_end', toolName: 'Bash', toolCallId: 'c1', success: true });
    expect(manager.get('task_1')?.currentAction).toBeUndefined();
    run.emit({ type: 'tool_start', toolName: 'Edit' });
    run.emit({ type: 'tool_end', toolName: 'Edit', success: false, error: 'no match' });
    expect(manager.get('task_1')?.currentAction).toBe('Edit failed: no match');
    run.emit({ type: 'text_delta', delta: 'hi' });
    expect(manager.get('task_1')?.status).toBe('running');
    expect(types().slice(2)).toEqual([
      'background_task_tool_start',
      'background_task_tool_end',
      'background_task_tool_start',
      'background_task_tool_end',
      'background_task_text_delta',
    ]);
  });

  it('enters and leaves waiting_permission, counting parallel requests', async () => {
    const { runner, manager, events } = setup();
    await manager.spawn(agent());
    const run = runner.run('task_1');
    run.emit({ type: 'permission_request', requestId: 'r1', toolName: 'Bash', description: 'rm' });
    run.emit({ type: 'permission_request', requestId: 'r2', toolName: 'Edit' });
    expect(manager.get('task_1')).toMatchObject({ status: 'waiting_permission', pendingPermissions: 2 });
    run.emit({ type: 'permission_decision', requestId: 'r1', allowed: true });
    expect(manager.get('task_1')).toMatchObject({ status: 'waiting_permission', pendingPermissions: 1 });
    run.emit({ type: 'permission_decision', requestId: 'r2', allowed: false });
    expect(manager.get('task_1')).toMatchObject({ status: 'running', pendingPermissions: 0 });
    expect(events.filter((e) => e.type === 'background_task_permission_request')).toHaveLength(2);
  });

  it('completes a task that settles while waiting for permission', async () => {
    const { runner, manager } = setup();
    await manager.spawn(agent());
    runner.run('task_1').emit({ type: 'permission_request', requestId: 'r1', toolName: 'Bash' });
    runner.run('task_1').resolve({ output: 'ok' });
    expect(await manager.wait('task_1')).toMatchObject({ status: 'completed', pendingPermissions: 0 });
  });

  it('reports invalid runner events instead of throwing them into the runner', async () => {
    const { runner, manager, errors } = setup();
    await manager.spawn(agent());
    const run = runner.run('task_1');
    expect(() => run.emit({ type: 'permission_decision', requestId: 'nope', allowed: true })).not.toThrow();
    run.emit({ type: 'permission_request', requestId: 'r1', toolName: 'Bash' });
    expect(() => run.emit({ type: 'sleep' })).not.toThrow(); // waiting_permission + SLEEP has no edge
    expect(() => run.emit({ type: 'bogus' } as never)).not.toThrow();
    expect(errors.map((e) => (e.error as BackgroundTaskError).code)).toEqual([
      'background_unknown_permission_request',
      'background_invalid_transition',
      'background_unknown_runner_event',
    ]);
    expect(manager.get('task_1')?.status).toBe('waiting_permission');
  });

  it('gives a sleeping task\'s slot away and takes one again on wake', async () => {
    const { runner, manager } = setup({ kind: 'scheduled' }, { maxConcurrent: 1 });
    const scheduled: IBackgroundTaskRequest = { kind: 'scheduled', schedule: '* * * * *', cwd: '/', task: { kind: 'process', command: 'x', cwd: '/' } };
    await manager.spawn(scheduled);
    await manager.spawn(scheduled);
    expect(manager.get('task_2')?.status).toBe('queued');
    runner.run('task_1').emit({ type: 'sleep', nextRunAt: 123 });
    expect(manager.get('task_1')).toMatchObject({ status: 'sleeping', nextRunAt: 123 });
    expect(manager.get('task_2')?.status).toBe('running');
    runner.run('task_1').emit({ type: 'wake' });
    expect(manager.get('task_1')?.status).toBe('running');
    expect(manager.activeCount).toBe(2);
    runner.run('task_1').emit({ type: 'wake' }); // overlapping fire: running + WAKE stays running
    runner.run('task_1').emit({ type: 'sleep' });
    runner.run('task_1').emit({ type: 'sleep' }); // double end report of one fire
    expect(manager.get('task_1')?.status).toBe('sleeping');
    runner.run('task_1').resolve({ output: 'schedule finished' }); // no next fire
    expect(await manager.wait('task_1')).toMatchObject({ status: 'completed', output: 'schedule finished' });
    expect(manager.activeCount).toBe(1);
  });
});

describe('BackgroundTaskManager send, readLog, wait', () => {
  it('forwards send and readLog to the handle', async () => {
    const { runner, manager } = setup();
    await manager.spawn(agent());
    await manager.send('task_1', 'more');
    expect(runner.run('task_1').sent).toEqual(['more']);
    runner.run('task_1').log.push('a', 'b', 'c');
    expect(await manager.readLog('task_1', { offset: 1 })).toMatchObject({ lines: ['b', 'c'], nextCursor: { offset: 3 } });
  });

  it('explains unsupported send/readLog and terminal send', async () => {
    const runner = {
      kind: 'agent' as const,
      start: ({ taskId }: { taskId: string }) => ({ taskId, result: new Promise<never>(() => undefined), cancel: async () => undefined }),
    };
    const manager = new BackgroundTaskManager({ runners: [runner] });
    await manager.spawn(agent());
    await expect(manager.send('task_1', 'x')).rejects.toMatchObject({ code: 'background_send_unsupported', taskCategory: 'runner' });
    await expect(manager.readLog('task_1')).rejects.toMatchObject({ code: 'background_log_unsupported' });
    await manager.cancel('task_1');
    await expect(manager.send('task_1', 'x')).rejects.toMatchObject({ code: 'background_task_not_running' });
    await expect(manager.send('nope', 'x')).rejects.toMatchObject({ code: 'background_task_not_found' });
  });

  it('reads an empty page for a queued task', async () => {
    const { manager } = setup({}, { maxConcurrent: 1 });
    await manager.spawn(agent());
    await manager.spawn(agent());
    expect(await manager.readLog('task_2')).toMatchObject({ lines: [], totalLines: 0 });
  });

  it('filters list by status, kind, mode and parent', async () => {
    const { manager } = setup();
    await manager.spawn(agent({ parentSessionId: 'a', mode: 'foreground' }));
    await manager.spawn(agent({ parentSessionId: 'b' }));
    expect(manager.list({ parentSessionId: 'b' }).map((t) => t.id)).toEqual(['task_2']);
    expect(manager.list({ mode: 'foreground' }).map((t) => t.id)).toEqual(['task_1']);
    expect(manager.list({ status: ['running'], kind: 'agent' })).toHaveLength(2);
    expect(manager.list({ kind: 'process' })).toHaveLength(0);
  });
});

describe('BackgroundTaskManager shutdown', () => {
  it('cancels everything once, emits terminal events before resolving, keeps records, rejects new spawns', async () => {
    const { runner, manager, types } = setup({}, { maxConcurrent: 1 });
    void manager.spawn(agent());
    void manager.spawn(agent()); // still queued: shutdown during spawn
    const first = manager.shutdown('bye');
    const second = manager.shutdown('again');
    expect(second).toBe(first);
    await first;
    expect(manager.list().map((t) => [t.id, t.status, t.cancelReason])).toEqual([
      ['task_1', 'cancelled', 'bye'],
      ['task_2', 'cancelled', 'bye'],
    ]);
    expect(runner.runs).toHaveLength(1);
    expect(runner.run('task_1').cancelCalls).toEqual(['bye']);
    expect(types().filter((t) => t === 'background_task_cancelled')).toHaveLength(2);
    await expect(manager.spawn(agent())).rejects.toMatchObject({ code: 'background_manager_shut_down' });
  });

  it('resolves even when a handle cancel fails, and reports the failure', async () => {
    const { manager, errors } = setup({ onCancel: () => Promise.reject(new Error('kill failed')) });
    await manager.spawn(agent());
    await manager.shutdown();
    expect(manager.get('task_1')?.status).toBe('cancelled');
    expect(errors.map((e) => e.phase)).toEqual(['cancel']);
  });
});

describe('BackgroundTaskManager watchdogs', () => {
  const watched = (request: Partial<IBackgroundAgentTaskRequest>, runnerOptions: ManualBackgroundTaskRunnerOptions = {}, options: Partial<BackgroundTaskManagerOptions> = {}) => {
    const clock = new FakeClock();
    const context = setup(runnerOptions, { clock, ...options });
    return { ...context, clock, spawn: () => context.manager.spawn(agent(request)) };
  };

  const expectTimeout = async (manager: BackgroundTaskManager, reason: string, runner: ManualBackgroundTaskRunner) => {
    const state = await manager.wait('task_1');
    expect(state).toMatchObject({ status: 'failed', timeoutReason: reason, error: { category: 'timeout', code: 'background_task_timeout', recoverable: true } });
    await flush();
    expect(runner.run('task_1').cancelCalls).toEqual([`watchdog: ${reason}`]);
    expect(manager.activeCount).toBe(0);
  };

  it('idle: fails after a quiet window; deltas, tool events and permission requests refresh it', async () => {
    const { manager, runner, clock, spawn } = watched({ idleTimeoutMs: 1000 });
    await spawn();
    const run = runner.run('task_1');
    clock.advance(900);
    run.emit({ type: 'text_delta', delta: 'x' });
    clock.advance(900);
    run.emit({ type: 'tool_start', toolName: 'Read' });
    clock.advance(900);
    run.emit({ type: 'tool_end', toolName: 'Read', success: true });
    clock.advance(900);
    run.emit({ type: 'heartbeat' });
    clock.advance(900);
    expect(manager.get('task_1')?.status).toBe('running');
    clock.advance(200);
    await expectTimeout(manager, 'idle', runner);
  });

  it('idle: does not run while a permission question is open', async () => {
    const { manager, runner, clock, spawn } = watched({ idleTimeoutMs: 1000 });
    await spawn();
    runner.run('task_1').emit({ type: 'permission_request', requestId: 'r', toolName: 'Bash' });
    clock.advance(10_000);
    expect(manager.get('task_1')?.status).toBe('waiting_permission');
    runner.run('task_1').emit({ type: 'permission_decision', requestId: 'r', allowed: true });
    clock.advance(1000);
    await expectTimeout(manager, 'idle', runner);
  });

  it('legacy timeoutMs is the idle timeout', async () => {
    const { manager, runner, clock, spawn } = watched({ timeoutMs: 50 });
    await spawn();
    clock.advance(50);
    await expectTimeout(manager, 'idle', runner);
  });

  it('max_runtime: a wall-clock cap that activity does not extend; off by default', async () => {
    const { manager, runner, clock, spawn } = watched({ maxRuntimeMs: 1000, idleTimeoutMs: 0 });
    await spawn();
    for (let i = 0; i < 9; i++) {
      clock.advance(100);
      runner.run('task_1').emit({ type: 'text_delta', delta: `d${i}` });
    }
    clock.advance(100);
    await expectTimeout(manager, 'max_runtime', runner);

    const other = watched({ idleTimeoutMs: 0 });
    await other.spawn();
    other.clock.advance(10 * 24 * 3600 * 1000);
    expect(other.manager.get('task_1')?.status).toBe('running');
  });

  it('output_limit: by bytes and by number of deltas', async () => {
    const bytes = watched({ outputLimitBytes: 10 });
    await bytes.spawn();
    bytes.runner.run('task_1').emit({ type: 'text_delta', delta: 'é'.repeat(5) }); // 10 bytes: at the limit
    expect(bytes.manager.get('task_1')?.status).toBe('running');
    bytes.runner.run('task_1').emit({ type: 'text_delta', delta: 'x' });
    await expectTimeout(bytes.manager, 'output_limit', bytes.runner);

    const count = watched({ maxTextDeltas: 3 });
    await count.spawn();
    for (const delta of ['a', 'b', 'c', 'd']) count.runner.run('task_1').emit({ type: 'text_delta', delta });
    await expectTimeout(count.manager, 'output_limit', count.runner);
  });

  it('repetition: the same chunk or sentence over and over', async () => {
    const chunk = watched({ repetitionThreshold: 4 });
    await chunk.spawn();
    for (let i = 0; i < 3; i++) chunk.runner.run('task_1').emit({ type: 'text_delta', delta: 'loop ' });
    expect(chunk.manager.get('task_1')?.status).toBe('running');
    chunk.runner.run('task_1').emit({ type: 'text_delta', delta: 'loop ' });
    await expectTimeout(chunk.manager, 'repetition', chunk.runner);

    const sentence = watched({ repetitionThreshold: 3, repetitionWindow: 400 });
    await sentence.spawn();
    for (const part of ['I will now check the file. ', 'Hmm ', 'I will now check', ' the file. ', 'ok ', 'I will now check the file.']) {
      sentence.runner.run('task_1').emit({ type: 'text_delta', delta: part });
    }
    await expectTimeout(sentence.manager, 'repetition', sentence.runner);
  });

  it('repetition: varied text stays alive', async () => {
    const { manager, runner, spawn } = watched({ repetitionThreshold: 3 });
    await spawn();
    for (let i = 0; i < 50; i++) runner.run('task_1').emit({ type: 'text_delta', delta: `Sentence number ${i} is different. ` });
    expect(manager.get('task_1')?.status).toBe('running');
  });

  it('stale_worker: a dead pid, or a runner report', async () => {
    const alive = vi.fn(() => false);
    const { manager, runner, clock, spawn } = watched({ staleWorkerCheckMs: 500 }, { pid: 999 }, { isProcessAlive: alive });
    await spawn();
    clock.advance(500);
    expect(alive).toHaveBeenCalledWith(999);
    await expectTimeout(manager, 'stale_worker', runner);

    const reported = watched({});
    await reported.spawn();
    reported.runner.run('task_1').emit({ type: 'worker_stale', reason: 'IPC closed' });
    await expectTimeout(reported.manager, 'stale_worker', reported.runner);
    expect(reported.manager.get('task_1')?.error?.message).toContain('IPC closed');
  });

  it('applies manager-wide defaults and stops timers when the task ends', async () => {
    const { manager, runner, clock, spawn } = watched({}, {}, { watchdog: { idleTimeoutMs: 100, maxRuntimeMs: 1000 } });
    await spawn();
    runner.run('task_1').resolve();
    await manager.wait('task_1');
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(2000);
    expect(manager.get('task_1')?.status).toBe('completed');
  });

  it('process tasks have no agent watchdog', async () => {
    const clock = new FakeClock();
    const runner = new ManualBackgroundTaskRunner({ kind: 'process' });
    const manager = new BackgroundTaskManager({ runners: [runner], clock, watchdog: { idleTimeoutMs: 10 } });
    await manager.spawn({ kind: 'process', command: 'sleep 1', cwd: '/' });
    clock.advance(1000);
    expect(manager.get('task_1')?.status).toBe('running');
  });
});
