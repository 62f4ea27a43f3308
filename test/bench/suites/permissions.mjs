#!/usr/bin/env node
// evaluatePermission with 1,000 rules: median µs per check (target <= 20 µs).
//
//   npm run build && node test/bench/suites/permissions.mjs [--quick]
//
// Baseline measured in the same run: the same checks against 10 rules, so the ratio shows
// what 100x more rules cost. Writes test/bench/results/permissions.json.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { evaluatePermission } from '@tessera/plugin-permissions';
import { fmt, fmtRatio, median, parseArgs, RESULTS_DIR, table } from '../lib/common.mjs';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const SAMPLES = quick ? 7 : 31;
const CHECKS_PER_SAMPLE = quick ? 200 : 2000;
const TARGET_US = 20;
const cwd = process.cwd();

function makeRules(count) {
  const words = ['npm', 'pnpm', 'yarn', 'git', 'cargo', 'make', 'docker', 'kubectl', 'python3', 'node', 'go', 'uv', 'gh', 'just', 'bun'];
  const allow = [];
  const deny = [];
  const ask = [];
  for (let i = 0; allow.length + deny.length + ask.length < count; i++) {
    const word = words[i % words.length];
    const kind = i % 10;
    if (kind < 6) allow.push(`Bash(${word} task${i}:*)`);
    else if (kind === 6) deny.push(`Bash(${word} danger${i} *)`);
    else if (kind === 7) ask.push(`Bash(${word} deploy${i}:*)`);
    else if (kind === 8) deny.push(`Read(./private${i}/**)`);
    else allow.push(`WebFetch(domain:site${i}.example.com)`);
  }
  allow.push('Bash(ls *)', 'Bash(echo *)', 'Edit(./src/**)', 'mcp__tools__*');
  deny.push('Bash(rm -rf *)', 'Read(./.env)');
  return { allow, deny, ask };
}

const CHECKS = [
  ['Bash', { command: 'npm task0 --watch' }],
  ['Bash', { command: 'ls -la && echo done | git task3' }],
  ['Bash', { command: 'timeout 60 cargo task4 --release' }],
  ['Bash', { command: 'git status; rm -rf build' }],
  ['Read', { file_path: join(cwd, 'src', 'index.ts') }],
  ['Edit', { file_path: join(cwd, 'src', 'index.ts') }],
  ['WebFetch', { url: 'https://site9.example.com/docs' }],
  ['mcp__tools__search', { q: 'x' }],
];

function measure(rules) {
  const samples = [];
  // Warm-up compiles the rules (cached per rules object) and the JIT.
  for (let i = 0; i < 500; i++) for (const [tool, input] of CHECKS) evaluatePermission(tool, input, 'default', rules, { cwd });
  for (let s = 0; s < SAMPLES; s++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CHECKS_PER_SAMPLE; i++) {
      const [tool, input] = CHECKS[i % CHECKS.length];
      evaluatePermission(tool, input, 'default', rules, { cwd });
    }
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / CHECKS_PER_SAMPLE);
  }
  return median(samples);
}

const big = makeRules(1000);
const small = makeRules(10);
const total = big.allow.length + big.deny.length + big.ask.length;
const coldStart = process.hrtime.bigint();
evaluatePermission('Bash', { command: 'ls' }, 'default', makeRules(1000), { cwd });
const compileUs = Number(process.hrtime.bigint() - coldStart) / 1000;
const smallUs = measure(small);
const bigUs = measure(big);
const met = bigUs <= TARGET_US;

console.log(`permissions: evaluatePermission, ${CHECKS.length} call shapes, ${SAMPLES} samples x ${CHECKS_PER_SAMPLE} checks${quick ? ' (quick)' : ''}`);
console.log(
  table(
    ['rules', 'median µs/check', 'ratio vs 10 rules'],
    [
      ['10 (baseline)', fmt(smallUs, 2), '1.00x'],
      [`${total}`, fmt(bigUs, 2), fmtRatio(bigUs / smallUs)],
    ],
  ),
);
console.log(`first check incl. compiling ${total} rules: ${fmt(compileUs / 1000, 2)} ms`);
console.log(`${met ? 'TARGET met' : 'TARGET MISSED'}: median ${fmt(bigUs, 2)} µs per check with ${total} rules (target <= ${TARGET_US} µs; ${fmtRatio(TARGET_US / bigUs)} headroom)`);

mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(
  join(RESULTS_DIR, 'permissions.json'),
  `${JSON.stringify({ suite: 'permissions', quick, rules: total, medianUsPerCheck: bigUs, baselineUsPerCheck10Rules: smallUs, ratio: bigUs / smallUs, firstCheckCompileMs: compileUs / 1000, target: { limitUs: TARGET_US, met }, targets: [{ name: `evaluatePermission, µs per check with ${total} rules`, value: bigUs, limit: TARGET_US, met }] }, null, 2)}\n`,
);
