#!/usr/bin/env node
// Session-logger benchmark: events/s of one Session turn that streams 10,000 text
// deltas, logged with redaction by FileSessionLogger (buffered, async batches) vs a
// naive logger doing the same redaction + JSON and one appendFileSync per event. Both
// run in this process, on the same turn, through the same logging taps and the same
// counting wrapper; only the writer differs. A third contender discards every event: it
// is the Session turn alone, the cost both writers share, and bounds the ratio any writer
// could reach. A second table logs 10,000 text_delta events directly (no Session), which
// isolates the writers on records that need redaction (the general path, not the
// streamed-chunk fast path).
//
// Fairness: the naive writer is genuinely naive — new Date().toISOString(), object spread,
// recursive redaction (the package's copy-on-write redactSecrets, which only flatters it),
// JSON.stringify and one appendFileSync per event — and it writes big fields inline where
// ours also hashes them into payload files. The timed region is session.run() + flush()
// for every contender; samples alternate; every sample checks that each logged event is
// a line on disk (none dropped), counting lines without building strings so that no
// sample leaves megabytes of garbage for the next one to collect.
//
//   npm run build
//   node --expose-gc test/bench/suites/session-logger.mjs [--quick]
//
// Target: FileSessionLogger >= 10x the naive writer on the turn workload.

import { appendFileSync, closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel } from '@tessera/kernel';
import { fakeClock, inMemorySessionStore, allowAllPermissions } from '@tessera/kernel/testing';
import { scriptedProvider } from '@tessera/plugin-provider-scripted';
import { FileSessionLogger, redactSecrets, sessionLogger } from '@tessera/plugin-session-logger';
import { environment, fmt, fmtRatio, parseArgs, summarize, table, writeResults } from '../lib/common.mjs';

const DELTAS = 10_000;
const TARGET_RATIO = 10;
/** Idle time before each sample (see measure()). */
const SETTLE_MS = 25;

const args = parseArgs(process.argv.slice(2));
for (const key of Object.keys(args)) if (key !== 'quick') throw new Error(`unknown option --${key}; usage: session-logger.mjs [--quick]`);
const quick = Boolean(args.quick);
const plan = quick ? { warmup: 2, samples: 5 } : { warmup: 5, samples: 20 };

/** The baseline: redaction and JSON like ours, then one synchronous append per event. */
class NaiveAppendLogger {
  constructor(dir) {
    this.dir = dir;
  }
  log(sessionId, event, data) {
    const line = JSON.stringify({ timestamp: new Date().toISOString(), sessionId, event, ...redactSecrets(data) });
    appendFileSync(join(this.dir, `${sessionId}.jsonl`), `${line}\n`);
  }
  async flush() {}
}

/** The Session turn alone: events are counted and discarded. */
class DiscardLogger {
  log() {}
  async flush() {}
}

/** Counts events on their way to the real logger. */
class Counting {
  constructor(inner) {
    this.inner = inner;
    this.count = 0;
  }
  log(sessionId, event, data) {
    this.count += 1;
    this.inner.log(sessionId, event, data);
  }
  flush() {
    return this.inner.flush();
  }
}

const countBuffer = Buffer.alloc(1 << 16);
/**
 * Lines in a file, read through one reused buffer: reading the log back as a string and
 * splitting it left megabytes of garbage that the next sample (of either contender) then
 * had to collect inside its timed region.
 */
function countLines(path) {
  const fd = openSync(path, 'r');
  try {
    let lines = 0;
    for (let read; (read = readSync(fd, countBuffer, 0, countBuffer.length, null)) > 0; ) {
      for (let index = countBuffer.indexOf(10, 0); index !== -1 && index < read; index = countBuffer.indexOf(10, index + 1)) lines++;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

const chunks = Array.from({ length: DELTAS }, (_, index) => `token ${index} `);
let sampleId = 0;

/** One turn of DELTAS deltas with an apiKey in the request metadata; returns events/s and ms. */
async function turnSample(kind) {
  const dir = mkdtempSync(join(tmpdir(), `tessera-bench-logger-${kind}-`));
  try {
    const inner = kind === 'file' ? new FileSessionLogger({ dir }) : kind === 'naive' ? new NaiveAppendLogger(dir) : new DiscardLogger();
    const logger = new Counting(inner);
    const kernel = await createKernel({
      plugins: [
        scriptedProvider({ turns: [{ text: chunks }], recordRequests: false }),
        inMemorySessionStore(),
        allowAllPermissions(),
        fakeClock(),
        sessionLogger({ logger }),
      ],
    });
    const sessionId = `bench-${kind}-${sampleId++}`;
    const session = kernel.createSession({ sessionId, systemMessage: 'bench' });
    const started = performance.now();
    await session.run('stream please');
    await logger.flush();
    const ms = performance.now() - started;
    const events = logger.count;
    await kernel.shutdown();
    const written = kind === 'none' ? logger.count : countLines(join(dir, `${sessionId}.jsonl`));
    // Every event logged (the timed ones plus session_shutdown) is a line on disk: none dropped.
    if (written !== logger.count) throw new Error(`${kind}: ${written} lines on disk for ${logger.count} events`);
    return { ms, events, eventsPerSecond: events / (ms / 1000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** DELTAS text_delta events logged straight into the writer (no Session). */
async function directSample(kind) {
  const dir = mkdtempSync(join(tmpdir(), `tessera-bench-logger-direct-${kind}-`));
  try {
    const logger = kind === 'file' ? new FileSessionLogger({ dir }) : new NaiveAppendLogger(dir);
    const sessionId = `direct-${sampleId++}`;
    const started = performance.now();
    for (let index = 0; index < DELTAS; index++) {
      logger.log(sessionId, 'text_delta', { sequence: index, delta: chunks[index], round: 1, executionId: 'e', headers: { authorization: 'Bearer x' } });
    }
    await logger.flush();
    const ms = performance.now() - started;
    return { ms, events: DELTAS, eventsPerSecond: DELTAS / (ms / 1000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(fn, kinds) {
  const out = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let index = 0; index < plan.warmup; index++) for (const kind of kinds) await fn(kind);
  globalThis.gc?.();
  // Rotate the contenders' order so background noise falls on all. Before each sample,
  // untimed and the same for every contender: a young-generation collection, so one
  // contender's short-lived garbage is not collected (and timed) inside the next one's
  // sample (a full collection would shrink the young generation and slow every next
  // sample instead), and a short idle pause, so the previous sample's background work
  // (deleting its multi-megabyte files, concurrent GC tasks) is not timed either. Without
  // the pause FileSessionLogger's samples were bimodal (~9 ms or ~14 ms, the difference
  // being one 4 MB writev taking 1 ms or 6 ms) while the naive writer's were not.
  for (let index = 0; index < plan.samples; index++) {
    for (let slot = 0; slot < kinds.length; slot++) {
      const kind = kinds[(index + slot) % kinds.length];
      globalThis.gc?.({ type: 'minor' });
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      out[kind].push(await fn(kind));
    }
  }
  return out;
}

function summarise(samples) {
  return {
    eventsPerSecond: summarize(samples.map((sample) => sample.eventsPerSecond)),
    ms: summarize(samples.map((sample) => sample.ms)),
    events: samples[0].events,
  };
}

const turn = await measure(turnSample, ['file', 'naive', 'none']);
const direct = await measure(directSample, ['file', 'naive']);
const results = {};
const rows = [];
for (const [workload, samples] of [['turn', turn], ['direct', direct]]) {
  const file = summarise(samples.file);
  const naive = summarise(samples.naive);
  const ratio = file.eventsPerSecond.median / naive.eventsPerSecond.median;
  results[workload] = { file, naive, ratio };
  const label = workload === 'turn' ? `Session turn, ${DELTAS} deltas (${file.events} events)` : `direct log(), ${DELTAS} text_delta events`;
  rows.push([`${label}: FileSessionLogger`, fmt(file.eventsPerSecond.median, 0), fmt(file.ms.median, 2), fmtRatio(ratio)]);
  rows.push([`${label}: naive appendFileSync`, fmt(naive.eventsPerSecond.median, 0), fmt(naive.ms.median, 2), '1.00x']);
  if (samples.none) {
    // No writer at all: the most any writer could reach on this machine (the ceiling).
    const none = summarise(samples.none);
    results[workload].sessionOnly = none;
    results[workload].ceilingRatio = none.eventsPerSecond.median / naive.eventsPerSecond.median;
    rows.push([`${label}: Session turn alone (events discarded)`, fmt(none.eventsPerSecond.median, 0), fmt(none.ms.median, 2), fmtRatio(results[workload].ceilingRatio)]);
  }
}

const targets = [
  {
    name: `FileSessionLogger events/s vs naive appendFileSync, Session turn of ${DELTAS} deltas (>= ${TARGET_RATIO}x)`,
    value: results.turn.ratio,
    limit: TARGET_RATIO,
    direction: '>=',
    met: Number.isFinite(results.turn.ratio) && results.turn.ratio >= TARGET_RATIO,
  },
];

console.log(`session-logger benchmark${quick ? ' (quick)' : ''}: medians of ${plan.samples} samples each, redaction on, temp dir ${tmpdir()}`);
console.log(table(['workload', 'events/s', 'ms', 'vs naive'], rows));
console.log('');
for (const t of targets) console.log(`${t.met ? 'TARGET met' : 'TARGET MISSED'}  ${t.name}: ${fmtRatio(t.value)}`);
const file = writeResults('session-logger', { environment: environment(), quick, plan, deltas: DELTAS, results, targets });
console.log(`\nJSON: ${file}`);
