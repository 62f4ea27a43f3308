#!/usr/bin/env node
// Background runtime benchmark (plugins/background, built package).
//
//   npm run build && node --expose-gc test/bench/suites/background.mjs [--quick]
//
// 1. Throughput: 10,000 no-op tasks spawned and awaited through BackgroundTaskManager at
//    maxConcurrent 8 (tasks/s), against a hand-written FIFO semaphore doing the same work.
// 2. Memory: RSS growth over one batch, and live-heap drift across later batches once every
//    task is closed (close() must release everything; RSS drift is printed for information).
// 3. Event fan-out: text deltas delivered to 100 subscribers (µs per event), against a
//    plain loop calling 100 functions per event.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { environment, fmt, fmtRatio, median, parseArgs, summarize, table, writeResults } from '../lib/common.mjs';
import { BackgroundTaskManager, ManualBackgroundTaskRunner } from '@tessera/plugin-background';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const TASKS = 10_000;
const CONCURRENCY = 8;
const PLAN = quick
  ? { warmup: 2, samples: 5, memoryBatches: 4, events: 20_000, eventSamples: 5 }
  : { warmup: 5, samples: 20, memoryBatches: 12, events: 100_000, eventSamples: 15 };
const SUBSCRIBERS = 100;
const gc = () => globalThis.gc?.();
const rssMB = () => process.memoryUsage().rss / (1024 * 1024);
const heapMB = () => process.memoryUsage().heapUsed / (1024 * 1024);

// ------------------------------------------------------------ throughput

/** Spawns TASKS no-op tasks, awaits them all, closes them; returns elapsed ms. */
async function tesseraBatch(manager) {
  const start = performance.now();
  const ids = [];
  for (let i = 0; i < TASKS; i++) ids.push((await manager.spawn({ kind: 'process', command: 'noop', cwd: '/' })).id);
  const states = await Promise.all(ids.map((id) => manager.wait(id)));
  const elapsed = performance.now() - start;
  for (const state of states) {
    if (state.status !== 'completed') throw new Error(`task ${state.id} ended ${state.status}`);
    manager.close(state.id);
  }
  return elapsed;
}

/** The smallest correct equivalent: a FIFO semaphore of 8 over already-resolved promises. */
async function baselineBatch() {
  const start = performance.now();
  let active = 0;
  const queue = [];
  const done = [];
  const pump = () => {
    while (active < CONCURRENCY && queue.length > 0) {
      const job = queue.shift();
      active += 1;
      Promise.resolve({ output: '' }).then((result) => {
        active -= 1;
        job.resolve(result);
        pump();
      });
    }
  };
  for (let i = 0; i < TASKS; i++) {
    done.push(new Promise((resolve) => queue.push({ resolve })));
    pump();
  }
  await Promise.all(done);
  return performance.now() - start;
}

async function sample(fn) {
  for (let i = 0; i < PLAN.warmup; i++) await fn();
  gc();
  const out = [];
  for (let i = 0; i < PLAN.samples; i++) out.push(await fn());
  return out;
}

const newManager = () =>
  new BackgroundTaskManager({ runners: [new ManualBackgroundTaskRunner({ kind: 'process', autoResolve: true })], maxConcurrent: CONCURRENCY });

// ------------------------------------------------------------ memory
// Measured in a fresh child process: after the throughput samples the heap is already sized
// for their garbage, which would hide (or fake) the growth of one batch.

async function measureMemory() {
  gc();
  const memoryManager = newManager();
  const rssBefore = rssMB();
  let peakDuringBatch = rssBefore;
  const spawnedBatch = async (first = false) => {
    const ids = [];
    for (let i = 0; i < TASKS; i++) ids.push((await memoryManager.spawn({ kind: 'process', command: 'noop', cwd: '/' })).id);
    await Promise.all(ids.map((id) => memoryManager.wait(id)));
    if (first) peakDuringBatch = Math.max(peakDuringBatch, rssMB());
    for (const id of ids) memoryManager.close(id);
  };
  await spawnedBatch(true);
  gc();
  gc();
  const afterFirst = rssMB();
  const heapAfterFirst = heapMB();
  for (let i = 1; i < PLAN.memoryBatches; i++) await spawnedBatch();
  gc();
  gc();
  const afterLast = rssMB();
  const heapAfterLast = heapMB();
  const leftOver = memoryManager.list().length;
  return { rssBefore, peakDuringBatch, afterFirst, afterLast, heapAfterFirst, heapAfterLast, leftOver };
}

if (args.memory) {
  process.stdout.write(JSON.stringify(await measureMemory()));
  process.exit(0);
}

const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--memory', ...(quick ? ['--quick'] : [])], { encoding: 'utf8' });
if (child.status !== 0) throw new Error(`memory child failed: ${child.stderr}`);
const { rssBefore, peakDuringBatch, afterFirst, afterLast, heapAfterFirst, heapAfterLast, leftOver } = JSON.parse(child.stdout);
const growthMB = peakDuringBatch - rssBefore;
const driftMB = afterLast - afterFirst;
// RSS keeps pages V8 no longer uses, so "no growth after close" is judged on the live heap.
const heapDriftMB = heapAfterLast - heapAfterFirst;

const throughputManager = newManager();
const tesseraMs = await sample(() => tesseraBatch(throughputManager));
const baselineMs = await sample(baselineBatch);
const tasksPerSecond = (ms) => (TASKS / ms) * 1000;
const tessera = summarize(tesseraMs.map(tasksPerSecond));
const baseline = summarize(baselineMs.map(tasksPerSecond));

// ------------------------------------------------------------ event fan-out

async function fanOutSample(events) {
  const manager = newManagerWithRunner();
  let received = 0;
  for (let i = 0; i < SUBSCRIBERS; i++) manager.subscribe((event) => {
    if (event.type === 'background_task_text_delta') received += 1;
  });
  const state = await manager.spawn({ kind: 'process', command: 'stream', cwd: '/' });
  const run = manager.runner.run(state.id);
  const start = performance.now();
  for (let i = 0; i < events; i++) run.emit({ type: 'text_delta', delta: 'x' });
  const elapsed = performance.now() - start;
  if (received !== events * SUBSCRIBERS) throw new Error(`fan-out delivered ${received}, expected ${events * SUBSCRIBERS}`);
  run.resolve();
  await manager.wait(state.id);
  return (elapsed * 1000) / events;
}

function newManagerWithRunner() {
  const runner = new ManualBackgroundTaskRunner({ kind: 'process' });
  const manager = new BackgroundTaskManager({ runners: [runner] });
  manager.runner = runner;
  return manager;
}

function baselineFanOut(events) {
  const listeners = [];
  let received = 0;
  for (let i = 0; i < SUBSCRIBERS; i++) listeners.push((event) => {
    if (event.type === 'background_task_text_delta') received += 1;
  });
  const start = performance.now();
  for (let i = 0; i < events; i++) {
    const event = { type: 'background_task_text_delta', taskId: 'task_1', delta: 'x' };
    for (const listener of listeners) listener(event);
  }
  const elapsed = performance.now() - start;
  if (received !== events * SUBSCRIBERS) throw new Error('baseline fan-out miscounted');
  return (elapsed * 1000) / events;
}

const fanOut = [];
const fanOutBase = [];
for (let i = 0; i < PLAN.warmup; i++) {
  await fanOutSample(PLAN.events / 10);
  baselineFanOut(PLAN.events / 10);
}
for (let i = 0; i < PLAN.eventSamples; i++) {
  fanOut.push(await fanOutSample(PLAN.events));
  fanOutBase.push(baselineFanOut(PLAN.events));
}
const fanOutSummary = summarize(fanOut);
const fanOutBaseSummary = summarize(fanOutBase);

// ------------------------------------------------------------ report

const targets = [
  { name: 'no-op tasks/s at maxConcurrent 8', value: `${fmt(tessera.median, 0)} tasks/s`, limit: '>= 50000 tasks/s', met: tessera.median >= 50_000 },
  { name: 'RSS growth over 10,000 tasks', value: `${fmt(growthMB)} MB`, limit: '<= 50 MB', met: growthMB <= 50 },
  { name: `heap growth after close over ${PLAN.memoryBatches - 1} more batches`, value: `${fmt(heapDriftMB, 2)} MB`, limit: '<= 1 MB, registry empty', met: heapDriftMB <= 1 && leftOver === 0 },
];

console.log(`background: ${TASKS} no-op tasks, maxConcurrent ${CONCURRENCY}, ${PLAN.samples} samples${quick ? ' (quick)' : ''}`);
console.log(
  table(
    ['what', 'median', 'p25', 'p75', 'ratio vs baseline'],
    [
      ['Tessera tasks/s', fmt(tessera.median, 0), fmt(tessera.p25, 0), fmt(tessera.p75, 0), fmtRatio(tessera.median / baseline.median)],
      ['hand-written semaphore tasks/s', fmt(baseline.median, 0), fmt(baseline.p25, 0), fmt(baseline.p75, 0), '1.00x'],
      [`fan-out µs/event (${SUBSCRIBERS} subscribers)`, fmt(fanOutSummary.median, 2), fmt(fanOutSummary.p25, 2), fmt(fanOutSummary.p75, 2), fmtRatio(fanOutSummary.median / fanOutBaseSummary.median)],
      ['plain loop µs/event', fmt(fanOutBaseSummary.median, 2), fmt(fanOutBaseSummary.p25, 2), fmt(fanOutBaseSummary.p75, 2), '1.00x'],
    ],
  ),
);
console.log(
  table(
    ['memory', 'MB'],
    [
      ['RSS before', fmt(rssBefore)],
      ['peak RSS during first batch', fmt(peakDuringBatch)],
      ['RSS after first batch (closed, gc)', fmt(afterFirst)],
      [`RSS after batch ${PLAN.memoryBatches} (closed, gc)`, fmt(afterLast)],
      ['RSS drift after close (info)', fmt(driftMB)],
      ['heap after first batch (closed, gc)', fmt(heapAfterFirst, 2)],
      [`heap after batch ${PLAN.memoryBatches} (closed, gc)`, fmt(heapAfterLast, 2)],
      ['tasks left after close', String(leftOver)],
    ],
  ),
);
for (const t of targets) console.log(`${t.met ? 'TARGET met   ' : 'TARGET MISSED'}  ${t.name}: ${t.value} (target ${t.limit})`);

const file = writeResults('background', {
  environment: environment(),
  quick,
  tasks: TASKS,
  maxConcurrent: CONCURRENCY,
  throughput: { tessera, baseline, ratio: tessera.median / baseline.median, samplesMs: { tessera: tesseraMs, baseline: baselineMs } },
  memory: { rssBefore, peakDuringBatch, afterFirst, afterLast, growthMB, driftMB, heapAfterFirst, heapAfterLast, heapDriftMB, leftOver, batches: PLAN.memoryBatches },
  fanOut: { subscribers: SUBSCRIBERS, events: PLAN.events, usPerEvent: fanOutSummary, baselineUsPerEvent: fanOutBaseSummary, ratio: fanOutSummary.median / fanOutBaseSummary.median },
  targets,
});
console.log(`results: ${file}`);
