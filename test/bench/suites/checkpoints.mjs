#!/usr/bin/env node
// Edit checkpoint capture: one turn changing 50 files of 100 KB (target <= 2 ms per file).
//
//   npm run build && node test/bench/suites/checkpoints.mjs [--quick]
//
// Baseline measured in the same run: copying the same 50 files with fs.copyFile into a fresh
// directory (the least a capture can do), so the ratio shows the checkpoint bookkeeping.
// Writes test/bench/results/checkpoints.json.

import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FILE_BYTES, FILES, LIMIT_MS_PER_FILE, measureCapture } from '../../../plugins/checkpoints/bench/capture.mjs';
import { fmt, fmtRatio, median, parseArgs, table, target, targetLine, writeResults } from '../lib/common.mjs';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const rounds = quick ? 3 : 9;

async function copyRound() {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-copy-bench-')));
  try {
    await mkdir(join(dir, 'src'));
    await mkdir(join(dir, 'copies'));
    const paths = [];
    for (let file = 0; file < FILES; file += 1) {
      const path = join(dir, 'src', `file-${file}.txt`);
      await writeFile(path, randomBytes(FILE_BYTES));
      paths.push(path);
    }
    const started = performance.now();
    let index = 0;
    for (const path of paths) await copyFile(path, join(dir, 'copies', String(++index)));
    return (performance.now() - started) / FILES;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await copyRound();
const capture = await measureCapture({ rounds });
const copies = [];
for (let round = 0; round < rounds; round += 1) copies.push(await copyRound());
const copyMs = median(copies);

console.log(`checkpoints: capture before the first change, ${FILES} files x ${FILE_BYTES / 1024} KB, median of ${rounds} rounds`);
console.log(
  table(
    ['contender', 'ms per file', 'vs copyFile'],
    [
      ['FileEditCheckpoints.capture', fmt(capture.msPerFile, 3), fmtRatio(capture.msPerFile / copyMs)],
      ['fs.copyFile (baseline)', fmt(copyMs, 3), '1.00x'],
    ],
  ),
);
const targets = [target('checkpoint capture, ms per file (50 x 100 KB)', capture.msPerFile, LIMIT_MS_PER_FILE)];
for (const t of targets) console.log(targetLine(t));
writeResults('checkpoints', { suite: 'checkpoints', quick, files: FILES, fileBytes: FILE_BYTES, captureMsPerFile: capture.msPerFile, copyFileMsPerFile: copyMs, ratio: capture.msPerFile / copyMs, targets });
