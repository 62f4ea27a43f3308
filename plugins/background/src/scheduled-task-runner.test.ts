import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BackgroundTaskManager } from './background-task-manager.js';
import { createManagedShellProcessRunner } from './managed-shell-process-runner.js';
import { ManualBackgroundTaskRunner } from './manual-background-task-runner.js';
import { createScheduledTaskRunner, type IScheduleDriver, type TScheduleFactory } from './scheduled-task-runner.js';
import type { IBackgroundScheduledTaskRequest, TBackgroundTaskEvent } from './types.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A schedule the test fires by hand. */
class FakeSchedule implements IScheduleDriver {
  next: Date | null = new Date(Date.UTC(2030, 0, 1));
  stopped = false;
  tick!: () => void;
  nextRun() {
    return this.stopped ? null : this.next;
  }
  stop() {
    this.stopped = true;
  }
}

function setup(maxConcurrent = 4) {
  const schedule = new FakeSchedule();
  const createSchedule: TScheduleFactory = (_pattern, _options, onTick) => {
    schedule.tick = onTick;
    return schedule;
  };
  const child = new ManualBackgroundTaskRunner({ kind: 'process' });
  const events: TBackgroundTaskEvent[] = [];
  const manager = new BackgroundTaskManager({
    runners: [createScheduledTaskRunner({ runners: [child], createSchedule }), child],
    maxConcurrent,
    eventSink: (event) => events.push(event),
  });
  return { schedule, child, manager, events };
}

const scheduled = (extra: Partial<IBackgroundScheduledTaskRequest> = {}): IBackgroundScheduledTaskRequest => ({
  kind: 'scheduled',
  schedule: '*/5 * * * *',
  cwd: '/',
  task: { kind: 'process', command: 'echo tick', cwd: '/' },
  ...extra,
});

describe('createScheduledTaskRunner', () => {
  it('sleeps without a slot, wakes per fire, skips overlapping fires and finishes on the final fire', async () => {
    const { schedule, child, manager } = setup(1);
    await manager.spawn(scheduled());
    await flush();
    expect(manager.get('task_1')).toMatchObject({ status: 'sleeping', nextRunAt: Date.UTC(2030, 0, 1) });
    await manager.spawn({ kind: 'process', command: 'other', cwd: '/' });
    expect(manager.get('task_2')?.status).toBe('running'); // the sleeping task holds no slot

    schedule.tick();
    expect(manager.get('task_1')?.status).toBe('running');
    expect(child.runs.map((r) => r.taskId)).toEqual(['task_2', 'task_1-run-1']);
    schedule.tick(); // overlaps fire 1
    expect(child.runs).toHaveLength(2);
    expect(manager.get('task_1')?.status).toBe('running');
    child.run('task_1-run-1').resolve({ output: 'first' });
    await flush();
    expect(manager.get('task_1')?.status).toBe('sleeping');

    schedule.next = null; // the next fire is the last one
    schedule.tick();
    child.run('task_1-run-2').resolve({ output: 'second' });
    const final = await manager.wait('task_1');
    expect(final).toMatchObject({ status: 'completed', output: 'second', resultMetadata: { fires: 2, skippedFires: 1, failedFires: 0 } });
    const log = await manager.readLog('task_1');
    expect(log.lines).toContain('[schedule] skipped a fire: fire 1 is still running');
    expect(schedule.stopped).toBe(true);
  });

  it('completes at once when the schedule has no fire at all', async () => {
    const { schedule, manager } = setup();
    schedule.next = null;
    await manager.spawn(scheduled());
    expect(await manager.wait('task_1')).toMatchObject({ status: 'completed', resultMetadata: { fires: 0 } });
  });

  it('stops after maxRuns', async () => {
    const { schedule, child, manager } = setup();
    await manager.spawn(scheduled({ maxRuns: 1 }));
    await flush();
    schedule.tick();
    child.run('task_1-run-1').resolve({ output: 'only' });
    expect(await manager.wait('task_1')).toMatchObject({ status: 'completed', resultMetadata: { fires: 1 } });
  });

  it('records a failed fire and keeps the schedule going', async () => {
    const { schedule, child, manager } = setup();
    await manager.spawn(scheduled());
    await flush();
    schedule.tick();
    child.run('task_1-run-1').reject(new Error('exit 1'));
    await flush();
    expect(manager.get('task_1')?.status).toBe('sleeping');
    expect((await manager.readLog('task_1')).lines).toContain('[schedule] fire 1 failed: exit 1');
  });

  it('cancels the running fire with the task', async () => {
    const { schedule, child, manager } = setup();
    await manager.spawn(scheduled());
    await flush();
    schedule.tick();
    expect((await manager.cancel('task_1', 'enough')).status).toBe('cancelled');
    expect(child.run('task_1-run-1').cancelCalls).toEqual(['enough']);
    expect(schedule.stopped).toBe(true);
    schedule.tick(); // a late fire after cancel does nothing
    expect(child.runs).toHaveLength(1);
  });

  it('fails with a located validation error for a bad pattern or task kind', async () => {
    const child = new ManualBackgroundTaskRunner({ kind: 'process' });
    const manager = new BackgroundTaskManager({ runners: [createScheduledTaskRunner({ runners: [child] })] });
    expect(await manager.spawn(scheduled({ schedule: 'not a cron' }))).toMatchObject({ status: 'failed', error: { code: 'scheduled_invalid_pattern', category: 'validation' } });
    const agentTask = scheduled({ task: { kind: 'agent', agentType: 'x', prompt: 'p', cwd: '/' } });
    expect(await manager.spawn(agentTask)).toMatchObject({ status: 'failed', error: { code: 'scheduled_unknown_task_kind' } });
  });

  it.runIf(process.platform !== 'win32')('runs real croner fires of a real shell command, surviving a spawn error', async () => {
    const shell = createManagedShellProcessRunner();
    const manager = new BackgroundTaskManager({ runners: [createScheduledTaskRunner({ runners: [shell] }), shell] });
    const missing = join(tmpdir(), 'tessera-no-such-dir-xyz');
    await manager.spawn(scheduled({ schedule: '* * * * * *', maxRuns: 2, task: { kind: 'process', command: 'echo hi', cwd: missing } }));
    const final = await manager.wait('task_1');
    expect(final).toMatchObject({ status: 'completed', resultMetadata: { fires: 2, failedFires: 2 } });
    await manager.spawn(scheduled({ schedule: '* * * * * *', maxRuns: 1, task: { kind: 'process', command: 'echo hi', cwd: tmpdir() } }));
    expect(await manager.wait('task_2')).toMatchObject({ status: 'completed', output: 'hi\n' });
  });
});
