#!/usr/bin/env node
// `tessera serve`'s HTTP transport under load, against a baseline measured in the same run.
//
//   1. 200 concurrent clients, each creating a session and running a 3-tool scripted turn
//      streamed as the UI message stream: turns/s and p99 time to the first text part, against
//      a hand-written Hono SSE endpoint streaming the same parts with no framework behind it.
//      Targets: turns/s >= 0.7x the baseline's; p99 first text <= 1.5x the baseline's.
//   2. 1,000 idle open sessions: RSS growth per session. Target: <= 64 KB.
//   3. 10,000 sequential create / prompt / delete cycles (--quick: 1,500): the heap after the
//      first tenth and at the end, after GC. Target: growth <= 10% (flat).
//
// Each server runs in its own process (`node --expose-gc`); the clients run here. Needs the
// built dist (npm run build).
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { BENCH_DIR, environment, fmt, fmtRatio, median, parseArgs, quantile, table, target, targetLine, writeResults } from '../lib/common.mjs';
import { TOKEN } from './server/script.mjs';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const CLIENTS = 200;
const ROUNDS = quick ? 2 : 6;
const WARMUP_ROUNDS = quick ? 1 : 2;
const IDLE = 1000;
const CYCLES = quick ? 1500 : 10_000;

function startServer(script) {
  const child = spawn(process.execPath, ['--expose-gc', join(BENCH_DIR, 'suites', 'server', script)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const queue = [];
  const waiting = [];
  lines.on('line', (line) => (waiting.length > 0 ? waiting.shift()(line) : queue.push(line)));
  const next = () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiting.push(resolve)));
  return {
    url: next(),
    async memory() {
      child.stdin.write('m\n');
      return JSON.parse(await next());
    },
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.stdin.end();
      }),
  };
}

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

/** One client's turn: create a session, stream the turn to [DONE]; the time to the first text part. */
async function turn(url, prompt = 'read the three files') {
  const created = await fetch(`${url}/v1/sessions`, { method: 'POST', headers, body: '{}' });
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${await created.text()}`);
  const { id } = await created.json();
  const started = performance.now();
  const response = await fetch(`${url}/v1/sessions/${id}/messages`, { method: 'POST', headers, body: JSON.stringify({ prompt }) });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let firstText;
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (firstText === undefined && value.includes('"type":"text-delta"')) firstText = performance.now() - started;
    text += value;
  }
  if (!text.includes('[DONE]') || !text.includes('word39')) throw new Error(`incomplete turn: ${text.slice(-300)}`);
  return { id, firstText: firstText ?? Number.NaN };
}

/**
 * Both servers under the same load, in turns: after each has its warm-up rounds (so both are
 * measured with their code optimised; the first rounds of a fresh process run mostly in the
 * interpreter), the measured rounds alternate (baseline, Tessera, baseline, …, the first
 * server swapping every round), so a slow spell of the machine hits both alike. Only the
 * server of the round gets requests; the other idles.
 */
async function loadInTurns(urls) {
  for (const url of urls) for (let round = 0; round < WARMUP_ROUNDS; round++) await Promise.all(Array.from({ length: CLIENTS }, () => turn(url)));
  const out = urls.map(() => ({ rates: [], firsts: [] }));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? urls.map((_, index) => index) : urls.map((_, index) => urls.length - 1 - index);
    for (const index of order) {
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: CLIENTS }, () => turn(urls[index])));
      out[index].rates.push(CLIENTS / ((performance.now() - started) / 1000));
      out[index].firsts.push(...results.map((result) => result.firstText));
    }
  }
  return out.map(({ rates, firsts }) => ({ turnsPerSecond: median(rates), p99FirstTextMs: quantile(firsts, 0.99), medianFirstTextMs: median(firsts), rates }));
}

const results = { environment: environment() };
const targets = [];

/**
 * What creating one file costs where the Tessera server will store its sessions (beside it in
 * the temp folder): µs of CPU per create. Reported, not judged. The baseline writes nothing,
 * while each Tessera turn creates a session file, and on ext4 without a journal a create scans
 * the inodes deleted in the last minutes: 5-15 µs in a quiet folder, 100-250 µs on this VM
 * after a bench removed a few thousand files there.
 */
function fileCreateMicros(count = 300) {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-create-'));
  try {
    const before = process.cpuUsage();
    for (let index = 0; index < count; index++) closeSync(openSync(join(dir, `${index}.jsonl`), 'wx'));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / count;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ 1: load
const createMicros = fileCreateMicros();
const baseline = startServer('baseline-server.mjs');
const tessera = startServer('tessera-server.mjs');
const [baselineUrl, tesseraUrl] = await Promise.all([baseline.url, tessera.url]);
const [baselineLoad, tesseraLoad] = await loadInTurns([baselineUrl, tesseraUrl]);
await baseline.stop();
console.log(`\n${CLIENTS} concurrent clients, each a 3-tool turn (median of ${ROUNDS} rounds each, the two servers taking turns):`);
console.log(
  table(
    ['server', 'turns/s', 'first text p50 ms', 'first text p99 ms'],
    [
      ['baseline (Hono SSE, no framework)', fmt(baselineLoad.turnsPerSecond, 0), fmt(baselineLoad.medianFirstTextMs, 1), fmt(baselineLoad.p99FirstTextMs, 1)],
      ['Tessera', fmt(tesseraLoad.turnsPerSecond, 0), fmt(tesseraLoad.medianFirstTextMs, 1), fmt(tesseraLoad.p99FirstTextMs, 1)],
    ],
  ),
);
console.log(`creating a file in the temp folder, before the run: ${fmt(createMicros, 1)} µs of CPU each (the baseline stores nothing; Tessera creates one session file per turn)`);
targets.push({ ...target('turns/s, baseline / Tessera (Tessera >= 0.7x baseline)', baselineLoad.turnsPerSecond / tesseraLoad.turnsPerSecond, 1 / 0.7) });
targets.push(target('p99 time to first text, Tessera / baseline', tesseraLoad.p99FirstTextMs / baselineLoad.p99FirstTextMs, 1.5));
Object.assign(results, { baselineLoad, tesseraLoad, turnsRatio: tesseraLoad.turnsPerSecond / baselineLoad.turnsPerSecond, fileCreateMicros: createMicros });

// ------------------------------------------------------------------ 2: idle sessions
const before = await tessera.memory();
for (let index = 0; index < IDLE; index += 50) {
  await Promise.all(Array.from({ length: 50 }, async () => {
    const response = await fetch(`${tesseraUrl}/v1/sessions`, { method: 'POST', headers, body: '{}' });
    if (response.status !== 201) throw new Error(`create answered ${response.status}`);
    await response.arrayBuffer();
  }));
}
const after = await tessera.memory();
const perSessionKB = (after.rss - before.rss) / 1024 / IDLE;
console.log(`\n${IDLE} idle sessions: RSS ${fmt(before.rss / 2 ** 20, 1)} → ${fmt(after.rss / 2 ** 20, 1)} MB (${fmt(perSessionKB, 1)} KB per session; ${after.sessions} live)`);
targets.push(target(`RSS growth per idle session, KB`, perSessionKB, 64));
Object.assign(results, { idleSessions: IDLE, rssPerSessionKB: perSessionKB });
await tessera.stop();

// ------------------------------------------------------------------ 3: create / prompt / delete cycles
const cycler = startServer('tessera-server.mjs');
const cyclerUrl = await cycler.url;
let early;
for (let cycle = 1; cycle <= CYCLES; cycle++) {
  const { id } = await turn(cyclerUrl);
  const deleted = await fetch(`${cyclerUrl}/v1/sessions/${id}`, { method: 'DELETE', headers });
  if (deleted.status !== 204) throw new Error(`delete answered ${deleted.status}`);
  if (cycle === Math.round(CYCLES / 10)) early = await cycler.memory();
}
const late = await cycler.memory();
await cycler.stop();
const growth = (late.heap - early.heap) / early.heap;
console.log(`\n${CYCLES} create/prompt/delete cycles: heap ${fmt(early.heap / 2 ** 20, 1)} MB after ${Math.round(CYCLES / 10)}, ${fmt(late.heap / 2 ** 20, 1)} MB at the end (${fmt(growth * 100, 1)}%); ${late.sessions} live`);
targets.push(target('heap growth over create/prompt/delete cycles, fraction', Math.max(0, growth), 0.1));
Object.assign(results, { cycles: CYCLES, heapEarlyMB: early.heap / 2 ** 20, heapLateMB: late.heap / 2 ** 20 });

console.log('');
for (const t of targets) console.log(targetLine(t));
writeResults('server', { ...results, targets });
