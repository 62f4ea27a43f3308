#!/usr/bin/env node
// Agent-loop benchmark: cost per tool round of Tessera's Session vs a
// hand-written loop vs pi-agent-core, plus one large streamed reply.
//
//   node --expose-gc test/bench/agent-loop.mjs [--quick]
//       runs everything; each contender x workload in its own child process
//   node --expose-gc test/bench/agent-loop.mjs --contender tessera|hand|pi --workload loop|scaling|stream [--quick]
//       one child: prints a single JSON line on stdout (used by the parent, and handy under --cpu-prof)

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  environment,
  fmt,
  fmtRatio,
  median,
  parseArgs,
  peakRssMB,
  summarize,
  table,
  target,
  targetLine,
  writeResults,
} from './lib/common.mjs';
import { CONTENDERS, EVENT_STREAM_CONTENDERS, loadContender } from './lib/contenders.mjs';

const SELF = fileURLToPath(import.meta.url);

const HEADLINE_ROUNDS = 200;
// Paired samples of the event-stream variants per process: a turn of all three takes about 1.5 ms,
// so many more than the loop workload's samples cost little and steady the median ratio.
const EVENT_SAMPLE_FACTOR = 10;
const SCALING_ROUNDS = [20, 200, 1000];
const STREAM = { deltas: 2000, size: 1024 };
/** Runs done before peak RSS is read (loop: HEADLINE_ROUNDS rounds each; stream: one big stream each). */
const RSS_RUNS = 10;

const PLANS = {
  full: {
    passes: 2,
    loop: { warmup: 20, warmupMs: 1500, samples: 40 },
    scaling: { warmup: 10, warmupMs: 500, samples: 20 },
    stream: { warmup: 10, warmupMs: 1000, samples: 300 },
  },
  quick: {
    passes: 1,
    loop: { warmup: 3, warmupMs: 250, samples: 7 },
    scaling: { warmup: 3, warmupMs: 100, samples: 7 },
    stream: { warmup: 3, warmupMs: 150, samples: 7 },
  },
};

const WORKLOADS = {
  loop: CONTENDERS,
  // The event-stream variants share one process and take turns sample by sample, so their
  // ratios compare runs made under the same conditions (see runEventsChild).
  events: ['tessera-events'],
  scaling: ['tessera', 'hand'],
  stream: CONTENDERS,
};

// ---------------------------------------------------------------- child side

/**
 * After a forced GC: a full GC shrinks V8's young generation, which regrows with allocation.
 * Runs `fn` for a quarter of the warm-up (at least twice) so samples see the steady state
 * rather than a run of scavenges that only follows the forced collection (it hits contenders
 * that allocate more, harder).
 */
async function rewarm(fn, { warmup, warmupMs = 0 }) {
  const start = performance.now();
  for (let i = 0; i < Math.max(2, Math.ceil(warmup / 4)) || performance.now() - start < warmupMs / 4; i++) await fn();
}

// Warm-up runs at least `warmup` times and for at least `warmupMs`, so slower
// contenders get as much JIT warm-up time as faster ones. Then one full GC
// clears warm-up garbage, a few more runs re-warm the heap, and the samples
// follow with no forced GC between them (a GC before every sample leaves the
// heap cold and inflates short runs two- to three-fold; garbage a contender
// makes is its own cost).
async function sample(fn, { warmup, warmupMs = 0, samples }) {
  const warmStart = performance.now();
  for (let i = 0; i < warmup || performance.now() - warmStart < warmupMs; i++) await fn();
  globalThis.gc?.();
  await rewarm(fn, { warmup, warmupMs });
  const out = [];
  for (let i = 0; i < samples; i++) out.push(await fn());
  return out;
}

/** Fewer rounds per run → more runs, so each size gets a similar amount of work. */
function scaledPlan(plan, rounds) {
  const factor = Math.min(10, Math.max(1, HEADLINE_ROUNDS / rounds));
  return { ...plan, warmup: Math.ceil(plan.warmup * factor), samples: Math.ceil(plan.samples * factor) };
}

/**
 * Bare, subscribed and interactive Tessera in one process: each is warmed up, then they take
 * turns (bare, subscribed, interactive, bare, …), so drift in the machine's speed hits all three
 * alike. The target ratios are medians of the per-turn ratios (paired samples).
 */
async function runEventsChild(plan) {
  const variants = Object.fromEntries(await Promise.all(EVENT_STREAM_CONTENDERS.map(async (name) => [name, await loadContender(name)])));
  for (const variant of Object.values(variants)) await sample(() => variant.loop(HEADLINE_ROUNDS), { ...plan.loop, samples: 1 });
  globalThis.gc?.();
  // The variants take turns, unmeasured, while the young generation regrows.
  await rewarm(async () => {
    for (const name of EVENT_STREAM_CONTENDERS) await variants[name].loop(HEADLINE_ROUNDS);
  }, plan.loop);
  const usPerRound = Object.fromEntries(EVENT_STREAM_CONTENDERS.map((name) => [name, []]));
  for (let index = 0; index < plan.loop.samples * EVENT_SAMPLE_FACTOR; index += 1) {
    for (const name of EVENT_STREAM_CONTENDERS) usPerRound[name].push(((await variants[name].loop(HEADLINE_ROUNDS)) * 1000) / HEADLINE_ROUNDS);
  }
  return { contender: 'tessera-events', workload: 'events', rounds: HEADLINE_ROUNDS, usPerRound, peakRssMB: peakRssMB(), peakRssMBEnd: peakRssMB(), rssStartMB: 0 };
}

async function runChild(contenderName, workload, plan) {
  if (workload === 'events') return runEventsChild(plan);
  if (!WORKLOADS[workload]?.includes(contenderName)) {
    throw new Error(`no workload "${workload}" for contender "${contenderName}"`);
  }
  const contender = await loadContender(contenderName);
  const rssStartMB = process.memoryUsage().rss / 2 ** 20;
  const result = { contender: contenderName, workload, rssStartMB };

  // Peak RSS is taken after a fixed amount of work (the same for every
  // contender), before the time-based warm-up, so it does not depend on how
  // many runs a fast contender squeezes into its warm-up time.
  const fixed = workload === 'stream' ? () => contender.stream(STREAM.deltas, STREAM.size) : () => contender.loop(HEADLINE_ROUNDS);
  for (let i = 0; i < RSS_RUNS; i++) await fixed();
  result.peakRssMB = peakRssMB();

  if (workload === 'loop') {
    const ms = await sample(() => contender.loop(HEADLINE_ROUNDS), plan.loop);
    result.rounds = HEADLINE_ROUNDS;
    result.usPerRound = ms.map((value) => (value * 1000) / HEADLINE_ROUNDS);
  } else if (workload === 'scaling') {
    result.usPerRound = {};
    for (const rounds of SCALING_ROUNDS) {
      const ms = await sample(() => contender.loop(rounds), scaledPlan(plan.scaling, rounds));
      result.usPerRound[rounds] = ms.map((value) => (value * 1000) / rounds);
    }
  } else {
    result.ms = await sample(() => contender.stream(STREAM.deltas, STREAM.size), plan.stream);
  }
  result.peakRssMBEnd = peakRssMB();
  return result;
}

// --------------------------------------------------------------- parent side

function spawnChild(contender, workload, quick) {
  const args = ['--expose-gc', SELF, '--contender', contender, '--workload', workload];
  if (quick) args.push('--quick');
  const child = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
    timeout: 20 * 60_000,
  });
  if (child.error) throw new Error(`${contender}/${workload} child could not run: ${child.error.message}`);
  if (child.status !== 0) {
    throw new Error(`${contender}/${workload} child exited with ${child.status ?? child.signal}`);
  }
  const line = child.stdout.trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`${contender}/${workload} child printed no JSON result:\n${child.stdout}`);
  }
}

/**
 * Runs every contender of every workload; with several passes the contenders
 * take turns (pass 1: a b c, pass 2: a b c) and their samples are pooled, so a
 * burst of background load does not land on one contender only.
 */
function collect(quick, passes) {
  const merged = {};
  for (const [workload, contenders] of Object.entries(WORKLOADS)) {
    merged[workload] = {};
    for (let pass = 0; pass < passes; pass++) {
      for (const contender of contenders) {
        process.stderr.write(`  agent-loop: ${workload} / ${contender} (pass ${pass + 1}/${passes})\n`);
        const child = spawnChild(contender, workload, quick);
        const into = (merged[workload][contender] ??= { peakRssMB: 0, peakRssMBEnd: 0, rssStartMB: 0 });
        into.peakRssMB = Math.max(into.peakRssMB, child.peakRssMB);
        into.peakRssMBEnd = Math.max(into.peakRssMBEnd, child.peakRssMBEnd);
        into.rssStartMB = Math.max(into.rssStartMB, child.rssStartMB);
        if (workload === 'loop') (into.usPerRound ??= []).push(...child.usPerRound);
        if (workload === 'events') {
          into.usPerRound ??= {};
          for (const [name, values] of Object.entries(child.usPerRound)) (into.usPerRound[name] ??= []).push(...values);
        }
        if (workload === 'stream') (into.ms ??= []).push(...child.ms);
        if (workload === 'scaling') {
          into.usPerRound ??= {};
          for (const [rounds, values] of Object.entries(child.usPerRound)) (into.usPerRound[rounds] ??= []).push(...values);
        }
      }
    }
  }
  return merged;
}

/** Median of the per-sample ratios a[i] / b[i] (the samples were taken in turns). */
function pairedRatio(a, b) {
  const ratios = a.map((value, index) => value / b[index]).sort((x, y) => x - y);
  return ratios[Math.floor(ratios.length / 2)];
}

const warmText = (p) => ` after >= ${p.warmup} warm-up runs${p.warmupMs ? ` and >= ${p.warmupMs} ms of warm-up` : ''}`;

function report(merged, quick, plan) {
  const loop = Object.fromEntries(
    Object.entries(merged.loop).map(([name, data]) => [name, { ...summarize(data.usPerRound), peakRssMB: data.peakRssMB, peakRssMBEnd: data.peakRssMBEnd, rssStartMB: data.rssStartMB }]),
  );
  const events = merged.events['tessera-events'].usPerRound;
  const stream = Object.fromEntries(
    Object.entries(merged.stream).map(([name, data]) => [name, { ...summarize(data.ms), peakRssMB: data.peakRssMB, peakRssMBEnd: data.peakRssMBEnd, rssStartMB: data.rssStartMB }]),
  );
  const scaling = Object.fromEntries(
    Object.entries(merged.scaling).map(([name, data]) => {
      const sizes = Object.fromEntries(Object.entries(data.usPerRound).map(([rounds, values]) => [rounds, summarize(values)]));
      const [small, mid, large] = SCALING_ROUNDS.map((rounds) => sizes[rounds].median);
      return [name, { sizes, ratioLargeToSmall: large / small, ratioLargeToMid: large / mid }];
    }),
  );

  const ratios = {
    loopTesseraOverPi: loop.tessera.median / loop.pi.median,
    loopTesseraOverHand: loop.tessera.median / loop.hand.median,
    streamTesseraOverHand: stream.tessera.median / stream.hand.median,
    streamTesseraOverPi: stream.tessera.median / stream.pi.median,
    loopSubscribedOverBare: pairedRatio(events['tessera-subscribed'], events['tessera-bare']),
    loopInteractiveOverBare: pairedRatio(events['tessera-interactive'], events['tessera-bare']),
  };
  const targets = [
    target(`agent loop, Tessera / pi-agent-core (µs per round, ${HEADLINE_ROUNDS} rounds)`, ratios.loopTesseraOverPi, 0.5),
    target('big stream, Tessera / hand-written loop (ms)', ratios.streamTesseraOverHand, 1.5),
    target(`agent loop, one session.subscribe listener / none (µs per round, ${HEADLINE_ROUNDS} rounds)`, ratios.loopSubscribedOverBare, 1.1),
    target(`agent loop, InteractiveSession / bare Session (µs per round, ${HEADLINE_ROUNDS} rounds)`, ratios.loopInteractiveOverBare, 1.3),
  ];

  const out = [];
  const label = { tessera: 'Tessera (all hooks observed)', hand: 'hand-written loop', pi: 'pi-agent-core' };
  out.push('');
  out.push(`AGENT LOOP — ${HEADLINE_ROUNDS} tool rounds per run (1 text delta + 1 echo call each, then a final reply)`);
  out.push(`${loop.tessera.n} measured runs per contender${warmText(plan.loop)}${plan.passes > 1 ? `, pooled from ${plan.passes} processes each` : ''}${quick ? ' [quick]' : ''}`);
  out.push(
    table(
      ['contender', 'median µs/round', 'p25', 'p75', 'min', 'RSS loaded MB', `peak RSS MB`, 'vs hand', 'vs pi'],
      CONTENDERS.map((name) => [
        label[name],
        fmt(loop[name].median),
        fmt(loop[name].p25),
        fmt(loop[name].p75),
        fmt(loop[name].min),
        fmt(loop[name].rssStartMB, 0),
        fmt(loop[name].peakRssMB, 0),
        fmtRatio(loop[name].median / loop.hand.median),
        fmtRatio(loop[name].median / loop.pi.median),
      ]),
    ),
  );
  out.push(`RSS loaded: after imports and setup; peak RSS: process maxRSS after ${RSS_RUNS} runs (one child process per contender).`);
  out.push('');
  out.push(`EVENT STREAM — the same loop, three Tessera variants taking turns in one process (${events['tessera-bare'].length} turns pooled from ${plan.passes} process(es)); ratios are medians of per-turn ratios`);
  out.push(
    table(
      ['variant', 'median µs/round', 'min', 'vs bare (paired)'],
      [
        ['bare Session, no listener', fmt(median(events['tessera-bare'])), fmt(Math.min(...events['tessera-bare'])), '1.00x'],
        ['one session.subscribe listener', fmt(median(events['tessera-subscribed'])), fmt(Math.min(...events['tessera-subscribed'])), fmtRatio(pairedRatio(events['tessera-subscribed'], events['tessera-bare']))],
        ['InteractiveSession + text_delta listener', fmt(median(events['tessera-interactive'])), fmt(Math.min(...events['tessera-interactive'])), fmtRatio(pairedRatio(events['tessera-interactive'], events['tessera-bare']))],
      ],
    ),
  );
  out.push('');
  out.push('SCALING — median µs per round by run length (should stay flat; the 20-round figure also carries the fixed per-run cost)');
  out.push(
    table(
      ['contender', ...SCALING_ROUNDS.map((r) => `${r} rounds`), `${SCALING_ROUNDS[2]}/${SCALING_ROUNDS[0]}`, `${SCALING_ROUNDS[2]}/${SCALING_ROUNDS[1]}`],
      Object.entries(scaling).map(([name, data]) => [
        label[name],
        ...SCALING_ROUNDS.map((r) => fmt(data.sizes[r].median)),
        fmtRatio(data.ratioLargeToSmall),
        fmtRatio(data.ratioLargeToMid),
      ]),
    ),
  );
  out.push('');
  out.push(`BIG STREAM — one model call, ${STREAM.deltas} deltas x ${STREAM.size} chars (${((STREAM.deltas * STREAM.size) / 1e6).toFixed(2)} MB), no tools`);
  out.push(`${stream.tessera.n} measured runs per contender${warmText(plan.stream)}`);
  out.push(
    table(
      ['contender', 'median ms', 'p25', 'p75', 'min', 'peak RSS MB', 'vs hand', 'vs pi'],
      CONTENDERS.map((name) => [
        label[name],
        fmt(stream[name].median, 2),
        fmt(stream[name].p25, 2),
        fmt(stream[name].p75, 2),
        fmt(stream[name].min, 2),
        fmt(stream[name].peakRssMB, 0),
        fmtRatio(stream[name].median / stream.hand.median),
        fmtRatio(stream[name].median / stream.pi.median),
      ]),
    ),
  );
  out.push(`peak RSS: process maxRSS after ${RSS_RUNS} big-stream runs.`);
  out.push('');
  if (quick) out.push('NOTE: --quick takes very few samples; treat these numbers as a smoke test, not a measurement.');
  out.push('TARGETS (agent-loop)');
  for (const t of targets) out.push(`  ${targetLine(t)}`);
  out.push(`  info   Tessera / hand-written loop (µs per round): ${fmtRatio(ratios.loopTesseraOverHand)}`);
  console.log(out.join('\n'));

  return { loop, scaling, stream, ratios, targets };
}

// ---------------------------------------------------------------------- main

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const plan = PLANS[quick ? 'quick' : 'full'];

if (args.contender) {
  const result = await runChild(String(args.contender), String(args.workload ?? 'loop'), plan);
  process.stdout.write(JSON.stringify(result) + '\n');
} else {
  if (typeof globalThis.gc !== 'function') {
    process.stderr.write('note: run with --expose-gc for steadier numbers (children always get it)\n');
  }
  const merged = collect(quick, plan.passes);
  const summary = report(merged, quick, plan);
  const file = writeResults('agent-loop', {
    bench: 'agent-loop',
    quick,
    plan,
    environment: environment(),
    workload: { headlineRounds: HEADLINE_ROUNDS, scalingRounds: SCALING_ROUNDS, stream: STREAM },
    ...summary,
    samples: merged,
  });
  console.log(`\nresults: ${file}`);
}
