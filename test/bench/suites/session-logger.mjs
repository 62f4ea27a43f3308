#!/usr/bin/env node
// Session-logger benchmark: events/s of one Session turn that streams 10,000 text
// deltas, logged with redaction by FileSessionLogger (buffered, async batches) vs a
// naive logger doing the same redaction + JSON and one appendFileSync per event. Both
// run in this process, on the same turn, through the same logging taps; only the writer
// differs. A second table logs 10,000 text_delta events directly (no Session), which
// isolates the writers.
//
//   npx tsc -b plugins/session-logger plugins/provider-scripted kernel
//   node --expose-gc test/bench/suites/session-logger.mjs [--quick]
//
// Target: FileSessionLogger >= 10x the naive writer on the turn workload.

import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel } from '@tessera/kernel';
import { fakeClock, inMemorySessionStore, allowAllPermissions } from '@tessera/kernel/testing';
import { scriptedProvider } from '@tessera/plugin-provider-scripted';
import { FileSessionLogger, redactSecrets, sessionLogger } from '@tessera/plugin-session-logger';
import { environment, fmt, fmtRatio, parseArgs, summarize, table, writeResults } from '../lib/common.mjs';

const DELTAS = 10_000;
const TARGET_RATIO = 10;

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

const chunks = Array.from({ length: DELTAS }, (_, index) => `token ${index} `);
let sampleId = 0;

/** One turn of DELTAS deltas with an apiKey in the request metadata; returns events/s and ms. */
async function turnSample(kind) {
  const dir = mkdtempSync(join(tmpdir(), `tessera-bench-logger-${kind}-`));
  try {
    const inner = kind === 'file' ? new FileSessionLogger({ dir }) : new NaiveAppendLogger(dir);
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
    const written = readFileSync(join(dir, `${sessionId}.jsonl`), 'utf8').split('\n').length - 1;
    if (written < events) throw new Error(`${kind}: ${written} lines on disk for ${events} events`);
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

async function measure(fn) {
  const out = { file: [], naive: [] };
  for (let index = 0; index < plan.warmup; index++) {
    await fn('file');
    await fn('naive');
  }
  globalThis.gc?.();
  // Alternate contenders so background noise falls on both.
  for (let index = 0; index < plan.samples; index++) {
    for (const kind of index % 2 === 0 ? ['file', 'naive'] : ['naive', 'file']) out[kind].push(await fn(kind));
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

const turn = await measure(turnSample);
const direct = await measure(directSample);
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
