#!/usr/bin/env node
// Session tree storage: @tessera/plugin-session-store-jsonl vs pi-coding-agent's SessionManager.
//
//   node test/bench/suites/session-tree.mjs [--quick]
//
// 1. open + buildSessionContext of a generated 100,000-entry (~50 MB) session, each run in a
//    fresh child process (time, retained heap, peak RSS growth). Target: <= 0.5x pi's time,
//    peak memory <= 2x the file size.
// 2. append 100,000 message entries with flush() every 100. Target: >= 50,000 entries/s.
// 3. list() over 1,000 generated 1 MB session files. Target: <= 0.2x pi's time.
// Fixtures are generated in a temp dir at run time and removed afterwards. Build first:
// `npm run build`.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCH_DIR, environment, fmt, fmtRatio, median, parseArgs, table, target, targetLine, writeResults } from '../lib/common.mjs';

const PI_SESSION_MANAGER = pathToFileURL(
  join(BENCH_DIR, 'peers', 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'core', 'session-manager.js'),
).href;
const SELF = fileURLToPath(import.meta.url);

const args = parseArgs(process.argv.slice(2));

// ------------------------------------------------------------------ child mode: one open
if (args.child) {
  const file = args.file;
  // Import first: the measurement is open + build context, not module loading.
  const tessera = args.child === 'tessera' ? await import('@tessera/plugin-session-store-jsonl') : undefined;
  const pi = args.child === 'pi' ? await import(PI_SESSION_MANAGER) : undefined;
  let interactive;
  if (args.child === 'interactive') {
    const [{ createKernel, InteractiveSession }, { testPreset }, { jsonlSessionStore }] = await Promise.all([
      import('@tessera/kernel'),
      import('@tessera/preset-test'),
      import('@tessera/plugin-session-store-jsonl'),
    ]);
    const kernel = await createKernel({ plugins: testPreset({ turns: [], replace: [jsonlSessionStore({ agentDir: args.agent, terminalId: null, onWarning() {} })] }) });
    interactive = { kernel, InteractiveSession };
  }
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  // Heap (heapUsed, so garbage not yet collected counts too: no GC is forced) is sampled
  // whenever the event loop turns (between the chunks of an async load), once more between
  // open and buildSessionContext (the end of a load is synchronous) and at the end.
  // A fully synchronous load is only seen at its end, so its figure is a lower bound.
  let peakHeap = 0;
  const sample = () => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed - heapBefore);
  };
  const sampler = setInterval(sample, 1);
  const started = performance.now();
  let messages;
  if (interactive) {
    // Resume through the facade a product uses, up to the moment a prompt can be submitted.
    const session = new interactive.InteractiveSession({ kernel: interactive.kernel, cwd: '/bench', resumeSessionId: args.id });
    await session.whenReady();
    sample();
    messages = session.getMessages().length;
  } else if (tessera) {
    const session = await tessera.SessionManager.open(file, { agentDir: args.agent, terminalId: null, onWarning() {} });
    sample();
    messages = session.buildSessionContext().messages.length;
  } else {
    const session = pi.SessionManager.open(file, args.agent);
    sample();
    messages = session.buildSessionContext().messages.length;
  }
  const ms = performance.now() - started;
  clearInterval(sampler);
  sample();
  const heapRetained = process.memoryUsage().heapUsed - heapBefore;
  const peakRssGrowth = process.resourceUsage().maxRSS * 1024 - rssBefore;
  process.stdout.write(JSON.stringify({ ms, messages, heapRetained, peakHeap, peakRssGrowth }));
  process.exit(0);
}

const quick = Boolean(args.quick);
const sizes = quick
  ? { openEntries: 10_000, openRuns: 2, appendEntries: 20_000, listFiles: 100, listRuns: 1 }
  : { openEntries: 100_000, openRuns: 5, appendEntries: 100_000, listFiles: 1_000, listRuns: 3 };

const { SessionManager } = await import('@tessera/plugin-session-store-jsonl');
const { SessionManager: PiSessionManager } = await import(PI_SESSION_MANAGER);
const root = mkdtempSync(join(tmpdir(), 'tessera-bench-session-'));
const MB = 1024 * 1024;

// ------------------------------------------------------------------ fixtures
const PAD = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(8).slice(0, 230); // ~50 MB at 100,000 entries
function entryLine(index, parentId) {
  const id = index.toString(16).padStart(8, '0');
  const timestamp = new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString();
  const message =
    index % 2 === 0
      ? { role: 'user', content: [{ type: 'text', text: `question ${index} ${PAD}` }], timestamp: Date.parse(timestamp) }
      : {
          role: 'assistant',
          content: [{ type: 'text', text: `answer ${index} ${PAD}` }],
          provider: 'anthropic',
          model: 'claude-test',
          usage: { input: 10, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 30, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
          stopReason: 'stop',
          timestamp: Date.parse(timestamp),
        };
  return { id, line: JSON.stringify({ type: 'message', id, parentId, timestamp, message }) };
}

function writeSession(file, sessionId, entries, cwd = '/bench') {
  const fd = openSync(file, 'w');
  writeSync(fd, `${JSON.stringify({ type: 'session', version: 3, id: sessionId, timestamp: '2026-01-01T00:00:00.000Z', cwd })}\n`);
  let parent = null;
  let chunk = [];
  for (let index = 0; index < entries; index += 1) {
    const { id, line } = entryLine(index, parent);
    parent = id;
    chunk.push(line);
    if (chunk.length === 1000) {
      writeSync(fd, `${chunk.join('\n')}\n`);
      chunk = [];
    }
  }
  if (chunk.length) writeSync(fd, `${chunk.join('\n')}\n`);
  closeSync(fd);
}

function runChild(contender, file, agent, id = 'none') {
  const result = spawnSync(process.execPath, ['--expose-gc', SELF, '--child', contender, '--file', file, '--agent', agent, '--id', id], {
    encoding: 'utf8',
    maxBuffer: 16 * MB,
  });
  if (result.status !== 0) throw new Error(`${contender} child failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

const results = { environment: environment(), quick, sizes, open: {}, append: {}, list: {} };
const targets = [];

try {
  // ---------------------------------------------------------------- 1. open + build context
  const openDir = join(root, 'open');
  mkdirSync(openDir, { recursive: true });
  const bigFile = join(openDir, 'big.jsonl');
  writeSession(bigFile, 'big-session', sizes.openEntries);
  const fileBytes = statSync(bigFile).size;
  const samples = { tessera: [], pi: [] };
  for (let run = 0; run < sizes.openRuns; run += 1) {
    // Alternate the order so neither contender always runs on a warmer page cache.
    for (const contender of run % 2 ? ['pi', 'tessera'] : ['tessera', 'pi']) samples[contender].push(runChild(contender, bigFile, join(root, `agent-${contender}`)));
  }
  if (samples.tessera[0].messages !== samples.pi[0].messages) throw new Error(`message counts differ: ${samples.tessera[0].messages} vs ${samples.pi[0].messages}`);
  const openMs = { tessera: median(samples.tessera.map((s) => s.ms)), pi: median(samples.pi.map((s) => s.ms)) };
  const peak = { tessera: median(samples.tessera.map((s) => s.peakRssGrowth)), pi: median(samples.pi.map((s) => s.peakRssGrowth)) };
  const peakHeap = { tessera: median(samples.tessera.map((s) => s.peakHeap)), pi: median(samples.pi.map((s) => s.peakHeap)) };
  const retained = { tessera: median(samples.tessera.map((s) => s.heapRetained)), pi: median(samples.pi.map((s) => s.heapRetained)) };
  results.open = { entries: sizes.openEntries, fileBytes, openMs, peakHeap, peakRssGrowth: peak, heapRetained: retained, samples };
  console.log(`\nopen + buildSessionContext: ${sizes.openEntries} entries, ${fmt(fileBytes / MB)} MB, ${sizes.openRuns} runs each (fresh process)`);
  console.log(
    table(
      ['contender', 'median ms', 'peak heap MB (sampled)', 'peak RSS growth MB', 'retained heap MB', 'context messages'],
      ['tessera', 'pi'].map((c) => [c, fmt(openMs[c]), fmt(peakHeap[c] / MB), fmt(peak[c] / MB), fmt(retained[c] / MB), samples[c][0].messages]),
    ),
  );
  targets.push(target('open + build context, Tessera / pi time', openMs.tessera / openMs.pi, 0.5));
  targets.push(target('open + build context, Tessera peak heap / file size', peakHeap.tessera / fileBytes, 2));
  results.open.peakRssGrowthOverFile = peak.tessera / fileBytes; // printed for information: RSS includes GC headroom

  // ---------------------------------------------------------------- 1b. resume through InteractiveSession
  {
    const entries = 10_000;
    const resumeId = 'resume-session';
    const agent = join(root, 'agent-interactive');
    const projectDir = join(agent, 'sessions', '--bench--');
    mkdirSync(projectDir, { recursive: true });
    const file = join(projectDir, `2026-01-01T00-00-00-000Z_${resumeId}.jsonl`);
    writeSession(file, resumeId, entries);
    const runs = quick ? 3 : 7;
    const resumeSamples = { interactive: [], pi: [] };
    for (let run = 0; run < runs; run += 1) {
      for (const contender of run % 2 ? ['pi', 'interactive'] : ['interactive', 'pi']) {
        resumeSamples[contender].push(runChild(contender, file, contender === 'pi' ? join(root, 'agent-pi-resume') : agent, resumeId));
      }
    }
    if (resumeSamples.interactive[0].messages !== resumeSamples.pi[0].messages) {
      throw new Error(`resume message counts differ: ${resumeSamples.interactive[0].messages} vs ${resumeSamples.pi[0].messages}`);
    }
    const resumeMs = { interactive: median(resumeSamples.interactive.map((s) => s.ms)), pi: median(resumeSamples.pi.map((s) => s.ms)) };
    results.resume = { entries, resumeMs, samples: resumeSamples };
    console.log(`\nresume to first prompt ready: ${entries} entries, ${runs} runs each (fresh process)`);
    console.log(
      table(
        ['contender', 'median ms', 'context messages'],
        [
          ['InteractiveSession({ resumeSessionId }) + whenReady()', fmt(resumeMs.interactive), resumeSamples.interactive[0].messages],
          ['pi SessionManager.open + buildSessionContext', fmt(resumeMs.pi), resumeSamples.pi[0].messages],
        ],
      ),
    );
    targets.push(target('resume of a 10,000-entry session to first prompt ready, InteractiveSession / pi open + build context', resumeMs.interactive / resumeMs.pi, 0.5));
  }

  // ---------------------------------------------------------------- 2. append
  const appendRate = {};
  const message = (index) =>
    index % 2 ? { role: 'assistant', content: [{ type: 'text', text: `answer ${index} ${PAD}` }], provider: 'anthropic', model: 'claude-test' } : { role: 'user', content: `question ${index} ${PAD}` };
  {
    const session = SessionManager.create('/bench-append', { agentDir: join(root, 'append'), terminalId: null, onWarning() {} });
    session.appendMessage(message(1)); // first assistant: the file exists from here on
    await session.flush();
    const started = performance.now();
    for (let index = 0; index < sizes.appendEntries; index += 1) {
      session.appendMessage(message(index));
      if ((index + 1) % 100 === 0) await session.flush();
    }
    await session.flush();
    appendRate.tessera = sizes.appendEntries / ((performance.now() - started) / 1000);
    await session.close();
  }
  {
    const session = PiSessionManager.create('/bench-append', join(root, 'append-pi'));
    session.appendMessage(message(1));
    const count = Math.min(sizes.appendEntries, 20_000); // pi has no flush(): each append is an appendFileSync
    const started = performance.now();
    for (let index = 0; index < count; index += 1) session.appendMessage(message(index));
    appendRate.pi = count / ((performance.now() - started) / 1000);
  }
  results.append = { entries: sizes.appendEntries, flushEvery: 100, entriesPerSecond: appendRate };
  console.log(`\nappend ${sizes.appendEntries} message entries, flush() (drain + fsync) every 100`);
  console.log(table(['contender', 'entries/s'], [['tessera', fmt(appendRate.tessera, 0)], ['pi (appendFileSync, no fsync; info only)', fmt(appendRate.pi, 0)]]));
  targets.push({ name: 'append, Tessera entries/s', value: `${Math.round(appendRate.tessera)}/s`, limit: '>= 50000/s', met: appendRate.tessera >= 50_000 });

  // ---------------------------------------------------------------- 3. list
  const listDir = join(root, 'list');
  mkdirSync(listDir, { recursive: true });
  const template = join(root, 'template.jsonl');
  writeSession(template, 'template', 2000); // about 1 MB
  const body = (await import('node:fs')).readFileSync(template, 'utf8');
  const bodyWithoutHeader = body.slice(body.indexOf('\n') + 1);
  for (let index = 0; index < sizes.listFiles; index += 1) {
    const id = `00000000-0000-4000-8000-${index.toString().padStart(12, '0')}`;
    const header = JSON.stringify({ type: 'session', version: 3, id, timestamp: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString(), cwd: '/bench-list' });
    writeFileSync(join(listDir, `2026-01-01T00-00-00-000Z_${id}.jsonl`), `${header}\n${bodyWithoutHeader}`);
  }
  const listSamples = { tessera: [], pi: [] };
  let counts = {};
  for (let run = 0; run < sizes.listRuns; run += 1) {
    let started = performance.now();
    counts.tessera = (await SessionManager.list('/bench-list', { sessionDir: listDir, terminalId: null })).length;
    listSamples.tessera.push(performance.now() - started);
    started = performance.now();
    counts.pi = (await PiSessionManager.list('/bench-list', listDir)).length;
    listSamples.pi.push(performance.now() - started);
  }
  if (counts.tessera !== sizes.listFiles || counts.pi !== sizes.listFiles) throw new Error(`list counts: ${JSON.stringify(counts)}`);
  const listMs = { tessera: median(listSamples.tessera), pi: median(listSamples.pi) };
  results.list = { files: sizes.listFiles, fileBytes: Buffer.byteLength(body), listMs, samples: listSamples };
  console.log(`\nlist() over ${sizes.listFiles} files of ${fmt(Buffer.byteLength(body) / MB, 2)} MB, ${sizes.listRuns} runs`);
  console.log(table(['contender', 'median ms', 'sessions'], ['tessera', 'pi'].map((c) => [c, fmt(listMs[c]), counts[c]])));
  targets.push(target('list, Tessera / pi time', listMs.tessera / listMs.pi, 0.2));
} finally {
  rmSync(root, { recursive: true, force: true });
}

results.targets = targets;
console.log('\ntargets');
for (const t of targets) console.log(`${t.met ? 'TARGET met   ' : 'TARGET MISSED'}  ${targetLine(t).slice(8)}`);
const file = writeResults('session-tree', results);
console.log(`\nresults: ${file}`);
