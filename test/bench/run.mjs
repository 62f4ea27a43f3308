#!/usr/bin/env node
// Entry point of `npm run bench`.
//
//   node test/bench/run.mjs [--only <bench>] [--quick]
//
// Benches: agent-loop, cold-start, cli, and every test/bench/suites/<name>.mjs. A suite writes
// test/bench/results/<name>.json with `targets: [{ name, met, value, limit }]`.
//
// Installs the peer frameworks (test/bench/peers) when needed, runs each
// benchmark in its own `node --expose-gc` child process, then prints a summary
// of the targets. Exits non-zero when a benchmark crashes; a missed target is
// reported as MISSED but does not fail the run.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, REPO_ROOT, RESULTS_DIR, parseArgs, targetLine } from './lib/common.mjs';

// The foundation's benches, then every suite a plugin adds under test/bench/suites/ (scratch
// scripts named *.tmp.mjs, which git ignores, are not suites).
const SUITES_DIR = join(BENCH_DIR, 'suites');
const SUITES = existsSync(SUITES_DIR)
  ? readdirSync(SUITES_DIR).filter((file) => file.endsWith('.mjs') && !file.endsWith('.tmp.mjs')).map((file) => file.slice(0, -4)).sort()
  : [];
const BENCHES = ['agent-loop', 'cold-start', 'cli', ...SUITES];
const benchFile = (name) => (SUITES.includes(name) ? join(SUITES_DIR, `${name}.mjs`) : join(BENCH_DIR, `${name}.mjs`));

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(1);
}

let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (error) {
  fail(`${error.message}\nusage: node test/bench/run.mjs [--only ${BENCHES.join('|')}] [--quick]`);
}
for (const key of Object.keys(args)) {
  if (key !== 'only' && key !== 'quick') fail(`unknown option --${key}`);
}
if (args.only !== undefined && !BENCHES.includes(args.only)) {
  fail(`--only must be one of ${BENCHES.join(', ')}, got ${JSON.stringify(args.only)}`);
}
const quick = Boolean(args.quick);
const selected = args.only ? [args.only] : BENCHES;

// ------------------------------------------------------------ peer install

function peersNeedInstall() {
  const peers = join(BENCH_DIR, 'peers');
  const installed = join(peers, 'node_modules', '.package-lock.json');
  if (!existsSync(join(peers, 'node_modules')) || !existsSync(installed)) return true;
  return statSync(join(peers, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs;
}

if (peersNeedInstall()) {
  console.log('bench: installing peer frameworks (npm ci --prefix test/bench/peers)…');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const install = spawnSync(npm, ['ci', '--prefix', 'test/bench/peers', '--no-audit', '--no-fund'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (install.status !== 0) fail(`installing the peers failed (${install.error?.message ?? `exit ${install.status}`})`);
}

// ------------------------------------------------------------------ benches

const outcomes = [];
for (const name of selected) {
  const resultFile = join(RESULTS_DIR, `${name}.json`);
  rmSync(resultFile, { force: true });
  console.log(`\n=== ${name}${quick ? ' (quick)' : ''} ===`);
  const started = performance.now();
  const child = spawnSync(process.execPath, ['--expose-gc', benchFile(name), ...(quick ? ['--quick'] : [])], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  const seconds = (performance.now() - started) / 1000;
  if (child.status !== 0 || !existsSync(resultFile)) {
    outcomes.push({ name, ok: false, seconds, reason: child.error?.message ?? `exit ${child.status ?? child.signal}` });
    continue;
  }
  const result = JSON.parse(readFileSync(resultFile, 'utf8'));
  // Suites report targets as { name, met, value, limit }; anything else is listed as-is.
  const targets = Array.isArray(result.targets) ? result.targets.filter((t) => typeof t?.met === 'boolean') : [];
  outcomes.push({ name, ok: true, seconds, targets });
}

// ------------------------------------------------------------------ summary

const lines = ['', '=== SUMMARY ==='];
for (const outcome of outcomes) {
  if (!outcome.ok) {
    lines.push(`CRASHED ${outcome.name} (${outcome.reason}, after ${outcome.seconds.toFixed(1)} s)`);
    continue;
  }
  lines.push(`${outcome.name} (${outcome.seconds.toFixed(1)} s)`);
  for (const t of outcome.targets) lines.push(`  ${targetLine(t)}`);
}
const crashed = outcomes.filter((outcome) => !outcome.ok);
const missed = outcomes.flatMap((outcome) => (outcome.ok ? outcome.targets.filter((t) => !t.met) : []));
lines.push('');
if (crashed.length > 0) {
  lines.push(`${crashed.length} benchmark(s) crashed. Is the repo built (npm run build) and are the peers installed?`);
}
const checked = outcomes.reduce((sum, outcome) => sum + (outcome.ok ? outcome.targets.length : 0), 0);
if (missed.length > 0) {
  lines.push(`${missed.length} of ${checked} target(s) MISSED (reported only; a missed target does not fail the run).`);
} else if (checked > 0) {
  lines.push(`All ${checked} target(s) checked were met.`);
}
lines.push(`JSON results: ${RESULTS_DIR}`);
console.log(lines.join('\n'));
process.exitCode = crashed.length > 0 ? 1 : 0;
