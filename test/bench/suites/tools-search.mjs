#!/usr/bin/env node
// Built-in search tools vs the classic Unix tools, in the same run:
//   Grep (content mode, line numbers) vs GNU `grep -rnE` over a generated tree,
//   Glob `**/*.ts` vs `find -name '*.ts'` over the same tree (plus, for information, the
//   same files through Glob's fast-glob path, `pkg*/**/*.ts`).
//
//   npm run build && node test/bench/suites/tools-search.mjs [--quick]
//
// The tree (20,000 files / ~200 MB; --quick: 1/20 of that) is generated into a temp
// directory before timing starts and removed afterwards. Each contender runs once to warm
// the page cache, then `runs` times; medians are compared. Tessera runs in-process (what
// an agent pays per call); grep and find include their process start-up, which is what an
// agent shelling out would pay too.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environment, fmt, fmtRatio, parseArgs, summarize, table, target, targetLine, writeResults } from '../lib/common.mjs';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const FILES = quick ? 1_000 : 20_000;
const BYTES_PER_FILE = 10_240;
const RUNS = quick ? 3 : 7;
const PATTERN = 'handle[A-Z][a-z]+_[0-9]{3}';
// No literal every match must contain: every file is decoded and scanned (reported, not a target).
const PATTERN_NO_LITERAL = '[A-Z][a-z]+_[0-9]{3}';
const LIMIT = 1.5;

let tools;
try {
  tools = await import('@tessera/plugin-tools');
} catch (error) {
  console.error(`tools-search: cannot import @tessera/plugin-tools (${error.message}). Build first: npm run build`);
  process.exit(1);
}

// ------------------------------------------------------------------ tree

/** Deterministic pseudo-random numbers (mulberry32), so every run searches the same tree. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['const', 'value', 'return', 'function', 'request', 'import', 'export', 'async', 'await', 'string', 'number',
  'result', 'error', 'session', 'plugin', 'kernel', 'token', 'config', 'stream', 'buffer', 'index', 'options', 'data'];
const EXTENSIONS = ['.ts', '.ts', '.js', '.md', '.json'];

function generate(root) {
  const next = random(42);
  let planted = 0;
  let bytes = 0;
  const perDir = 50;
  for (let file = 0; file < FILES; file += 1) {
    const dir = join(root, `pkg${Math.floor(file / (perDir * 20))}`, `mod${Math.floor(file / perDir) % 20}`);
    if (file % perDir === 0) mkdirSync(dir, { recursive: true });
    let content = '';
    let line = 0;
    while (content.length < BYTES_PER_FILE) {
      line += 1;
      const words = [];
      for (let w = 0; w < 8; w += 1) words.push(WORDS[Math.floor(next() * WORDS.length)]);
      // About one file in a hundred gets a line the pattern matches.
      if (line === 40 && next() < 0.01) {
        words.push(`handleRequest_${String(file % 1000).padStart(3, '0')}`);
        planted += 1;
      }
      content += `${words.join(' ')};\n`;
    }
    writeFileSync(join(dir, `file${file}${EXTENSIONS[file % EXTENSIONS.length]}`), content);
    bytes += content.length;
  }
  return { planted, bytes };
}

// ------------------------------------------------------------------ timing

async function time(fn) {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

async function measure(fn) {
  await fn(); // warm the page cache and the JIT
  const samples = [];
  let last;
  for (let run = 0; run < RUNS; run += 1) {
    const { ms, result } = await time(fn);
    samples.push(ms);
    last = result;
  }
  return { summary: summarize(samples), last };
}

function shell(command, argv) {
  const run = spawnSync(command, argv, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.error) throw run.error;
  if (run.status !== 0 && run.status !== 1) throw new Error(`${command} exited with ${run.status}: ${run.stderr}`);
  return run.stdout;
}

const root = mkdtempSync(join(tmpdir(), 'tessera-bench-tools-'));
try {
  console.log(`tools-search: generating ${FILES} files under ${root} …`);
  const tree = generate(root);
  console.log(`tools-search: ${FILES} files, ${fmt(tree.bytes / 1024 / 1024)} MB, ${tree.planted} planted matches; ${RUNS} runs each${quick ? ' (quick)' : ''}\n`);

  const context = { cwd: root, sessionId: 'bench', toolCallId: 'bench', signal: new AbortController().signal };
  const grep = tools.grepTool({ maxContentLines: 1_000_000 });
  const glob = tools.globTool();

  const tesseraGrep = await measure(() => grep.execute({ pattern: PATTERN, path: root, output_mode: 'content' }, context));
  const gnuGrep = await measure(() => shell('grep', ['-rnE', PATTERN, root]));
  const tesseraScan = await measure(() => grep.execute({ pattern: PATTERN_NO_LITERAL, path: root, output_mode: 'content' }, context));
  const gnuScan = await measure(() => shell('grep', ['-rnE', PATTERN_NO_LITERAL, root]));
  const tesseraGlob = await measure(() => glob.execute({ pattern: '**/*.ts', path: root }, context));
  const find = await measure(() => shell('find', [root, '-type', 'f', '-name', '*.ts']));
  // Same files through fast-glob (a path prefix keeps the pattern off Glob's `**/<name>` walk); reported, not a target.
  const tesseraGlobGeneral = await measure(() => glob.execute({ pattern: 'pkg*/**/*.ts', path: root }, context));

  // The contenders must agree on what they found, or the timing means nothing.
  const grepLines = gnuGrep.last.split('\n').filter(Boolean).length;
  const findLines = find.last.split('\n').filter(Boolean).length;
  if (tesseraGrep.last.data.numMatches !== grepLines) throw new Error(`Grep found ${tesseraGrep.last.data.numMatches} lines, grep -rn ${grepLines}`);
  if (tesseraGlob.last.data.numFiles !== findLines) throw new Error(`Glob found ${tesseraGlob.last.data.numFiles} files, find ${findLines}`);
  if (tesseraGlobGeneral.last.data.numFiles !== findLines) throw new Error(`Glob (fast-glob) found ${tesseraGlobGeneral.last.data.numFiles} files, find ${findLines}`);
  if (JSON.stringify(tesseraGlobGeneral.last.data.filenames) !== JSON.stringify(tesseraGlob.last.data.filenames)) throw new Error('Glob listed different files through fast-glob');

  const grepRatio = tesseraGrep.summary.median / gnuGrep.summary.median;
  const globRatio = tesseraGlob.summary.median / find.summary.median;
  console.log(
    table(
      ['contender', 'median ms', 'p25', 'p75', 'found', 'ratio'],
      [
        ['Tessera Grep (content, -n)', fmt(tesseraGrep.summary.median), fmt(tesseraGrep.summary.p25), fmt(tesseraGrep.summary.p75), grepLines, fmtRatio(grepRatio)],
        ['GNU grep -rnE', fmt(gnuGrep.summary.median), fmt(gnuGrep.summary.p25), fmt(gnuGrep.summary.p75), grepLines, '1.00x'],
        ['Tessera Grep, no literal (info)', fmt(tesseraScan.summary.median), fmt(tesseraScan.summary.p25), fmt(tesseraScan.summary.p75), tesseraScan.last.data.numMatches, fmtRatio(tesseraScan.summary.median / gnuScan.summary.median)],
        ['GNU grep -rnE, no literal', fmt(gnuScan.summary.median), fmt(gnuScan.summary.p25), fmt(gnuScan.summary.p75), gnuScan.last.split('\n').filter(Boolean).length, '1.00x'],
        ['Tessera Glob **/*.ts', fmt(tesseraGlob.summary.median), fmt(tesseraGlob.summary.p25), fmt(tesseraGlob.summary.p75), findLines, fmtRatio(globRatio)],
        ['find -name *.ts', fmt(find.summary.median), fmt(find.summary.p25), fmt(find.summary.p75), findLines, '1.00x'],
        ['Tessera Glob pkg*/**/*.ts (fast-glob, info)', fmt(tesseraGlobGeneral.summary.median), fmt(tesseraGlobGeneral.summary.p25), fmt(tesseraGlobGeneral.summary.p75), tesseraGlobGeneral.last.data.numFiles, fmtRatio(tesseraGlobGeneral.summary.median / find.summary.median)],
      ],
    ),
  );
  const targets = [target('Grep vs grep -rn', grepRatio, LIMIT), target('Glob vs find', globRatio, LIMIT)];
  console.log('');
  for (const t of targets) console.log(`TARGET ${t.met ? 'met' : 'MISSED'}  ${targetLine(t).replace(/^(MET|MISSED)\s+/, '')}`);
  const file = writeResults('tools-search', {
    environment: environment(),
    quick,
    tree: { files: FILES, bytes: tree.bytes, plantedMatches: tree.planted },
    runs: RUNS,
    pattern: PATTERN,
    results: {
      tesseraGrep: tesseraGrep.summary,
      gnuGrep: gnuGrep.summary,
      tesseraGrepNoLiteral: tesseraScan.summary,
      gnuGrepNoLiteral: gnuScan.summary,
      tesseraGlob: tesseraGlob.summary,
      find: find.summary,
      tesseraGlobFastGlob: tesseraGlobGeneral.summary,
    },
    ratios: { grep: grepRatio, grepNoLiteral: tesseraScan.summary.median / gnuScan.summary.median, glob: globRatio, globFastGlob: tesseraGlobGeneral.summary.median / find.summary.median },
    targets,
  });
  console.log(`\nresults: ${file}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
