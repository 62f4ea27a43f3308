#!/usr/bin/env node
// formats-corpus: read every Claude Code file in ../shared/compat/{claude,plugins} with the
// Tessera readers (parse + validate), in one process.
//
//   node test/bench/suites/formats-corpus.mjs [--quick]
//
// Build first: npm run build
//
// Measures, per run of the whole corpus:
//   - cold: a fresh `node` child per sample (modules imported, then the corpus read once);
//     the read time excludes module loading, which is reported separately;
//   - warm: the same process reading the corpus again and again (per-file medians);
//   - baseline: the bare parse of the same files (JSON.parse / yaml.parse of the frontmatter,
//     no validation, no diagnostics), measured the same way, for the ratio.
// Targets: per-file median ≤ 1 ms (cold run), whole corpus < 300 ms cold.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT, environment, fmt, fmtRatio, median, parseArgs, summarize, table, writeResults } from '../lib/common.mjs';

// The real-world corpus beside the clone; a plain clone falls back to the project's fixtures
// (same layout, far fewer files — the numbers then say so and are not comparable).
const REAL_COMPAT = process.env.TESSERA_COMPAT_DIR ?? join(REPO_ROOT, '..', 'shared', 'compat');
const COMPAT = existsSync(join(REAL_COMPAT, 'claude')) ? REAL_COMPAT : join(REPO_ROOT, 'test', 'fixtures', 'compat');
if (COMPAT !== REAL_COMPAT) console.warn(`formats-corpus: ${REAL_COMPAT} not found; measuring the fixtures in test/fixtures/compat instead`);
const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** Same classification as libs/formats/src/corpus.test.ts. */
function kindOf(file) {
  const name = basename(file);
  const parts = file.split(sep);
  if (name === 'SOURCES.md') return undefined;
  if (parts.includes('settings') && name.endsWith('.json')) return 'settings';
  if (parts.includes('plugin-hooks') || (name === 'hooks.json' && parts.at(-2) === 'hooks')) return 'hooks';
  if (name === 'SKILL.md' || (parts.includes('skills') && name.endsWith('__SKILL.md'))) return 'skill';
  if (name === 'marketplace.json' && parts.at(-2) === '.claude-plugin') return 'marketplace';
  if (name === 'plugin.json' && parts.at(-2) === '.claude-plugin') return 'manifest';
  if (name === '.mcp.json') return 'mcp';
  if (name.endsWith('.md') && parts.includes('agents')) return 'agent';
  if (name.endsWith('.md') && parts.includes('commands')) return 'command';
  return undefined;
}

function corpus() {
  return [...walk(join(COMPAT, 'claude')), ...walk(join(COMPAT, 'plugins'))]
    .map((file) => ({ file, kind: kindOf(file) }))
    .filter((entry) => entry.kind !== undefined);
}

async function readers() {
  const formats = await import('@tessera/formats');
  const config = await import('@tessera/plugin-config');
  return {
    skill: (file) => formats.readSkillFile(file),
    agent: (file) => formats.readAgentDefinition(file),
    command: (file) => formats.readCommandFile(file),
    manifest: (file) => formats.readPluginManifest(dirname(dirname(file))),
    marketplace: (file) => formats.readMarketplace(file),
    mcp: (file) => formats.readMcpConfig(file),
    settings: (file) => config.readSettingsLayer(file, 'project'),
    // Hook files: JSON + the settings hooks schema (structural check; the runner normalises).
    hooks: (file) => {
      const json = formats.parseJsonText(readFileSync(file, 'utf8'), file);
      return json.ok ? config.hooksSchema.safeParse(json.value.hooks) : json;
    },
  };
}

async function baselines() {
  const yaml = await import('yaml');
  const frontmatter = (file) => {
    const text = readFileSync(file, 'utf8');
    const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
    if (match) {
      try {
        yaml.parse(match[1]);
      } catch {
        // the baseline only parses; Tessera's fallback reader has no counterpart here
      }
    }
  };
  const json = (file) => JSON.parse(readFileSync(file, 'utf8'));
  return { skill: frontmatter, agent: frontmatter, command: frontmatter, manifest: json, marketplace: json, mcp: json, settings: json, hooks: json };
}

/** Reads the whole corpus once; returns per-file ms and total ms. */
function readAll(entries, table) {
  const perFile = [];
  const start = process.hrtime.bigint();
  let errors = 0;
  for (const { file, kind } of entries) {
    const t0 = process.hrtime.bigint();
    const result = table[kind](file);
    perFile.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (result && Array.isArray(result.diagnostics) && result.diagnostics.some((d) => d.severity === 'error')) errors += 1;
    if (result && result.success === false) errors += 1;
  }
  return { totalMs: Number(process.hrtime.bigint() - start) / 1e6, perFile, errors };
}

// ----------------------------------------------------------------- child mode

if (args.child) {
  const t0 = process.hrtime.bigint();
  const entries = corpus();
  const table = args.child === 'baseline' ? await baselines() : await readers();
  const importMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const run = readAll(entries, table);
  process.stdout.write(JSON.stringify({ importMs, totalMs: run.totalMs, medianMs: median(run.perFile), files: entries.length, errors: run.errors }));
  process.exit(0);
}

// ---------------------------------------------------------------- parent mode

const self = fileURLToPath(import.meta.url);
function cold(mode) {
  const started = process.hrtime.bigint();
  const child = spawnSync(process.execPath, [self, '--child', mode], { cwd: REPO_ROOT, encoding: 'utf8' });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (child.status !== 0) {
    console.error(child.stderr);
    throw new Error(`formats-corpus child (${mode}) exited with ${child.status}`);
  }
  return { ...JSON.parse(child.stdout), wallMs };
}

const coldSamples = quick ? 3 : 15;
const warmSamples = quick ? 5 : 40;
const coldRuns = { tessera: [], baseline: [] };
for (let index = 0; index < coldSamples; index += 1) {
  // Alternate which contender goes first so disk-cache effects fall on both.
  const order = index % 2 === 0 ? ['tessera', 'baseline'] : ['baseline', 'tessera'];
  for (const mode of order) coldRuns[mode].push(cold(mode));
}

const entries = corpus();
const tables = { tessera: await readers(), baseline: await baselines() };
const warm = { tessera: { totals: [], perFile: [] }, baseline: { totals: [], perFile: [] } };
for (let index = 0; index < 3; index += 1) for (const mode of ['tessera', 'baseline']) readAll(entries, tables[mode]);
for (let index = 0; index < warmSamples; index += 1) {
  for (const mode of ['tessera', 'baseline']) {
    const run = readAll(entries, tables[mode]);
    warm[mode].totals.push(run.totalMs);
    warm[mode].perFile.push(median(run.perFile));
  }
}

const files = entries.length;
const counts = {};
for (const { kind } of entries) counts[kind] = (counts[kind] ?? 0) + 1;
const coldStat = (mode, key) => median(coldRuns[mode].map((run) => run[key]));
const summary = {
  cold: {
    tessera: { totalMs: coldStat('tessera', 'totalMs'), perFileMedianMs: coldStat('tessera', 'medianMs'), importMs: coldStat('tessera', 'importMs'), wallMs: coldStat('tessera', 'wallMs') },
    baseline: { totalMs: coldStat('baseline', 'totalMs'), perFileMedianMs: coldStat('baseline', 'medianMs'), importMs: coldStat('baseline', 'importMs'), wallMs: coldStat('baseline', 'wallMs') },
  },
  warm: {
    tessera: { totalMs: median(warm.tessera.totals), perFileMedianMs: median(warm.tessera.perFile) },
    baseline: { totalMs: median(warm.baseline.totals), perFileMedianMs: median(warm.baseline.perFile) },
  },
};
const filesWithErrors = coldRuns.tessera[0].errors;

console.log(`formats-corpus: ${files} files (${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}); ${coldSamples} cold processes, ${warmSamples} warm runs each`);
console.log('');
console.log(
  table(
    ['measure (median)', 'Tessera readers', 'bare parse', 'ratio'],
    [
      ['cold: whole corpus, ms', fmt(summary.cold.tessera.totalMs), fmt(summary.cold.baseline.totalMs), fmtRatio(summary.cold.tessera.totalMs / summary.cold.baseline.totalMs)],
      ['cold: per-file median, ms', fmt(summary.cold.tessera.perFileMedianMs, 3), fmt(summary.cold.baseline.perFileMedianMs, 3), fmtRatio(summary.cold.tessera.perFileMedianMs / summary.cold.baseline.perFileMedianMs)],
      ['cold: module import, ms', fmt(summary.cold.tessera.importMs), fmt(summary.cold.baseline.importMs), fmtRatio(summary.cold.tessera.importMs / summary.cold.baseline.importMs)],
      ['cold: process wall, ms', fmt(summary.cold.tessera.wallMs), fmt(summary.cold.baseline.wallMs), fmtRatio(summary.cold.tessera.wallMs / summary.cold.baseline.wallMs)],
      ['warm: whole corpus, ms', fmt(summary.warm.tessera.totalMs), fmt(summary.warm.baseline.totalMs), fmtRatio(summary.warm.tessera.totalMs / summary.warm.baseline.totalMs)],
      ['warm: per-file median, ms', fmt(summary.warm.tessera.perFileMedianMs, 3), fmt(summary.warm.baseline.perFileMedianMs, 3), fmtRatio(summary.warm.tessera.perFileMedianMs / summary.warm.baseline.perFileMedianMs)],
    ],
  ),
);
console.log('');
console.log(`files with error diagnostics: ${filesWithErrors} (expected 0)`);

const targets = [
  { name: 'per-file median, cold, ms', value: summary.cold.tessera.perFileMedianMs, limit: 1, met: summary.cold.tessera.perFileMedianMs <= 1 },
  { name: 'whole corpus, cold (read after import), ms', value: summary.cold.tessera.totalMs, limit: 300, met: summary.cold.tessera.totalMs < 300 },
];
for (const t of targets) console.log(`${t.met ? 'TARGET met   ' : 'TARGET MISSED'}  ${t.name}: ${fmt(t.value, 3)} (target ${t.name.startsWith('whole') ? '<' : '<='} ${t.limit})`);

const file = writeResults('formats-corpus', {
  environment: environment(),
  quick,
  files,
  counts,
  filesWithErrors,
  summary,
  samples: {
    cold: coldRuns,
    warm: { tessera: summarize(warm.tessera.totals), baseline: summarize(warm.baseline.totals) },
  },
  targets,
});
console.log(`\nresults: ${file}`);
if (filesWithErrors !== 0) {
  console.error('formats-corpus: real corpus files produced error diagnostics');
  process.exit(1);
}
