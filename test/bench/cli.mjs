#!/usr/bin/env node
// Whole-process CLI benchmark: the Tessera CLI against the CLIs users would pick instead
// (Claude Code, pi), each run as a real process on one small coding task.
//
//   node test/bench/cli.mjs [--quick] [--runs N] [--contenders tessera,claude,pi]
//
// A loopback fake of the Anthropic Messages API (cli/fake-anthropic.mjs, SSE streaming) plays
// the task: pwd → read NOTES.md → write SUMMARY.md → final text, in each client's own tool
// names. Every run gets a fresh workspace; each contender keeps one temp HOME for the whole
// bench (its config and caches are warm after the warm-ups, as on a user's machine). A run
// counts only when the process exits 0, SUMMARY.md holds exactly what the fake asked for
// (including a marker only the read file contained), the fake saw the whole script with no tool
// errors, and the output carries the final text; anything else fails the bench.
//
// Timing and memory come from cli/measure.py (python3, os.wait4 + /proc): wall time, CPU time
// (user + sys of the process and every descendant it reaped) and peak RSS of the process tree.
// Runs are interleaved round-robin and the contender that goes first rotates each round.
// Tessera is skipped, with a note, while `tessera --version` does not print a version.

import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, REPO_ROOT, environment, fmt, fmtRatio, parseArgs, summarize, table, targetLine, writeResults } from './lib/common.mjs';
import { FINAL_TEXT, NOTES_FILE, SUMMARY_FILE, ScriptedMessagesServer, summaryFor } from './cli/fake-anthropic.mjs';

const PEERS = join(BENCH_DIR, 'peers', 'node_modules');
const MEASURE = join(BENCH_DIR, 'cli', 'measure.py');
const TESSERA_BIN = join(REPO_ROOT, 'presets', 'cli', 'bin', 'tessera.js');
const PI_PACKAGE = join(PEERS, '@mariozechner', 'pi-coding-agent');
const CLAUDE_PACKAGE = join(PEERS, '@anthropic-ai', 'claude-code');
const TASK = `Run pwd, then read ${NOTES_FILE} and write a short summary of it to ${SUMMARY_FILE}.`;
const PI_MODEL = 'claude-sonnet-4-5'; // a built-in anthropic model of pi; the fake accepts any
const RUN_TIMEOUT_S = 120;

const args = parseArgs(process.argv.slice(2));
for (const key of Object.keys(args)) {
  if (!['quick', 'runs', 'contenders'].includes(key)) throw new Error(`unknown option --${key}\nusage: node test/bench/cli.mjs [--quick] [--runs N] [--contenders tessera,claude,pi]`);
}
const quick = Boolean(args.quick);
const runs = args.runs !== undefined ? Number(args.runs) : quick ? 3 : 15;
const warmup = quick ? 1 : 2;
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${args.runs}`);

// ------------------------------------------------------------------ prerequisites

function fail(message) {
  console.error(`cli bench: ${message}`);
  process.exit(1);
}

if (process.platform !== 'linux') fail('needs Linux (cli/measure.py reads /proc and uses os.wait4)');
const python = spawnSync('python3', ['-c', 'import sys; assert sys.version_info >= (3, 9); print(sys.executable); print(sys.version.split()[0])'], { encoding: 'utf8' });
if (python.status !== 0) fail(`needs python3 >= 3.9 on PATH to measure child processes (${python.error?.message ?? python.stderr.trim()})`);
// The interpreter itself, not a shim (pyenv…): it runs under each contender's environment.
const [PYTHON, PYTHON_VERSION] = python.stdout.trim().split('\n');

const packageVersion = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;

/** The native Claude Code binary. Its postinstall copies the platform package's binary over the
 *  bin/claude.exe placeholder; when install scripts did not run, the platform package's binary is
 *  the same file, run directly. */
function claudeBinary() {
  const wrapper = join(CLAUDE_PACKAGE, 'bin', 'claude.exe');
  if (existsSync(wrapper) && statSync(wrapper).size > 1_000_000) return wrapper;
  const platform = join(PEERS, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`, 'claude');
  return existsSync(platform) ? platform : undefined;
}

/** Tessera is included only when its CLI answers --version with a version. */
function tesseraStatus() {
  if (!existsSync(TESSERA_BIN)) return { ok: false, note: `${TESSERA_BIN} does not exist` };
  const probe = spawnSync(process.execPath, [TESSERA_BIN, '--version'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  const out = `${probe.stdout ?? ''}`.trim();
  if (probe.error) return { ok: false, note: `\`tessera --version\` failed: ${probe.error.message}` };
  if (probe.status !== 0) return { ok: false, note: `\`tessera --version\` exited ${probe.status ?? probe.signal}: ${(probe.stderr || out).trim().split('\n')[0] ?? ''}` };
  if (!/\d+\.\d+/.test(out)) return { ok: false, note: `\`tessera --version\` printed ${out === '' ? 'nothing' : JSON.stringify(out.slice(0, 80))}, not a version` };
  return { ok: true, version: out.match(/\d+\.\d+[^\s]*/)[0] };
}

// Claude Code and Tessera take the same flags (Tessera's print mode follows Claude Code's).
const PRINT_FLAGS = ['-p', TASK, '--output-format', 'stream-json', '--verbose', '--allowedTools', 'Bash(pwd)', 'Read', 'Write'];

const ALL = [
  {
    id: 'tessera',
    label: 'Tessera CLI',
    command: () => [process.execPath, TESSERA_BIN, ...PRINT_FLAGS],
    env: {},
    output: 'stream-json',
  },
  {
    id: 'claude',
    label: 'Claude Code',
    command: () => [claudeBinary(), ...PRINT_FLAGS],
    env: {
      // No update checks, telemetry, error reports or other non-essential traffic.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
    output: 'stream-json',
  },
  {
    id: 'pi',
    label: 'pi',
    // `pi` is dist/cli.js under `#!/usr/bin/env node`; run with the bench's node.
    command: () => [process.execPath, join(PI_PACKAGE, 'dist', 'cli.js'), '-p', '--provider', 'anthropic', '--model', PI_MODEL, TASK],
    env: { PI_OFFLINE: '1', PI_TELEMETRY: '0' },
    output: 'text',
    // pi reads provider overrides from ~/.pi/agent/models.json: point the built-in anthropic
    // provider at the fake (the key still comes from ANTHROPIC_API_KEY).
    setupHome(home, baseURL) {
      mkdirSync(join(home, '.pi', 'agent'), { recursive: true });
      writeFileSync(join(home, '.pi', 'agent', 'models.json'), `${JSON.stringify({ providers: { anthropic: { baseUrl: baseURL } } }, null, 2)}\n`);
    },
  },
];

const wanted = args.contenders ? String(args.contenders).split(',') : ALL.map((c) => c.id);
for (const id of wanted) if (!ALL.some((c) => c.id === id)) fail(`unknown contender ${JSON.stringify(id)} (tessera, claude, pi)`);

const notes = [];
const skipped = {};
const versions = {};
if (wanted.includes('tessera')) {
  const status = tesseraStatus();
  if (status.ok) versions.tessera = status.version;
  else {
    skipped.tessera = status.note;
    notes.push(`Tessera SKIPPED: ${status.note}. The targets below need it; they are reported as MISSED.`);
  }
}
if (wanted.includes('claude')) {
  if (!claudeBinary()) fail(`Claude Code is not installed in test/bench/peers (no native binary under ${CLAUDE_PACKAGE}); run \`node test/bench/run.mjs --only cli\`, which installs the peers`);
  versions.claude = packageVersion(CLAUDE_PACKAGE);
}
if (wanted.includes('pi')) {
  if (!existsSync(join(PI_PACKAGE, 'dist', 'cli.js'))) fail('pi-coding-agent is not installed in test/bench/peers; run `node test/bench/run.mjs --only cli`, which installs the peers');
  versions.pi = packageVersion(PI_PACKAGE);
}
const CONTENDERS = ALL.filter((c) => wanted.includes(c.id) && !skipped[c.id]).map((c) => ({ ...c, label: `${c.label} ${versions[c.id] ?? ''}`.trim() }));
if (CONTENDERS.length === 0) fail('no contender left to run');

// ------------------------------------------------------------------ one run

const root = realpathSync(mkdtempSync(join(tmpdir(), 'tessera-bench-cli-')));
const server = new ScriptedMessagesServer();
const baseURL = await server.listen();

const homes = {};
for (const contender of CONTENDERS) {
  const home = join(root, `home-${contender.id}`);
  mkdirSync(join(home, 'tmp'), { recursive: true });
  contender.setupHome?.(home, baseURL);
  homes[contender.id] = home;
}

function envFor(contender) {
  const home = homes[contender.id];
  return {
    // A clean environment: nothing from the bench's own (NODE_OPTIONS, tokens, proxies) leaks in.
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TMPDIR: join(home, 'tmp'),
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    ANTHROPIC_API_KEY: 'sk-bench',
    ANTHROPIC_BASE_URL: baseURL,
    // Any attempt to reach another host through proxy support lands on the fake and is reported.
    HTTP_PROXY: baseURL,
    HTTPS_PROXY: baseURL,
    http_proxy: baseURL,
    https_proxy: baseURL,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    ...contender.env,
  };
}

const tail = (text, n = 1500) => (text.length > n ? `…${text.slice(-n)}` : text);

function checkOutput(contender, stdout) {
  if (!stdout.includes(FINAL_TEXT)) return `the output does not contain the final text ${JSON.stringify(FINAL_TEXT)}`;
  if (contender.output === 'stream-json') {
    const lines = stdout.split('\n').filter((line) => line.trim() !== '');
    let result;
    for (const line of lines) {
      try {
        const event = JSON.parse(line);
        if (event?.type === 'result') result = event;
      } catch {
        return `a stream-json line is not JSON: ${JSON.stringify(line.slice(0, 200))}`;
      }
    }
    if (!result) return 'no stream-json `result` event';
    if (result.is_error !== false || result.subtype !== 'success') return `the result event is not a success: ${JSON.stringify(result).slice(0, 300)}`;
  }
  return undefined;
}

/** Runs measure.py asynchronously: the fake server lives in this process and must keep serving. */
function measure(argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [MEASURE, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) reject(new Error(`measure.py failed (${code ?? signal}): ${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

let runCounter = 0;
async function runOnce(contender) {
  const n = ++runCounter;
  const workspace = join(root, `ws-${n}-${contender.id}`);
  const logs = join(root, `logs-${n}-${contender.id}`);
  mkdirSync(workspace);
  mkdirSync(logs);
  const marker = `MK-${randomBytes(6).toString('hex')}`;
  writeFileSync(
    join(workspace, NOTES_FILE),
    `# Release checklist\n\nmarker: ${marker}\n\n- bump the version in package.json\n- run the test suite\n- tag the release and push the tag\n- announce it in #releases\n`,
  );
  server.beginRun({ workspace, marker });
  const [executable, ...argv] = contender.command();
  let m;
  let record;
  try {
    m = await measure(
      ['--cwd', workspace, '--stdout', join(logs, 'stdout'), '--stderr', join(logs, 'stderr'), '--timeout', String(RUN_TIMEOUT_S), '--', executable, ...argv],
      envFor(contender),
    );
  } finally {
    record = server.endRun();
  }
  const stdout = readFileSync(join(logs, 'stdout'), 'utf8');
  const stderr = readFileSync(join(logs, 'stderr'), 'utf8');

  const problems = [...record.problems];
  if (m.timed_out) problems.push(`timed out after ${RUN_TIMEOUT_S} s (killed)`);
  if (m.exit_code !== 0) problems.push(`exited with ${m.exit_code}`);
  const summaryPath = join(workspace, SUMMARY_FILE);
  if (!existsSync(summaryPath)) problems.push(`${SUMMARY_FILE} was not written`);
  else if (readFileSync(summaryPath, 'utf8') !== summaryFor(marker)) problems.push(`${SUMMARY_FILE} differs from what the fake asked for: ${JSON.stringify(readFileSync(summaryPath, 'utf8').slice(0, 200))}`);
  const steps = new Set(record.requests.map((r) => r.kind).filter((kind) => kind?.startsWith('task:')));
  for (let step = 0; step <= 3; step += 1) if (!steps.has(`task:${step}`)) problems.push(`the fake never saw task call ${step + 1}`);
  const outputProblem = checkOutput(contender, stdout);
  if (outputProblem) problems.push(outputProblem);
  const proxied = record.requests.filter((r) => r.kind === 'proxy');
  if (proxied.length > 0) problems.push(`tried to reach other hosts: ${proxied.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  if (problems.length > 0) {
    throw new Error(
      `${contender.id}: the run did not complete the task:\n  - ${problems.join('\n  - ')}\n` +
        `command: ${[executable, ...argv].join(' ')}\nworkspace: ${workspace}\nstdout: ${tail(stdout)}\nstderr: ${tail(stderr)}\nrequests: ${JSON.stringify(record.requests)}`,
    );
  }
  rmSync(workspace, { recursive: true, force: true });
  rmSync(logs, { recursive: true, force: true });

  const count = (predicate) => record.requests.filter(predicate).length;
  const maxRssMB = m.max_rss_kb / 1024;
  const treeRssMB = m.tree_rss_kb / 1024;
  return {
    wallMs: m.wall_ms,
    cpuMs: m.cpu_ms,
    userMs: m.user_ms,
    sysMs: m.sys_ms,
    // Both are lower bounds of the tree's true peak: the largest single process (exact) and the
    // largest sampled sum over the tree; the larger of the two is reported.
    peakRssMB: Math.max(maxRssMB, treeRssMB),
    maxRssMB,
    treeRssMB,
    rssSamples: m.rss_samples,
    cloneSamplesSkipped: m.clone_samples_skipped,
    treeAtPeak: m.tree_at_peak.map(([kb, command]) => `${(kb / 1024).toFixed(1)} MB ${command.replace(REPO_ROOT, '<repo>').replace(root, '<tmp>')}`),
    requests: {
      total: record.requests.length,
      task: count((r) => r.kind?.startsWith('task:')),
      side: count((r) => r.kind === 'side'),
      countTokens: count((r) => r.kind === 'count_tokens'),
      other: count((r) => r.kind === 'other'),
      otherPaths: record.requests.filter((r) => r.kind === 'other' || r.kind === 'side').map((r) => `${r.method} ${r.path}${r.model ? ` (${r.model}, ${r.tools} tools)` : ''}`),
    },
    leftovers: m.leftovers,
  };
}

// ------------------------------------------------------------------ the runs

const samples = Object.fromEntries(CONTENDERS.map((c) => [c.id, []]));
let failed;
try {
  console.log(`fake Messages API at ${baseURL}; temp root ${root}`);
  console.log(`contenders: ${CONTENDERS.map((c) => c.label).join(', ')}`);
  if (skipped.tessera) console.log(`Tessera SKIPPED: ${skipped.tessera}`);
  for (const contender of CONTENDERS) for (let i = 0; i < warmup; i += 1) await runOnce(contender);
  for (let round = 0; round < runs; round += 1) {
    for (let k = 0; k < CONTENDERS.length; k += 1) {
      const contender = CONTENDERS[(round + k) % CONTENDERS.length];
      samples[contender.id].push(await runOnce(contender));
    }
  }
} catch (error) {
  failed = error;
} finally {
  await server.close();
  if (!failed) rmSync(root, { recursive: true, force: true });
}
if (failed) {
  console.error(`\ncli bench FAILED (temp files kept in ${root})\n${failed.stack ?? failed}`);
  process.exit(1);
}
if (server.stray.length > 0) notes.push(`requests outside any run (ignored): ${server.stray.map((r) => `${r.method} ${r.path}`).join(', ')}`);

// ------------------------------------------------------------------ report

const pick = (id, key) => samples[id].map((s) => s[key]);
const stats = Object.fromEntries(
  CONTENDERS.map((c) => [
    c.id,
    {
      wallMs: summarize(pick(c.id, 'wallMs')),
      cpuMs: summarize(pick(c.id, 'cpuMs')),
      userMs: summarize(pick(c.id, 'userMs')),
      sysMs: summarize(pick(c.id, 'sysMs')),
      peakRssMB: summarize(pick(c.id, 'peakRssMB')),
      maxRssMB: summarize(pick(c.id, 'maxRssMB')),
      treeRssMB: summarize(pick(c.id, 'treeRssMB')),
      requestsPerRun: summarize(samples[c.id].map((s) => s.requests.total)),
      sideRequestsPerRun: summarize(samples[c.id].map((s) => s.requests.side + s.requests.other + s.requests.countTokens)),
    },
  ]),
);
const has = (id) => stats[id] !== undefined;
const ratio = (a, b, key) => (has(a) && has(b) ? stats[a][key].median / stats[b][key].median : undefined);
const ratios = {
  tesseraOverClaudeWall: ratio('tessera', 'claude', 'wallMs'),
  tesseraOverClaudePeakRss: ratio('tessera', 'claude', 'peakRssMB'),
  tesseraOverClaudeCpu: ratio('tessera', 'claude', 'cpuMs'),
  tesseraOverPiWall: ratio('tessera', 'pi', 'wallMs'),
  tesseraOverPiPeakRss: ratio('tessera', 'pi', 'peakRssMB'),
  tesseraOverPiCpu: ratio('tessera', 'pi', 'cpuMs'),
};

function cliTarget(name, value, limit, missing) {
  if (value === undefined) return { name, value: `not measured (${missing})`, limit, met: false };
  return { name, value, limit, met: Number.isFinite(value) && value <= limit };
}
const missing = skipped.tessera ? 'Tessera skipped' : !has('claude') ? 'Claude Code not run' : 'Tessera not run';
const targets = [
  cliTarget('CLI task, Tessera / Claude Code wall time', ratios.tesseraOverClaudeWall, 0.35, missing),
  cliTarget('CLI task, Tessera / Claude Code peak RSS', ratios.tesseraOverClaudePeakRss, 0.4, missing),
];

const out = [''];
out.push(`CLI — whole process, one task against a loopback fake Messages API (pwd → read → write SUMMARY.md → final text)`);
out.push(`${runs} measured runs per contender after ${warmup} warm-up(s) each, interleaved round-robin, first contender rotating${quick ? ' [quick]' : ''}`);
out.push(
  table(
    ['contender', 'wall ms', 'p25', 'p75', 'CPU ms (user+sys)', 'peak RSS MB', 'largest process MB', 'requests/run'],
    CONTENDERS.map((c) => {
      const s = stats[c.id];
      return [c.label, fmt(s.wallMs.median), fmt(s.wallMs.p25), fmt(s.wallMs.p75), fmt(s.cpuMs.median), fmt(s.peakRssMB.median), fmt(s.maxRssMB.median), fmt(s.requestsPerRun.median, 0)];
    }),
  ),
);
out.push('medians; peak RSS = max(largest single process from wait4, largest sampled sum over the process tree)');
for (const c of CONTENDERS) {
  const extra = [...new Set(samples[c.id].flatMap((s) => s.requests.otherPaths))];
  if (extra.length > 0) out.push(`  ${c.id}: requests beyond the 4 task calls: ${extra.join('; ')}`);
  const leftovers = [...new Set(samples[c.id].flatMap((s) => s.leftovers))];
  if (leftovers.length > 0) out.push(`  ${c.id}: processes left running after exit (killed): ${leftovers.join('; ')}`);
}
out.push('');
for (const note of notes) out.push(`NOTE: ${note}`);
if (quick) out.push('NOTE: --quick takes few samples; numbers are noisy.');
out.push('TARGETS (cli)');
for (const t of targets) out.push(`  ${targetLine(t)}`);
const info = (name, value) => out.push(`  info    ${name}: ${value === undefined ? '-' : fmtRatio(value)}`);
info('CLI task, Tessera / Claude Code CPU time', ratios.tesseraOverClaudeCpu);
info('CLI task, Tessera / pi wall time', ratios.tesseraOverPiWall);
info('CLI task, Tessera / pi peak RSS', ratios.tesseraOverPiPeakRss);
info('CLI task, Tessera / pi CPU time', ratios.tesseraOverPiCpu);
console.log(out.join('\n'));

const file = writeResults('cli', {
  bench: 'cli',
  quick,
  runs,
  warmup,
  environment: { ...environment(), python: PYTHON_VERSION },
  task: TASK,
  contenders: ALL.filter((c) => wanted.includes(c.id)).map((c) => ({
    id: c.id,
    label: c.label,
    version: versions[c.id],
    skipped: skipped[c.id],
    command: skipped[c.id] ? undefined : c.command().map((part) => part.replace(REPO_ROOT, '<repo>')),
    env: Object.keys(c.env),
  })),
  notes,
  stats,
  ratios,
  targets,
  samples,
});
console.log(`\nresults: ${file}`);
