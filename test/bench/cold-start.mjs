#!/usr/bin/env node
// Cold-start benchmark: wall time of a fresh `node` process that loads a
// framework, runs one offline turn streaming "hello" and prints it.
//
//   node test/bench/cold-start.mjs [--quick] [--runs N]
//
// Programs: Tessera (cold/tessera-one-turn.mjs), pi-agent-core
// (peers/cold-pi.mjs), Vercel ai (peers/cold-ai.mjs) and bare `node -e ''`.
// Each gets 2 warm-up runs (OS file cache), then N measured runs; programs
// take turns within every round so background noise is shared fairly, and the
// starting program rotates from round to round.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  BENCH_DIR,
  REPO_ROOT,
  environment,
  fmt,
  fmtRatio,
  parseArgs,
  summarize,
  table,
  target,
  targetLine,
  writeResults,
} from './lib/common.mjs';

const PROGRAMS = [
  { id: 'tessera', label: 'Tessera (kernel + test preset)', args: [join(BENCH_DIR, 'cold', 'tessera-one-turn.mjs')], output: 'hello\n' },
  { id: 'pi', label: 'pi-agent-core', args: [join(BENCH_DIR, 'peers', 'cold-pi.mjs')], output: 'hello\n' },
  { id: 'ai', label: 'Vercel ai (streamText + mock)', args: [join(BENCH_DIR, 'peers', 'cold-ai.mjs')], output: 'hello\n' },
  { id: 'node', label: "bare node -e ''", args: ['-e', ''], output: '' },
];

const WARMUP = 2;

function runOnce(program) {
  const start = process.hrtime.bigint();
  const child = spawnSync(process.execPath, program.args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (child.error) throw new Error(`${program.id}: could not run: ${child.error.message}`);
  if (child.status !== 0) {
    throw new Error(`${program.id}: exited with ${child.status ?? child.signal}\n${child.stderr}`);
  }
  if (child.stdout !== program.output) {
    throw new Error(`${program.id}: printed ${JSON.stringify(child.stdout)}, expected ${JSON.stringify(program.output)}\n${child.stderr}`);
  }
  return ms;
}

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const runs = args.runs !== undefined ? Number(args.runs) : quick ? 10 : 30;
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${args.runs}`);

for (const program of PROGRAMS) for (let i = 0; i < WARMUP; i++) runOnce(program);

const samples = Object.fromEntries(PROGRAMS.map((program) => [program.id, []]));
for (let round = 0; round < runs; round++) {
  for (let k = 0; k < PROGRAMS.length; k++) {
    const program = PROGRAMS[(round + k) % PROGRAMS.length];
    samples[program.id].push(runOnce(program));
  }
}

const stats = Object.fromEntries(PROGRAMS.map((program) => [program.id, summarize(samples[program.id])]));
const med = (id) => stats[id].median;
const ratios = {
  tesseraOverAi: med('tessera') / med('ai'),
  tesseraOverPi: med('tessera') / med('pi'),
};
const frameworkCostMs = {
  tessera: med('tessera') - med('node'),
  pi: med('pi') - med('node'),
  ai: med('ai') - med('node'),
};
const targets = [target('cold start, Tessera / Vercel ai (ms)', ratios.tesseraOverAi, 0.6)];

const out = [];
out.push('');
out.push('COLD START — fresh node process: load framework, one offline turn streaming "hello", print it');
out.push(`${runs} measured runs per program after ${WARMUP} warm-ups each, interleaved round-robin${quick ? ' [quick]' : ''}`);
out.push(
  table(
    ['program', 'median ms', 'p25', 'p75', 'min', 'minus bare node', 'vs Tessera'],
    PROGRAMS.map((program) => [
      program.label,
      fmt(med(program.id)),
      fmt(stats[program.id].p25),
      fmt(stats[program.id].p75),
      fmt(stats[program.id].min),
      program.id === 'node' ? '-' : fmt(med(program.id) - med('node')),
      fmtRatio(med(program.id) / med('tessera')),
    ]),
  ),
);
out.push('');
if (quick) out.push('NOTE: --quick takes fewer samples; numbers are noisier than a full run.');
out.push('TARGETS (cold-start)');
for (const t of targets) out.push(`  ${targetLine(t)}`);
out.push(`  info   cold start, Tessera / pi-agent-core (ms): ${fmtRatio(ratios.tesseraOverPi)}`);
out.push(`  info   Tessera's own cost over bare node: ${fmt(frameworkCostMs.tessera)} ms (pi ${fmt(frameworkCostMs.pi)} ms, ai ${fmt(frameworkCostMs.ai)} ms)`);
console.log(out.join('\n'));

const file = writeResults('cold-start', {
  bench: 'cold-start',
  quick,
  runs,
  warmup: WARMUP,
  environment: environment(),
  programs: PROGRAMS.map(({ id, label, args: programArgs }) => ({ id, label, args: programArgs })),
  stats,
  ratios,
  frameworkCostMs,
  targets,
  samples,
});
console.log(`\nresults: ${file}`);
