import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IBackgroundTaskState } from '@tessera/plugin-background';
import { describe, expect, it, vi } from 'vitest';
import { startBackgroundWorker, type BackgroundWorkerOptions } from './background-worker.js';
import { BullmqBackgroundTaskManager } from './bullmq-background-task-manager.js';
import { hasRedisServer, liveGroupMembers, runningWithPid, until, useRedisSuite } from './testing/redis-server.test-helper.js';

const here = dirname(fileURLToPath(import.meta.url));
const CHILD = join(here, 'testing', 'worker-child.mjs');

const suite = useRedisSuite('tessera-bullmq-proc-', { build: true });
let queueNumber = 0;

function setup() {
  const base = { connection: { host: '127.0.0.1', port: suite.redis.port }, queue: `p${++queueNumber}` };
  const fast = { lockDurationMs: 1000, stalledIntervalMs: 300, shell: { killGraceMs: 200 } };
  /** A worker in its own Node process, running the built package. */
  const childWorker = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [CHILD, JSON.stringify({ ...base, ...fast })], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    suite.cleanups.push(() => {
      child.kill('SIGKILL');
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`worker child exited (${code}): ${stderr}`)));
    });
    return child;
  };
  const worker = async (more: Partial<BackgroundWorkerOptions> = {}) => {
    const started = await startBackgroundWorker({ ...base, ...fast, ...more });
    suite.cleanups.push(() => started.shutdown({ graceMs: 0 }));
    return started;
  };
  const client = (retries = 0) => {
    const manager = new BullmqBackgroundTaskManager({ ...base, retries });
    suite.cleanups.push(() => manager.shutdown());
    return manager;
  };
  return { childWorker, worker, client, base };
}

/** The task once it reached a terminal state (a schedule left sleeping or running for good times out). */
const ended = (manager: BullmqBackgroundTaskManager, id: string, timeoutMs = 10_000) =>
  until(async () => {
    const state = await manager.fetch(id);
    return state && ['completed', 'failed', 'cancelled'].includes(state.status) ? state : undefined;
  }, `task ${id} ended`, timeoutMs) as Promise<IBackgroundTaskState>;

describe.runIf(hasRedisServer && process.platform === 'linux')('BullMQ worker in another process (real redis-server)', () => {
  it('runs a task spawned here in a worker process; cancel from here kills its process group there', async () => {
    const { childWorker, client } = setup();
    await childWorker();
    const manager = client();
    const echo = await manager.spawn({ kind: 'process', command: 'echo from-child; echo $$', cwd: suite.dir });
    const done = await manager.wait(echo.id);
    expect(done).toMatchObject({ status: 'completed', exitCode: 0 });
    const lines = (await manager.readLog(echo.id)).lines;
    expect(lines[0]).toBe('[stdout] from-child');
    expect(Number(lines[1]!.replace('[stdout] ', ''))).not.toBe(process.pid);

    const sleeper = await manager.spawn({ kind: 'process', command: 'sleep 30 & sleep 30; wait', cwd: suite.dir });
    const running = await runningWithPid(manager, sleeper.id);
    await until(() => liveGroupMembers(running.pid!) > 1 || undefined, 'sleep group up');
    expect(await manager.cancel(sleeper.id, 'from another process')).toMatchObject({ status: 'cancelled', cancelReason: 'from another process' });
    await until(() => liveGroupMembers(running.pid!) === 0 || undefined, 'sleep group killed');
  });

  it('get, list, subscribe, readLog, wait, remove and close from clients in this process, the worker in another; cancelOnShutdown ends the open tasks', async () => {
    const { childWorker, client, base } = setup();
    await childWorker();
    const spawner = client();
    const observer = client();
    await observer.start();
    const seen: string[] = [];
    observer.subscribe((event) => seen.push(`${event.type}:${event.taskId}`));
    const task = await spawner.spawn({ kind: 'process', command: 'echo one; echo two', cwd: suite.dir });
    expect(await observer.wait(task.id)).toMatchObject({ status: 'completed', output: 'one\ntwo\n' });
    // The observer's mirror follows the worker's commits through the event stream.
    await until(() => (observer.get(task.id)?.status === 'completed' ? true : undefined), 'the mirror caught up');
    expect(observer.list({ status: 'completed' }).map((state) => state.id)).toContain(task.id);
    expect((await observer.listAll()).map((state) => state.id)).toContain(task.id);
    const mine = seen.filter((line) => line.endsWith(`:${task.id}`)).map((line) => line.split(':')[0]);
    expect(mine[0]).toBe('background_task_created');
    expect(mine.at(-1)).toBe('background_task_completed');
    expect(mine.indexOf('background_task_started')).toBeGreaterThan(0);
    expect((await observer.readLog(task.id)).lines.slice(0, 2)).toEqual(['[stdout] one', '[stdout] two']);
    // Removed by one client: gone for both, with a closed event.
    expect((await observer.remove(task.id)).id).toBe(task.id);
    expect(await spawner.fetch(task.id)).toBeUndefined();
    await until(() => (seen.includes(`background_task_closed:${task.id}`) ? true : undefined), 'closed event');
    await expect(spawner.readLog(task.id)).rejects.toThrow(task.id);
    // The synchronous close of the contract: from the mirror, the record removed behind it.
    const second = await spawner.spawn({ kind: 'process', command: 'true', cwd: suite.dir });
    await observer.wait(second.id);
    await until(() => (observer.get(second.id)?.status === 'completed' ? true : undefined), 'mirror of the second task');
    expect(observer.close(second.id).id).toBe(second.id);
    await until(async () => ((await spawner.fetch(second.id)) === undefined ? true : undefined), 'closed in Redis');
    // A client that owns its tasks ends what is still open when it shuts down.
    const owner = new BullmqBackgroundTaskManager({ ...base, cancelOnShutdown: true });
    const long = await owner.spawn({ kind: 'process', command: 'sleep 30', cwd: suite.dir });
    await runningWithPid(observer, long.id);
    await owner.shutdown('client gone');
    expect(await observer.fetch(long.id)).toMatchObject({ status: 'cancelled', cancelReason: 'client gone' });
  });

  it('a worker killed with SIGKILL mid-task: the task fails with stale_worker, is not run again, and its orphaned process group is killed', async () => {
    const { childWorker, worker, client } = setup();
    const child = await childWorker();
    const manager = client();
    const task = await manager.spawn({ kind: 'process', command: 'echo started; sleep 30', cwd: suite.dir });
    const running = await runningWithPid(manager, task.id);
    suite.cleanups.push(() => void process.kill(-running.pid!, 'SIGKILL'));
    await until(async () => (await manager.readLog(task.id)).lines.includes('[stdout] started') || undefined, 'log copied to Redis');
    child.kill('SIGKILL');
    await worker(); // a surviving worker notices the expired lock
    const failed = await manager.wait(task.id);
    expect(failed).toMatchObject({ status: 'failed', timeoutReason: 'stale_worker', error: { code: 'background_task_timeout', category: 'timeout' } });
    const log = (await manager.readLog(task.id)).lines;
    expect(log.filter((line) => line === '[stdout] started')).toHaveLength(1);
    // The dead worker's `sleep 30` group was left running; the surviving worker on this host killed it.
    await until(() => liveGroupMembers(running.pid!) === 0 || undefined, 'orphaned process group reaped');
    expect(log.some((line) => line.includes(`killed process group ${running.pid}, left running by the worker that died`))).toBe(true);
  });

  it('a worker killed mid-task with a retry budget: the task runs again on another worker and completes', async () => {
    const { childWorker, worker, client } = setup();
    const child = await childWorker();
    const manager = client(1);
    const task = await manager.spawn({ kind: 'process', command: 'echo attempt; sleep 1', cwd: suite.dir });
    const running = await runningWithPid(manager, task.id);
    suite.cleanups.push(() => void process.kill(-running.pid!, 'SIGKILL'));
    await until(async () => (await manager.readLog(task.id)).lines.includes('[stdout] attempt') || undefined, 'log copied to Redis');
    child.kill('SIGKILL');
    await worker();
    const done = await manager.wait(task.id);
    expect(done.status).toBe('completed');
    const log = (await manager.readLog(task.id)).lines;
    expect(log.filter((line) => line === '[stdout] attempt')).toHaveLength(2);
    expect(log.some((line) => line.startsWith('[worker] attempt 2'))).toBe(true);
  });

  it('a worker that stalls past its lock and then resumes neither ends nor writes over the attempt that runs now', async () => {
    const { childWorker, worker, client } = setup();
    const child = await childWorker();
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const manager = client(1);
    const task = await manager.spawn({ kind: 'process', command: 'echo attempt; sleep 4; echo finished-ok', cwd: suite.dir });
    const first = await runningWithPid(manager, task.id);
    suite.cleanups.push(() => void process.kill(-first.pid!, 'SIGKILL'));
    const log = async () => (await manager.readLog(task.id)).lines;
    await until(async () => (await log()).includes('[stdout] attempt') || undefined, 'log copied to Redis');
    // Stopped, not dead: its lock expires, a surviving worker kills its process group and runs attempt 2.
    child.kill('SIGSTOP');
    await worker();
    await until(async () => (await log()).some((line) => line.startsWith('[worker] attempt 2')) || undefined, 'attempt 2 started');
    await until(() => liveGroupMembers(first.pid!) === 0 || undefined, 'the first attempt killed');
    // Back, it finds its run killed and its job's lock gone (BullMQ reports that once the run ended):
    // that end, and its log, must not reach the task.
    child.kill('SIGCONT');
    await until(() => (stderr.includes('worker error') ? true : undefined), 'the stalled worker finished its stale run');
    expect(await manager.wait(task.id)).toMatchObject({ status: 'completed', exitCode: 0 });
    const lines = await log();
    expect(lines.filter((line) => line === '[stdout] attempt')).toHaveLength(2);
    expect(lines.filter((line) => line === '[stdout] finished-ok')).toHaveLength(1);
    expect(lines.some((line) => line.includes('SIGKILL'))).toBe(false);
  });

  it('a cron tick that comes while the previous fire still runs is skipped and recorded, not run beside it', async () => {
    const { childWorker, worker, client } = setup();
    await childWorker();
    await worker();
    const manager = client();
    const task = await manager.spawn({ kind: 'scheduled', schedule: '* * * * * *', cwd: suite.dir, task: { kind: 'process', command: 'sleep 2.2; echo slow', cwd: suite.dir } });
    const log = async () => (await manager.readLog(task.id)).lines;
    const skippedLine = await until(async () => (await log()).find((line) => /^\[schedule\] skipped tick \S+: the previous fire is still running \(1 skipped\)$/.test(line)), 'a skipped tick', 10_000);
    expect(skippedLine).toBeDefined();
    await manager.cancel(task.id, 'enough');
    const lines = await log();
    // Fires never overlap: each start comes after the previous fire's end.
    const events = lines.filter((line) => /^\[schedule\] fire \d+ (started|completed|failed)/.test(line)).map((line) => (line.includes('started') ? 'start' : 'end'));
    for (let index = 1; index < events.length; index += 1) if (events[index] === 'start') expect(events[index - 1]).toBe('end');
  });

  it('a cron task fires once per tick across two workers, then stops when cancelled', async () => {
    const { childWorker, worker, client } = setup();
    await childWorker();
    await worker();
    const manager = client();
    const task = await manager.spawn({ kind: 'scheduled', schedule: '* * * * * *', cwd: suite.dir, task: { kind: 'process', command: 'echo tick', cwd: suite.dir } });
    expect(task.status).toBe('sleeping');
    const log = async () => (await manager.readLog(task.id)).lines;
    await until(async () => (await log()).filter((line) => /^\[schedule\] fire \d+ completed$/.test(line)).length >= 3 || undefined, 'three fires', 10_000);
    const cancelled = await manager.cancel(task.id, 'enough');
    expect(cancelled.status).toBe('cancelled');
    const lines = await log();
    const ticks = lines.filter((line) => line.includes('started (tick')).map((line) => /tick (\S+)\)/.exec(line)![1]);
    expect(new Set(ticks).size).toBe(ticks.length);
    // A fire the cancel caught mid-way may not have printed; every completed one printed once.
    const completed = lines.filter((line) => /^\[schedule\] fire \d+ completed$/.test(line)).length;
    expect(lines.filter((line) => line === '[stdout] tick').length).toBeGreaterThanOrEqual(completed);
    expect(lines.filter((line) => line === '[stdout] tick').length).toBeLessThanOrEqual(ticks.length);
    // No more fires after the cancel.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await log()).filter((line) => line.includes('started (tick'))).toHaveLength(ticks.length);
  });
  it('a worker killed with SIGKILL mid-fire: the lost fire is recorded, its process group killed, and the schedule goes on', async () => {
    const { childWorker, worker, client } = setup();
    const child = await childWorker();
    const manager = client();
    const task = await manager.spawn({ kind: 'scheduled', schedule: '* * * * * *', cwd: suite.dir, task: { kind: 'process', command: 'echo fire-$$; sleep 30', cwd: suite.dir } });
    const log = async () => (await manager.readLog(task.id)).lines;
    const pidLine = await until(async () => (await log()).find((line) => line.startsWith('[stdout] fire-')), 'the first fire printed its pid', 10_000);
    const pid = Number(pidLine.replace('[stdout] fire-', ''));
    suite.cleanups.push(() => void process.kill(-pid, 'SIGKILL'));
    child.kill('SIGKILL');
    await worker();
    // The tick comes back once the dead worker's lock expired: the fire is lost, not "still running".
    const lost = await until(async () => (await log()).find((line) => line.includes('was lost: the worker running it stopped (stale_worker')), 'the lost fire recorded', 15_000);
    expect(lost).toMatch(/^\[schedule\] the fire of tick \S+ was lost/);
    await until(() => liveGroupMembers(pid) === 0 || undefined, 'the orphaned fire reaped', 10_000);
    // The schedule is alive: a later tick starts a new fire on the surviving worker.
    await until(async () => (await log()).filter((line) => /^\[schedule\] fire \d+ started/.test(line)).length >= 2 || undefined, 'a fire after the lost one', 10_000);
    const cancelled = await manager.cancel(task.id, 'enough');
    expect(cancelled.status).toBe('cancelled');
  });

  it('a worker stopped while a cron fire runs stops the fire, not the schedule (cancel and hand-back)', async () => {
    for (const unfinished of ['cancel', 'hand-back'] as const) {
      const { worker, client } = setup();
      const first = await worker();
      const manager = client();
      const task = await manager.spawn({ kind: 'scheduled', schedule: '* * * * * *', cwd: suite.dir, task: { kind: 'process', command: 'sleep 1.5; echo slept', cwd: suite.dir } });
      const log = async () => (await manager.readLog(task.id)).lines;
      await until(async () => (await log()).some((line) => /^\[schedule\] fire 1 started/.test(line)) || undefined, 'fire 1 running', 10_000);
      await first.shutdown({ graceMs: 0, unfinished });
      expect(await log()).toContain('[schedule] fire 1 stopped: worker shutdown (the worker shut down; the schedule goes on)');
      expect((await manager.fetch(task.id))?.status).toBe('sleeping');
      await worker();
      await until(async () => (await log()).some((line) => /^\[schedule\] fire \d+ completed$/.test(line)) || undefined, `a later fire completes (${unfinished})`, 10_000);
      expect((await manager.cancel(task.id, 'enough')).status).toBe('cancelled');
    }
  });

  it('a dated schedule whose only tick a worker takes before the client committed its start fires and completes', async () => {
    const { worker, client } = setup();
    await worker();
    const manager = client();
    // The client's start commit (queued -> running -> sleeping) is held until the worker has
    // handled the tick: the race the first tick can win, made certain.
    const update = manager.store.update.bind(manager.store);
    vi.spyOn(manager.store, 'update').mockImplementationOnce(async (taskId, mutate, known) => {
      await until(async () => ((await manager.store.readLog(taskId)).totalLines > 0 ? true : undefined), 'the worker handled the tick');
      return update(taskId, mutate, known);
    });
    const task = await manager.spawn({ kind: 'scheduled', schedule: new Date(Date.now() - 1000).toISOString(), cwd: suite.dir, task: { kind: 'process', command: 'echo dated', cwd: suite.dir } });
    expect(await ended(manager, task.id, 5_000)).toMatchObject({ status: 'completed', resultMetadata: { fires: 1, skippedFires: 0 } });
    const lines = (await manager.readLog(task.id)).lines;
    expect(lines).toContain('[stdout] dated');
    expect(lines.some((line) => line.includes('skipped tick'))).toBe(false);
  });

  it('a cron task with maxRuns completes after that many fires; skipped ticks do not count', async () => {
    const { worker, client } = setup();
    await worker();
    const manager = client();
    // Each fire outlasts a tick, so the tick after it is skipped.
    const task = await manager.spawn({ kind: 'scheduled', schedule: '* * * * * *', maxRuns: 2, cwd: suite.dir, task: { kind: 'process', command: 'sleep 1.6', cwd: suite.dir } });
    const done = await ended(manager, task.id);
    expect(done).toMatchObject({ status: 'completed', resultMetadata: { fires: 2, failedFires: 0 } });
    expect(Number(done.resultMetadata!.skippedFires)).toBeGreaterThanOrEqual(1);
    expect(await manager.queue('scheduled').getJobScheduler(task.id)).toBeUndefined();
  });

  it('a cron task cancelled while the worker of its fire is dead ends cancelled when the tick comes back, and the fire is reaped', async () => {
    const { childWorker, worker, base } = setup();
    const child = await childWorker();
    const manager = new BullmqBackgroundTaskManager({ ...base, cancelTimeoutMs: 300 });
    suite.cleanups.push(() => manager.shutdown());
    const task = await manager.spawn({ kind: 'scheduled', schedule: '* * * * * *', cwd: suite.dir, task: { kind: 'process', command: 'echo fire-$$; sleep 30', cwd: suite.dir } });
    const log = async () => (await manager.readLog(task.id)).lines;
    const pidLine = await until(async () => (await log()).find((line) => line.startsWith('[stdout] fire-')), 'the first fire printed its pid', 10_000);
    const pid = Number(pidLine.replace('[stdout] fire-', ''));
    suite.cleanups.push(() => void process.kill(-pid, 'SIGKILL'));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // Nobody runs the fire any more: the cancel finds it running and times out waiting for its end.
    expect((await manager.cancel(task.id, 'user cancel')).status).toBe('running');
    await worker();
    expect(await ended(manager, task.id)).toMatchObject({ status: 'cancelled', cancelReason: 'user cancel' });
    await until(() => liveGroupMembers(pid) === 0 || undefined, 'the orphaned fire reaped', 5_000);
    expect((await log()).some((line) => /^\[schedule\] the fire of tick \S+ was lost: .*the task was cancelled meanwhile$/.test(line))).toBe(true);
  });

  it('a worker keeps the log lines its maxLogLines says, as the client does', async () => {
    const { worker, client } = setup();
    await worker({ maxLogLines: 5 });
    const manager = client();
    const task = await manager.spawn({ kind: 'process', command: 'seq 1 60', cwd: suite.dir });
    expect((await manager.wait(task.id)).status).toBe('completed');
    const page = await manager.readLog(task.id);
    expect(page.lines).toEqual(['[stdout] 57', '[stdout] 58', '[stdout] 59', '[stdout] 60', '[exit] exit code 0']);
  });
  it('a per-kind concurrency object limits that kind only', async () => {
    const { worker, client } = setup();
    await worker({ concurrency: { process: 1, scheduled: 2 } });
    const manager = client();
    const tasks = await Promise.all([1, 2, 3].map(() => manager.spawn({ kind: 'process', command: 'sleep 0.3', cwd: suite.dir })));
    const ended = await Promise.all(tasks.map((task) => manager.wait(task.id)));
    expect(ended.every((state) => state.status === 'completed')).toBe(true);
    // One at a time: each run starts after the one before it ended.
    const runs = ended.map((state) => [state.startedAt!, state.completedAt!] as const).sort((a, b) => a[0] - b[0]);
    for (let index = 1; index < runs.length; index += 1) expect(runs[index]![0]).toBeGreaterThanOrEqual(runs[index - 1]![1]);
  });

  it('send from this process reaches the task the worker process runs (shell stdin); refused before it runs and after it ended', async () => {
    const { childWorker, client } = setup();
    const manager = client();
    const task = await manager.spawn({ kind: 'process', command: 'read line; echo "got:$line"', cwd: suite.dir });
    // No worker yet: queued, so nobody can take the input.
    await expect(manager.send(task.id, 'too early\n')).rejects.toMatchObject({ code: 'background_send_unsupported' });
    await childWorker();
    await runningWithPid(manager, task.id);
    await manager.send(task.id, 'across processes\n');
    expect(await manager.wait(task.id)).toMatchObject({ status: 'completed', output: 'got:across processes\n' });
    await expect(manager.send(task.id, 'late\n')).rejects.toMatchObject({ code: 'background_task_not_running' });
  });
});
