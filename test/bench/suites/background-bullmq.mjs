#!/usr/bin/env node
// Background tasks on BullMQ + Redis (plugins/background-bullmq, built package), against a
// real redis-server started here on a free loopback port.
//
//   npm run build && node --expose-gc test/bench/suites/background-bullmq.mjs [--quick]
//
// 1. Throughput: 10,000 no-op agent tasks spawned from this process and run by two worker
//    processes (test/bench/suites/bullmq/worker.mjs): tasks/s from the first spawn to the last
//    completion event, and p99 spawn -> completed-event latency. The in-process runtime
//    (BackgroundTaskManager, same no-op runner) runs the same batch in the same run.
// 2. Event delivery across processes: tasks spawned one at a time; for each
//    background_task_completed event, the time from the worker's commit timestamp to its
//    arrival here. Both ends read the machine's one monotonic clock (process.hrtime), mapped
//    to wall time by an offset this process passes to the workers: each process's own
//    `performance.timeOrigin` is fixed at its start and can differ from another's by a
//    millisecond or more (a p99 of -0.79 ms was seen), which the delivery times are not far above.
//
// Without /usr/bin/redis-server (or TESSERA_REDIS_SERVER) the suite reports itself skipped.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environment, fmt, parseArgs, quantile, table, target, targetLine, writeResults } from '../lib/common.mjs';
import { hasRedisServer, REDIS_SERVER, startRedisServer } from '@tessera/test-servers';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const TASKS = quick ? 3_000 : 10_000;
const EVENT_TASKS = quick ? 300 : 1_000;
const WINDOW = 400; // spawns in flight from the client
const WORKER_CONCURRENCY = 64;
// Wall-clock milliseconds from the monotonic clock that every process on the machine shares;
// the workers get the same offset, so their timestamps and ours are on one clock.
const CLOCK_OFFSET = performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6;
const now = () => Number(process.hrtime.bigint()) / 1e6 + CLOCK_OFFSET;
const here = dirname(fileURLToPath(import.meta.url));

if (!hasRedisServer) {
  const reason = `${REDIS_SERVER} not found (apt-get install redis-server, or set TESSERA_REDIS_SERVER)`;
  console.log(`background-bullmq: skipped: ${reason}`);
  writeResults('background-bullmq', { environment: environment(), skipped: reason, targets: [] });
  process.exit(0);
}

const { BullmqBackgroundTaskManager } = await import('@tessera/plugin-background-bullmq');
const { BackgroundTaskManager, ManualBackgroundTaskRunner } = await import('@tessera/plugin-background');

const request = () => ({ kind: 'agent', agentType: 'noop', prompt: 'noop', cwd: '/' });

/** CPU seconds (user + system) a process has used so far (Linux /proc; 0 elsewhere). */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function startWorker(port, queue) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(process.env.BENCH_WORKER_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_PROF}`] : []), join(here, 'bullmq', 'worker.mjs'), JSON.stringify({ port, queue, concurrency: WORKER_CONCURRENCY, clockOffset: CLOCK_OFFSET })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let ready = false;
    child.stdout.on('data', (chunk) => {
      if (!chunk.toString().includes('ready')) return;
      ready = true;
      resolve(child);
    });
    child.once('exit', (code, signal) => {
      if (!ready) reject(new Error(`bench worker exited (${code ?? signal}) before it was ready`));
      else if (signal !== 'SIGKILL' && !stopping) {
        console.error(`background-bullmq: a worker process died (${code ?? signal}); the run is void.`);
        process.exit(1);
      }
    });
  });
}

/** Spawns `count` tasks with at most WINDOW in flight; resolves when every completion was seen. */
async function runBatch(manager, count, onCompleted) {
  const spawnedAt = new Map();
  const latencies = [];
  let firstSpawn = Infinity;
  let lastDone = 0;
  let done = 0;
  let resolveAll;
  const all = new Promise((resolve) => (resolveAll = resolve));
  const early = new Map(); // completions that arrived before spawn() returned the id
  const finish = (id, at) => {
    const started = spawnedAt.get(id);
    if (started === undefined) return void early.set(id, at);
    latencies.push(at - started);
    lastDone = Math.max(lastDone, at);
    if (++done === count) resolveAll();
  };
  const off = onCompleted(finish);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      const at = now();
      firstSpawn = Math.min(firstSpawn, at);
      const state = await manager.spawn(request());
      spawnedAt.set(state.id, at);
      if (early.has(state.id)) finish(state.id, early.get(state.id));
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, lane));
  await all;
  off();
  return { tasksPerSecond: (count / (lastDone - firstSpawn)) * 1000, p99: quantile(latencies, 0.99), p50: quantile(latencies, 0.5) };
}

/**
 * BullMQ alone: the same number of no-op jobs through two raw BullMQ worker processes, added
 * from here with the same spawns in flight. What this machine allows before any task layer.
 */
async function runRawBullmq(port, count) {
  const { Queue } = await import('bullmq');
  const counts = [0, 0];
  let wake;
  const children = await Promise.all(counts.map((_, index) => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'bullmq', 'raw-worker.mjs'), JSON.stringify({ port, queue: 'raw', concurrency: WORKER_CONCURRENCY })], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk) => {
      const text = chunk.toString();
      if (text.includes('ready')) resolve(child);
      const last = [...text.matchAll(/done (\d+)/g)].at(-1);
      if (last) counts[index] = Number(last[1]);
      wake?.();
    });
    child.once('exit', (code) => reject(new Error(`raw BullMQ worker exited (${code})`)));
  })));
  const queue = new Queue('raw', { connection: { host: '127.0.0.1', port } });
  const batch = async (n) => {
    const target = counts[0] + counts[1] + n;
    const started = now();
    let next = 0;
    await Promise.all(Array.from({ length: WINDOW }, async () => {
      while (next < n) {
        next += 1;
        await queue.add('agent', { taskId: 'noop' }, { removeOnComplete: true, removeOnFail: { count: 1000 } });
      }
    }));
    while (counts[0] + counts[1] < target) await new Promise((resolve) => (wake = resolve));
    return (n / (now() - started)) * 1000;
  };
  try {
    await batch(500);
    const pids = { client: process.pid, redis: redis.pid, worker1: children[0].pid, worker2: children[1].pid };
    const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
    const tasksPerSecond = await batch(count);
    const cpuPerTaskMs = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, ((cpuSeconds(pid) - before[name]) * 1000) / count]));
    return { tasksPerSecond, cpuPerTaskMs };
  } finally {
    await queue.close();
    for (const child of children) {
      child.removeAllListeners('exit');
      child.kill('SIGTERM');
    }
  }
}

// ---------------------------------------------------------------- 1. throughput

let stopping = false;
const redis = await startRedisServer();
const workers = [];
const results = {};
try {
  const queue = 'bench';
  workers.push(await startWorker(redis.port, queue), await startWorker(redis.port, queue));
  const manager = new BullmqBackgroundTaskManager({ connection: { host: '127.0.0.1', port: redis.port }, queue, kinds: ['agent'], maxEvents: 200_000 });
  await manager.start();
  const onCompleted = (finish) =>
    manager.subscribe((event) => {
      if (event.type === 'background_task_completed') finish(event.taskId, now());
    });
  // Warm-up: connections, Lua scripts loaded, JIT.
  await runBatch(manager, 500, onCompleted);
  const pids = { client: process.pid, redis: redis.pid, worker1: workers[0].pid, worker2: workers[1].pid };
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  results.bullmq = await runBatch(manager, TASKS, onCompleted);
  // Where the CPU went, per task (ms): shows which process limits the throughput on this machine.
  results.cpuPerTaskMs = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, ((cpuSeconds(pid) - before[name]) * 1000) / TASKS]));

  const local = new BackgroundTaskManager({ runners: [new ManualBackgroundTaskRunner({ kind: 'agent', autoResolve: true })], maxConcurrent: WORKER_CONCURRENCY * 2 });
  const localCompleted = (finish) =>
    local.subscribe((event) => {
      if (event.type === 'background_task_completed') finish(event.taskId, now());
    });
  await runBatch(local, 500, localCompleted);
  results.inProcess = await runBatch(local, TASKS, localCompleted);

  results.rawBullmq = await runRawBullmq(redis.port, TASKS);

  // ------------------------------------------------------------ 2. event delivery
  const delivery = [];
  const offDelivery = manager.subscribe((event) => {
    if (event.type === 'background_task_completed') delivery.push(now() - event.task.completedAt);
  });
  for (let i = 0; i < EVENT_TASKS; i += 1) {
    await manager.spawn(request());
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  while (delivery.length < EVENT_TASKS) await new Promise((resolve) => setTimeout(resolve, 20));
  offDelivery();
  // On one clock an event cannot arrive before it was committed: a negative time means the clocks differ, and the figure is void.
  if (Math.min(...delivery) < 0) {
    console.error(`background-bullmq: an event arrived ${fmt(-Math.min(...delivery), 3)} ms before its commit time; the clocks of the processes differ, the run is void.`);
    process.exit(1);
  }
  results.delivery = { p50: quantile(delivery, 0.5), p99: quantile(delivery, 0.99), max: Math.max(...delivery) };
  await manager.shutdown();
} finally {
  stopping = true;
  await Promise.all(workers.map((worker) => new Promise((resolve) => {
    if (worker.exitCode !== null) return resolve();
    const timer = setTimeout(() => worker.kill('SIGKILL'), 5000);
    worker.once('exit', () => resolve(clearTimeout(timer)));
    worker.kill('SIGTERM');
  })));
  await redis.stop();
}

console.log(
  table(
    ['runtime', 'tasks/s', 'p50 spawn->done ms', 'p99 spawn->done ms'],
    [
      ['BullMQ, 2 worker processes', fmt(results.bullmq.tasksPerSecond, 0), fmt(results.bullmq.p50), fmt(results.bullmq.p99)],
      ['in-process runtime', fmt(results.inProcess.tasksPerSecond, 0), fmt(results.inProcess.p50), fmt(results.inProcess.p99)],
      ['BullMQ alone, no-op jobs (the floor; info only)', fmt(results.rawBullmq.tasksPerSecond, 0), '-', '-'],
    ],
  ),
);
console.log(`CPU per task (ms): ${Object.entries(results.cpuPerTaskMs).map(([name, ms]) => `${name} ${fmt(ms, 3)}`).join(', ')}`);
console.log(`BullMQ alone, CPU per job (ms): ${Object.entries(results.rawBullmq.cpuPerTaskMs).map(([name, ms]) => `${name} ${fmt(ms, 3)}`).join(', ')}`);
console.log(`event delivery worker -> subscriber: p50 ${fmt(results.delivery.p50, 2)} ms, p99 ${fmt(results.delivery.p99, 2)} ms, max ${fmt(results.delivery.max, 2)} ms`);

const throughput = { name: `BullMQ tasks/s across 2 workers (${TASKS} no-op tasks)`, value: results.bullmq.tasksPerSecond, limit: 5000, met: results.bullmq.tasksPerSecond >= 5000 };
const targets = [throughput, target('cross-process event delivery p99 ms', results.delivery.p99, 5)];
for (const line of targets.map(targetLine)) console.log(line);
writeResults('background-bullmq', { environment: environment(), quick, tasks: TASKS, results, targets });
