#!/usr/bin/env node
// Capture cost of edit checkpoints: one turn that changes 50 files of 100 KB each.
//
//   npx tsc -b plugins/checkpoints && node plugins/checkpoints/bench/capture.mjs [--rounds 7] [--json]
//
// Runs over the built dist (no TypeScript loader). Each round makes a fresh workspace, opens a
// turn, captures every file once (what the preToolUse tap does before each first change) and
// finalises the turn; the figure is the median round's capture time divided by the file count.
// Target: at most 2 ms per file. `--json` prints the `{ targets: [...] }` shape of test/bench.

import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { FileEditCheckpoints } from '../dist/index.js';

export const FILES = 50;
export const FILE_BYTES = 100 * 1024;
export const LIMIT_MS_PER_FILE = 2;

const clock = { now: () => Date.now(), setTimeout: (callback, ms) => setTimeout(callback, ms), clearTimeout: (handle) => clearTimeout(handle) };

async function round(index) {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-checkpoint-bench-')));
  try {
    const paths = [];
    for (let file = 0; file < FILES; file += 1) {
      const path = join(dir, `src/file-${file}.txt`);
      if (file === 0) await import('node:fs/promises').then(({ mkdir }) => mkdir(join(dir, 'src')));
      await writeFile(path, randomBytes(FILE_BYTES));
      paths.push(path);
    }
    const checkpoints = new FileEditCheckpoints({ clock });
    const sessionId = `bench-${index}`;
    await checkpoints.beginTurn({ sessionId, cwd: dir }, 'edit fifty files');
    const started = performance.now();
    for (const path of paths) await checkpoints.capture(sessionId, path);
    const elapsed = performance.now() - started;
    await checkpoints.finalizeTurn(sessionId);
    return elapsed;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Median capture time per file (ms) over `rounds` rounds, after one warm-up round. */
export async function measureCapture({ rounds = 7 } = {}) {
  await round(-1);
  const times = [];
  for (let index = 0; index < rounds; index += 1) times.push(await round(index));
  times.sort((left, right) => left - right);
  const median = times[Math.floor(times.length / 2)];
  return { msPerFile: median / FILES, rounds: times.map((time) => time / FILES) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt === -1 ? 7 : Number(args[roundsAt + 1]);
  const { msPerFile, rounds: perRound } = await measureCapture({ rounds });
  const met = msPerFile <= LIMIT_MS_PER_FILE;
  if (args.includes('--json')) {
    console.log(JSON.stringify({ targets: [{ name: 'checkpoint capture ms/file (50 × 100 KB)', met, value: msPerFile, limit: LIMIT_MS_PER_FILE }] }));
  } else {
    console.log(`checkpoint capture: ${msPerFile.toFixed(3)} ms/file (median of ${rounds}; ${FILES} files × ${FILE_BYTES / 1024} KB) — target ≤ ${LIMIT_MS_PER_FILE} ms: ${met ? 'met' : 'MISSED'}`);
    console.log(`  per round: ${perRound.map((value) => value.toFixed(3)).join(', ')} ms/file`);
  }
}
