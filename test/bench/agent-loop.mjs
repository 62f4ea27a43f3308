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
  parseArgs,
  peakRssMB,
  summarize,
  table,
  target,
  targetLine,
  writeResults,
} from './lib/common.mjs';
import { CONTENDERS, loadContender } from './lib/contenders.mjs';

const SELF = fileURLToPath(import.meta.url);

const HEADLINE_ROUNDS = 200;
const SCALING_ROUNDS = [20, 200, 1000];
const STREAM = { deltas: 2000, size: 1024 };

const PLANS = {
  full: {
    passes: 2,
    loop: { warmup: 10, samples: 30 },
    scaling: { warmup: 5, samples: 15 },
    stream: { warmup: 5, samples: 20 },
  },
  quick: {
    passes: 1,
    loop: { warmup: 3, samples: 7 },
    scaling: { warmup: 3, samples: 7 },
    stream: { warmup: 3, samples: 7 },
  },
};

const WORKLOADS = {
  loop: CONTENDERS,
  scaling: ['tessera', 'hand'],
  stream: CONTENDERS,
};

// ---------------------------------------------------------------- child side

async function sample(fn, { warmup, samples }) {
  for (let i = 0; i < warmup; i++) await fn();
  const out = [];
  for (let i = 0; i < samples; i++) {
    globalThis.gc?.();
    out.push(await fn());
  }
  return out;
}

/** Fewer rounds per run → more runs, so each size gets a similar amount of work. */
function scaledPlan(plan, rounds) {
  const factor = Math.min(10, Math.max(1, HEADLINE_ROUNDS / rounds));
  return { warmup: Math.ceil(plan.warmup * factor), samples: Math.ceil(plan.samples * factor) };
}

async function runChild(contenderName, workload, plan) {
  if (!WORKLOADS[workload]?.includes(contenderName)) {
    throw new Error(`no workload "${workload}" for contender "${contenderName}"`);
  }
  const contender = await loadContender(contenderName);
  const rssStartMB = process.memoryUsage().rss / 2 ** 20;
  const result = { contender: contenderName, workload, rssStartMB };

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
  result.peakRssMB = peakRssMB();
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
        const into = (merged[workload][contender] ??= { peakRssMB: 0, rssStartMB: 0 });
        into.peakRssMB = Math.max(into.peakRssMB, child.peakRssMB);
        into.rssStartMB = Math.max(into.rssStartMB, child.rssStartMB);
        if (workload === 'loop') (into.usPerRound ??= []).push(...child.usPerRound);
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

function report(merged, quick, plan) {
  const loop = Object.fromEntries(
    Object.entries(merged.loop).map(([name, data]) => [name, { ...summarize(data.usPerRound), peakRssMB: data.peakRssMB, rssStartMB: data.rssStartMB }]),
  );
  const stream = Object.fromEntries(
    Object.entries(merged.stream).map(([name, data]) => [name, { ...summarize(data.ms), peakRssMB: data.peakRssMB, rssStartMB: data.rssStartMB }]),
  );
  const scaling = Object.fromEntries(
    Object.entries(merged.scaling).map(([name, data]) => {
      const sizes = Object.fromEntries(Object.entries(data.usPerRound).map(([rounds, values]) => [rounds, summarize(values)]));
      const first = sizes[SCALING_ROUNDS[0]].median;
      const last = sizes[SCALING_ROUNDS[SCALING_ROUNDS.length - 1]].median;
      return [name, { sizes, ratioLastToFirst: last / first }];
    }),
  );

  const ratios = {
    loopTesseraOverPi: loop.tessera.median / loop.pi.median,
    loopTesseraOverHand: loop.tessera.median / loop.hand.median,
    streamTesseraOverHand: stream.tessera.median / stream.hand.median,
    streamTesseraOverPi: stream.tessera.median / stream.pi.median,
  };
  const targets = [
    target(`agent loop, Tessera / pi-agent-core (µs per round, ${HEADLINE_ROUNDS} rounds)`, ratios.loopTesseraOverPi, 0.5),
    target('big stream, Tessera / hand-written loop (ms)', ratios.streamTesseraOverHand, 1.5),
  ];

  const out = [];
  const label = { tessera: 'Tessera (all hooks observed)', hand: 'hand-written loop', pi: 'pi-agent-core' };
  out.push('');
  out.push(`AGENT LOOP — ${HEADLINE_ROUNDS} tool rounds per run (1 text delta + 1 echo call each, then a final reply)`);
  out.push(`${loop.tessera.n} measured runs per contender after ${plan.loop.warmup} warm-ups${plan.passes > 1 ? ` (x${plan.passes} processes)` : ''}${quick ? ' [quick]' : ''}`);
  out.push(
    table(
      ['contender', 'median µs/round', 'p25', 'p75', 'min', 'RSS start MB', 'peak RSS MB', 'vs hand', 'vs pi'],
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
  out.push('');
  out.push('SCALING — median µs per round by run length (should stay flat)');
  out.push(
    table(
      ['contender', ...SCALING_ROUNDS.map((r) => `${r} rounds`), `${SCALING_ROUNDS.at(-1)}/${SCALING_ROUNDS[0]}`],
      Object.entries(scaling).map(([name, data]) => [
        label[name],
        ...SCALING_ROUNDS.map((r) => fmt(data.sizes[r].median)),
        fmtRatio(data.ratioLastToFirst),
      ]),
    ),
  );
  out.push('');
  out.push(`BIG STREAM — one model call, ${STREAM.deltas} deltas x ${STREAM.size} chars (${((STREAM.deltas * STREAM.size) / 1e6).toFixed(2)} MB), no tools`);
  out.push(`${stream.tessera.n} measured runs per contender after ${plan.stream.warmup} warm-ups`);
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
  out.push('');
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
