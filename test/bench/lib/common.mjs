// Small helpers shared by the benchmark scripts: argument parsing, statistics,
// table printing and result files. Plain ESM, no dependencies.

import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const REPO_ROOT = dirname(dirname(BENCH_DIR));
export const RESULTS_DIR = join(BENCH_DIR, 'results');

/** `--flag` → true, `--key value` → 'value'. Unknown flags are kept; callers validate. */
export function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) {
      out[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      out[arg.slice(2)] = argv[++i];
    } else {
      out[arg.slice(2)] = true;
    }
  }
  return out;
}

export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export const median = (values) => quantile(values, 0.5);

/** Summary numbers for one list of samples. */
export function summarize(values) {
  return {
    n: values.length,
    median: median(values),
    min: Math.min(...values),
    p25: quantile(values, 0.25),
    p75: quantile(values, 0.75),
    max: Math.max(...values),
  };
}

export function fmt(value, digits = 1) {
  if (value === undefined || value === null || Number.isNaN(value)) return '-';
  return value.toFixed(digits);
}

export function fmtRatio(value) {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : '-';
}

/** Left-aligns the first column, right-aligns the rest. */
export function table(headers, rows) {
  const cells = [headers, ...rows].map((row) => row.map((cell) => String(cell)));
  const widths = headers.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row) =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join('\n');
}

/** A target check: `value <= limit`. Never throws; a miss is reported, not fatal. */
export function target(name, value, limit) {
  const met = Number.isFinite(value) && value <= limit;
  return { name, value, limit, met };
}

export function targetLine(t) {
  // Ratios ("A / B", "A vs B") print as 1.23x; absolute figures (ms, MB, tasks/s) as numbers.
  const isRatio = / \/ | vs /.test(t.name);
  const value = typeof t.value !== 'number' ? String(t.value ?? '') : isRatio ? fmtRatio(t.value) : String(Number(t.value.toFixed(2)));
  // A met target is on its limit's good side; that tells which way the limit points.
  const atMost = typeof t.value !== 'number' || typeof t.limit !== 'number' || t.met === t.value <= t.limit;
  const limit = t.limit === undefined ? '' : ` (target ${typeof t.limit === 'number' ? `${atMost ? '<=' : '>='} ${t.limit}` : t.limit})`;
  return `${t.met ? 'MET   ' : 'MISSED'}  ${t.name}: ${value}${limit}`;
}

export function environment() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    date: new Date().toISOString(),
  };
}

export function writeResults(name, data) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  return file;
}

export function peakRssMB() {
  // resourceUsage().maxRSS is in kilobytes.
  return process.resourceUsage().maxRSS / 1024;
}
