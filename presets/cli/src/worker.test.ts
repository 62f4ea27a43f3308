import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BullmqBackgroundTaskManager, startBackgroundWorker } from '@tessera/plugin-background-bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { hasRedisServer, startRedis, type TestRedis } from '../../../plugins/background-bullmq/src/testing/redis-server.test-helper.js';
import { runSubcommand } from './subcommands/subcommand.test-helper.js';
import { runDoctorCommand } from './subcommands/doctor.js';
import { redisOptions, runWorkerCommand } from './subcommands/worker.js';
import { redisBackgroundPlugin } from './serve-replicas.js';
import { BackgroundTasks } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { AgentTaskManagerToken } from '@tessera/plugin-background';
import { Redis } from 'ioredis';
import { BullmqBackgroundTaskManagerToken } from '@tessera/plugin-background-bullmq';
import { testPreset } from '@tessera/preset-test';

// `tessera worker` through the built bin: a task spawned by a client in this process runs in the
// worker process, against a real redis-server; SIGTERM stops the worker cleanly.
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');
let redis: TestRedis | undefined;
let worker: ChildProcess | undefined;
let dir: string | undefined;

afterEach(async () => {
  worker?.kill('SIGKILL');
  worker = undefined;
  await redis?.stop();
  redis = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Starts `tessera worker …` from the built bin; resolves once it says it takes `kinds`. */
async function startWorkerBin(args: readonly string[], home: string, kinds: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'worker', ...args], { env: { PATH: process.env.PATH, HOME: home, TMPDIR: tmpdir() }, stdio: ['ignore', 'pipe', 'pipe'] });
  worker = child;
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`is taking ${kinds} tasks`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${output}`)));
  });
  return { child, output: () => output };
}

describe('tessera worker: arguments', () => {
  it('reads redis:// URLs and refuses anything else with the reason', () => {
    expect(redisOptions('redis://:s3cret@cache.internal:6380/2')).toEqual({ host: 'cache.internal', port: 6380, password: 's3cret', db: 2 });
    expect(redisOptions('redis://127.0.0.1')).toEqual({ host: '127.0.0.1', port: 6379 });
    expect(redisOptions('rediss://cache.internal')).toEqual({ host: 'cache.internal', port: 6379, tls: {} });
    expect(() => redisOptions('http://x')).toThrow(/redis:\/\//);
    expect(() => redisOptions('not a url')).toThrow(/not a URL/);
    // A mistyped URL is not echoed with its password.
    expect(() => redisOptions('redis//:s3cret@cache:6379')).toThrow(/not a URL/);
    expect(() => redisOptions('redis//:s3cret@cache:6379')).not.toThrow(/s3cret/);
  });

  it('--help documents every flag, and exits 0 without touching Redis', async () => {
    const help = await runSubcommand(runWorkerCommand, ['--help'], { cwd: tmpdir(), home: tmpdir() });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: tessera worker/);
    for (const flag of ['--redis', '--queue', '--prefix', '--concurrency', '--kinds', '--global-concurrency', '--rate-limit', '--grace-ms', '--hand-back', '--max-log-lines', '--max-events', '--provider', '--model', '--permission-mode', '--cwd']) {
      expect(help.stdout).toMatch(new RegExp(`\\n  ${flag} `));
    }
    const doctor = await runSubcommand(runDoctorCommand, ['--help'], { cwd: tmpdir(), home: tmpdir() });
    expect(doctor.code).toBe(0);
    for (const flag of ['--redis', '--queue', '--prefix']) expect(doctor.stdout).toContain(flag);
  });

  it('refuses bad limits before touching Redis, naming the flag', async () => {
    const where = { cwd: tmpdir(), home: tmpdir() };
    for (const [argv, message] of [
      [['--rate-limit', '10'], /--rate-limit must look like <max>\/<ms>/],
      [['--global-concurrency', '0'], /--global-concurrency must be a whole number/],
      [['--concurrency', 'x'], /--concurrency must be a whole number/],
      [['--kinds', 'robot'], /--kinds: robot is not run by this command/],
      // shell and cron are the names for process and scheduled tasks: only robot is refused.
      [['--kinds', 'shell,agent,cron,robot'], /--kinds: robot is not run by this command/],
      [['--permission-mode', 'yolo'], /--permission-mode yolo is not a permission mode/],
      [['--max-log-lines', '0'], /--max-log-lines must be a whole number of at least 1 \(got 0\)/],
      [['--max-events', '1e5'], /--max-events must be a whole number of at least 1 \(got 1e5\)/],
      [['--redis', 'http://x'], /redis:\/\//],
    ] as const) {
      const result = await runSubcommand(runWorkerCommand, argv, where);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe.runIf(hasRedisServer)('tessera worker (real redis-server)', () => {
  it("serve's redis.background: the server's background tasks go through Redis to a worker, on the same prefix and queue", async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'tessera-serve-bg-'));
    const url = `redis://127.0.0.1:${redis.port}`;
    expect(await redisBackgroundPlugin({ url })).toBeUndefined();
    const plugin = (await redisBackgroundPlugin({ url, prefix: 'acme:bg', background: { queue: 'jobs' } }))!;
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [plugin] }) });
    const running = await startBackgroundWorker({ connection: redisOptions(url), prefix: 'acme:bg', queue: 'jobs', kinds: ['process'], shell: { killGraceMs: 200 } });
    try {
      const tasks = kernel.get(BackgroundTasks);
      // Subagent jobs stay in the server unless background.agents is set.
      expect(kernel.getOptional(AgentTaskManagerToken)).toBeUndefined();
      const ticket = await tasks.spawn({ kind: 'process', command: 'echo from-the-worker', cwd: dir, sessionId: 's1' });
      const manager = kernel.get(BullmqBackgroundTaskManagerToken);
      expect(await manager.wait(ticket.id)).toMatchObject({ status: 'completed', exitCode: 0 });
      expect((await tasks.readOutput!(ticket.id, 0, 's1')).lines).toContain('[stdout] from-the-worker');
      const peek = new Redis({ host: '127.0.0.1', port: redis.port });
      try {
        const keys = await peek.keys('*');
        expect(keys.length).toBeGreaterThan(0);
        expect(keys.filter((key) => !key.startsWith('acme:bg:'))).toEqual([]);
      } finally {
        peek.disconnect();
      }
    } finally {
      await running.shutdown({ graceMs: 0 });
      await kernel.shutdown();
    }
    const withAgents = (await redisBackgroundPlugin({ url, background: { agents: true } }))!;
    expect(withAgents.provides).toContain(AgentTaskManagerToken);
    await expect(redisBackgroundPlugin({ url: 'http://x', background: true })).rejects.toThrow(/redis\.url \(or --redis\)/);
  });

  it('runs a task another process spawned, and stops on SIGTERM', async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'tessera-worker-'));
    const { child, output } = await startWorkerBin(['--redis', `redis://127.0.0.1:${redis.port}`, '--queue', 'cli-test', '--grace-ms', '1000'], dir, 'process, scheduled');
    const client = new BullmqBackgroundTaskManager({ connection: { host: '127.0.0.1', port: redis.port }, queue: 'cli-test' });
    try {
      const task = await client.spawn({ kind: 'process', command: 'echo from-the-worker', cwd: dir });
      const done = await client.wait(task.id);
      expect(done.status).toBe('completed');
      expect((await client.readLog(task.id)).lines.join('\n')).toContain('from-the-worker');
    } finally {
      await client.shutdown();
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('Worker stopped.');
  }, 30_000);

  it('--global-concurrency and --rate-limit reach the queue: one task at a time across workers, at most <max> starts per window', async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'tessera-worker-'));
    const url = `redis://127.0.0.1:${redis.port}`;
    await startWorkerBin(['--redis', url, '--queue', 'limits', '--kinds', 'process', '--concurrency', '4', '--global-concurrency', '1', '--rate-limit', '2/1000'], dir, 'process');
    const { Queue } = await import('bullmq');
    const queue = new Queue('limits-process', { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'tessera:bull' });
    const client = new BullmqBackgroundTaskManager({ connection: { host: '127.0.0.1', port: redis.port }, queue: 'limits', kinds: ['process'] });
    try {
      expect(await queue.getGlobalConcurrency()).toBe(1);
      const tasks = await Promise.all([1, 2, 3, 4].map((n) => client.spawn({ kind: 'process', command: `sleep 0.05; echo ${n}`, cwd: dir! })));
      const ended = await Promise.all(tasks.map((task) => client.wait(task.id)));
      expect(ended.every((state) => state.status === 'completed')).toBe(true);
      const runs = ended.map((state) => [state.startedAt!, state.completedAt!] as const).sort((a, b) => a[0] - b[0]);
      // Global concurrency 1 (the worker alone would run 4 at once): no run starts before the one before it ended.
      for (let index = 1; index < runs.length; index += 1) expect(runs[index]![0]).toBeGreaterThanOrEqual(runs[index - 1]![1]);
      // Two starts per second: the third start waits for the next window (unthrottled, all four start within ~0.3 s).
      expect(runs[2]![0] - runs[0]![0]).toBeGreaterThanOrEqual(900);
    } finally {
      await client.shutdown();
      await queue.close();
    }
  }, 30_000);

  it('says which Redis it could not reach', async () => {
    const child = spawn(process.execPath, [BIN, 'worker', '--redis', 'redis://127.0.0.1:1'], { env: { PATH: process.env.PATH, HOME: tmpdir(), TMPDIR: tmpdir() }, stdio: ['ignore', 'pipe', 'pipe'] });
    worker = child;
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('127.0.0.1:1');
  }, 30_000);

  it('tessera doctor --redis reports the server, queue depths and the workers; an unreachable one fails', async () => {
    redis = await startRedis();
    const home = mkdtempSync(join(tmpdir(), 'tessera-doctor-'));
    dir = home;
    const connection = { host: '127.0.0.1', port: redis.port };
    const running = await startBackgroundWorker({ connection, queue: 'doc', kinds: ['process'], concurrency: 1, workerId: 'doctor-test-worker' });
    const client = new BullmqBackgroundTaskManager({ connection, queue: 'doc' });
    try {
      const blocker = await client.spawn({ kind: 'process', command: 'sleep 5', cwd: home });
      await client.spawn({ kind: 'process', command: 'true', cwd: home });
      for (;;) {
        if ((await client.fetch(blocker.id))?.status === 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const result = await runSubcommand(runDoctorCommand, ['--json', '--no-network', '--redis', `redis://127.0.0.1:${redis.port}`, '--queue', 'doc'], { cwd: home, home });
      const report = JSON.parse(result.stdout) as { redis: { reachable: boolean; version: string; queues: Array<{ kind: string; waiting: number; active: number; workers: string[] }> } };
      expect(report.redis).toMatchObject({ reachable: true });
      expect(report.redis.version).toMatch(/^\d+\.\d+/);
      expect(report.redis.queues.find((queue) => queue.kind === 'process')).toMatchObject({ waiting: 1, active: 1, workers: ['doctor-test-worker'] });
      const text = await runSubcommand(runDoctorCommand, ['--no-network', '--redis', `redis://127.0.0.1:${redis.port}`, '--queue', 'doc'], { cwd: home, home });
      expect(text.stdout).toMatch(/doc-process: 1 waiting, 1 active, 0 delayed, 0 failed; workers: doctor-test-worker/);
    } finally {
      await running.shutdown({ graceMs: 0 });
      await client.shutdown();
    }
    const down = await runSubcommand(runDoctorCommand, ['--json', '--no-network', '--redis', 'redis://127.0.0.1:1'], { cwd: home, home });
    expect(down.code).toBe(1);
    expect(JSON.parse(down.stdout).redis).toMatchObject({ reachable: false, error: expect.stringContaining('127.0.0.1:1') });
  }, 30_000);

  it('--kinds agent runs subagent jobs as sessions of the worker\'s own kernel (demo model, acceptEdits)', async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'tessera-worker-agent-'));
    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'notes.md'), '# Notes\n\nThe worker ran this agent.\n');
    // The worker's own settings decide what its agents may do: nobody can answer an ask there.
    mkdirSync(join(project, '.tessera'));
    writeFileSync(join(project, '.tessera', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(pwd)'] } }));
    const { child, output } = await startWorkerBin(['--redis', `redis://127.0.0.1:${redis.port}`, '--queue', 'agents', '--kinds', 'agent', '--provider', 'demo', '--permission-mode', 'acceptEdits', '--cwd', project], dir, 'agent');
    const client = new BullmqBackgroundTaskManager({ connection: { host: '127.0.0.1', port: redis.port }, queue: 'agents' });
    try {
      const task = await client.spawn({ kind: 'agent', agentType: 'general-purpose', prompt: 'Summarise the notes in this folder.', cwd: project, parentSessionId: 'parent-1' });
      const done = await client.wait(task.id);
      expect(done, output()).toMatchObject({ status: 'completed', kind: 'agent' });
      // The demo model read the note and wrote its summary with the worker's tools, in the task's cwd.
      expect(readFileSync(join(project, 'SUMMARY.md'), 'utf8')).toContain('- Notes (5 words)');
      expect(done.output).not.toBe('');
    } finally {
      await client.shutdown();
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
