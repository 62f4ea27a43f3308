#!/usr/bin/env node
// The interactive terminal (issue: the `tessera` TUI).
//
//   1. Streaming 400 tokens into a 30-message transcript in an 80×24 terminal: bytes written.
//      Tessera's app (a real InteractiveSession over a scripted model) against pi-tui used raw
//      (the same transcript as Markdown components and an editor: the renderer's own figure)
//      and a minimal ink 6 app (history in <Static>, the streaming reply and an input line),
//      each fed the same tokens at 5 ms intervals. Targets: ≤ 1.2× pi-tui, ≤ 0.1× ink.
//   2. Keystroke-to-echo latency while a turn streams: a key every 10 ms, time until the
//      terminal receives the redrawn prompt holding it. Target: p99 ≤ 16 ms.
//   3. Time from starting `tessera` to an interactive prompt, measured in tmux the same way
//      for Claude Code (capture-pane polled every 10 ms until the mode line shows). Target:
//      ≤ 0.5× Claude Code's.
//
// Needs `npm run build` (Tessera's dist and the CLI bundle) and the peers (test/bench/peers:
// ink, react, pi-tui, Claude Code), which run.mjs installs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { EventEmitter } from 'node:events';
import { BENCH_DIR, REPO_ROOT, environment, fmt, fmtRatio, median, parseArgs, quantile, table, target, targetLine, writeResults } from '../lib/common.mjs';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const PEERS = join(BENCH_DIR, 'peers');
const peerRequire = createRequire(join(PEERS, 'package.json'));
const targets = [];
const results = { environment: environment() };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const COLUMNS = 80;
const ROWS = 24;
const TOKENS = Array.from({ length: 400 }, (_, index) => (index % 24 === 23 ? `word${index}.\n\n` : index % 9 === 8 ? `\`code${index}\` ` : `word${index} `));
const HISTORY = Array.from({ length: 30 }, (_, index) =>
  index % 2 === 0 ? { role: 'user', text: `Question ${index / 2}: what does module ${index} do, and where is it used?` } : { role: 'assistant', text: `Module ${index - 1} parses the **settings** file.\n\nIt is used by \`loadConfig\` and the CLI's \`doctor\` command; see src/config-${index}.ts.` },
);
const STREAM_INTERVAL_MS = 5;

/** A terminal in memory that counts bytes (the same recorder for every contender). */
class CountingTerminal {
  constructor() {
    this.bytes = 0;
    this.onWrite = undefined;
  }
  start(onInput, onResize) {
    this.onInput = onInput;
    this.onResize = onResize;
  }
  stop() {}
  async drainInput() {}
  write(data) {
    this.bytes += Buffer.byteLength(data);
    this.onWrite?.(data);
  }
  get columns() {
    return COLUMNS;
  }
  get rows() {
    return ROWS;
  }
  get kittyProtocolActive() {
    return false;
  }
  moveBy(lines) {
    if (lines !== 0) this.write(lines > 0 ? `\x1b[${lines}B` : `\x1b[${-lines}A`);
  }
  hideCursor() {
    this.write('\x1b[?25l');
  }
  showCursor() {
    this.write('\x1b[?25h');
  }
  clearLine() {
    this.write('\x1b[K');
  }
  clearFromCursor() {
    this.write('\x1b[J');
  }
  clearScreen() {
    this.write('\x1b[2J\x1b[H');
  }
  setTitle() {}
  setProgress() {}
  type(data) {
    this.onInput?.(data);
  }
}

// ------------------------------------------------------------------ Tessera

async function tesseraApp(turns) {
  const { createKernel, InteractiveSession } = await import('@tessera/kernel');
  const { testPreset } = await import('@tessera/preset-test');
  const { builtinCommands } = await import('@tessera/plugin-commands');
  const { TesseraTui, TerminalApprovals } = await import('@tessera/plugin-tui');
  const kernel = await createKernel({ plugins: testPreset({ turns, plugins: [...builtinCommands()] }) });
  const session = new InteractiveSession({ kernel, cwd: REPO_ROOT });
  await session.whenReady();
  for (const message of HISTORY) session.getSession().injectMessage(message.role, message.text);
  const terminal = new CountingTerminal();
  const app = new TesseraTui({ terminal, session, approvals: new TerminalApprovals(), cwd: REPO_ROOT, version: 'bench', modelLabel: () => 'scripted', onExit: () => undefined });
  await app.start();
  await sleep(50);
  return {
    terminal,
    session,
    async close() {
      app.stop();
      await session.shutdown();
      await kernel.shutdown();
    },
  };
}

async function tesseraStreamBytes() {
  const { terminal, session, close } = await tesseraApp([{ text: TOKENS, delayMs: STREAM_INTERVAL_MS }]);
  const before = terminal.bytes;
  terminal.type('continue');
  terminal.type('\r');
  while (!session.isExecuting()) await sleep(1);
  while (session.isExecuting()) await sleep(5);
  await sleep(50);
  const bytes = terminal.bytes - before;
  await close();
  return bytes;
}

async function tesseraKeystrokeLatency() {
  const { terminal, session, close } = await tesseraApp([{ text: TOKENS, delayMs: STREAM_INTERVAL_MS }]);
  terminal.type('start streaming');
  terminal.type('\r');
  while (!session.isExecuting()) await sleep(1);
  const latencies = [];
  const keys = 'qzxjkqzxjk';
  let index = 0;
  while (session.isExecuting() && latencies.length < 150) {
    const key = keys[index++ % keys.length];
    let echoed;
    const typedAt = performance.now();
    const seen = new Promise((resolve) => {
      terminal.onWrite = (data) => {
        if (echoed === undefined && data.includes(key)) {
          echoed = performance.now();
          resolve();
        }
      };
    });
    terminal.type(key);
    await Promise.race([seen, sleep(200)]);
    latencies.push((echoed ?? performance.now()) - typedAt);
    terminal.onWrite = undefined;
    await sleep(10);
  }
  await close();
  return latencies;
}

// ------------------------------------------------------------------ pi-tui, raw

async function piTuiStreamBytes() {
  const { TUI, Container, Markdown, Editor, Text } = await import(peerRequire.resolve('@mariozechner/pi-tui'));
  const identity = (text) => text;
  const theme = { heading: identity, link: identity, linkUrl: identity, code: identity, codeBlock: identity, codeBlockBorder: identity, quote: identity, quoteBorder: identity, hr: identity, listBullet: identity, bold: identity, italic: identity, strikethrough: identity, underline: identity };
  const terminal = new CountingTerminal();
  const tui = new TUI(terminal, true);
  const transcript = new Container();
  for (const message of HISTORY) transcript.addChild(message.role === 'user' ? new Text(`> ${message.text}`, 0, 0) : new Markdown(message.text, 0, 0, theme));
  const editor = new Editor(tui, { borderColor: identity, selectList: { selectedPrefix: identity, selectedText: identity, description: identity, scrollInfo: identity, noMatch: identity } });
  tui.addChild(transcript);
  tui.addChild(editor);
  tui.setFocus(editor);
  tui.start();
  await sleep(50);
  const before = terminal.bytes;
  transcript.addChild(new Text('> continue', 0, 0));
  const reply = new Markdown('', 0, 0, theme);
  transcript.addChild(reply);
  let text = '';
  for (const token of TOKENS) {
    text += token;
    reply.setText(text);
    tui.requestRender();
    await sleep(STREAM_INTERVAL_MS);
  }
  await sleep(50);
  const bytes = terminal.bytes - before;
  tui.stop();
  return bytes;
}

// ------------------------------------------------------------------ ink 6

async function inkStreamBytes() {
  const React = peerRequire('react');
  const { render, Box, Text, Static } = await import(peerRequire.resolve('ink'));
  const h = React.createElement;
  const stdout = Object.assign(new EventEmitter(), {
    columns: COLUMNS,
    rows: ROWS,
    isTTY: true,
    bytes: 0,
    write(data) {
      this.bytes += Buffer.byteLength(data);
      return true;
    },
  });
  const stdin = Object.assign(new PassThrough(), { isTTY: false, setRawMode() {}, ref() {}, unref() {} });
  const App = ({ history, reply }) =>
    h(
      Box,
      { flexDirection: 'column' },
      h(Static, { items: history }, (message, index) => h(Text, { key: index }, message.role === 'user' ? `> ${message.text}` : message.text)),
      reply === undefined ? null : h(Text, null, reply),
      h(Box, { borderStyle: 'single' }, h(Text, null, '> ')),
    );
  const instance = render(h(App, { history: HISTORY, reply: undefined }), { stdout, stdin, stderr: stdout, patchConsole: false, exitOnCtrlC: false, debug: false });
  await sleep(50);
  const before = stdout.bytes;
  const history = [...HISTORY, { role: 'user', text: 'continue' }];
  let text = '';
  for (const token of TOKENS) {
    text += token;
    instance.rerender(h(App, { history, reply: text }));
    await sleep(STREAM_INTERVAL_MS);
  }
  await sleep(50);
  const bytes = stdout.bytes - before;
  instance.unmount();
  return bytes;
}

// ------------------------------------------------------------------ start-up in tmux

const TESSERA_BIN = join(REPO_ROOT, 'presets', 'cli', 'bin', 'tessera.js');
function claudeBinary() {
  const wrapper = join(PEERS, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
  if (existsSync(wrapper) && statSync(wrapper).size > 1_000_000) return wrapper;
  const platform = join(PEERS, 'node_modules', '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`, 'claude');
  return existsSync(platform) ? platform : undefined;
}

function timeToPrompt(socket, command, marker) {
  spawnSync('tmux', ['-L', socket, 'kill-session', '-t', 'bench']);
  let started = performance.now();
  try {
    execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-s', 'bench', '-x', '100', '-y', '30', `${command}; sleep 30`], { stdio: 'pipe' });
  } catch {
    // A tmux server that was still exiting from the last kill: start again once.
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    spawnSync('sleep', ['0.2']);
    started = performance.now();
    execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-s', 'bench', '-x', '100', '-y', '30', `${command}; sleep 30`], { stdio: 'pipe' });
  }
  for (;;) {
    const pane = spawnSync('tmux', ['-L', socket, 'capture-pane', '-p', '-t', 'bench'], { encoding: 'utf8' }).stdout ?? '';
    if (pane.includes(marker)) break;
    if (performance.now() - started > 30_000) throw new Error(`no prompt after 30 s; pane:\n${pane}`);
    spawnSync('sleep', ['0.01']);
  }
  const ms = performance.now() - started;
  spawnSync('tmux', ['-L', socket, 'kill-session', '-t', 'bench']);
  return ms;
}

function startupInTmux() {
  if (spawnSync('tmux', ['-V']).status !== 0) return { skipped: 'tmux is not installed' };
  const claude = claudeBinary();
  if (!claude) return { skipped: 'Claude Code is not installed in test/bench/peers' };
  const root = mkdtempSync(join(tmpdir(), 'tessera-bench-tui-'));
  const socket = `tessera-bench-${process.pid}`;
  try {
    const home = join(root, 'home');
    const workspace = join(root, 'ws');
    mkdirSync(home);
    mkdirSync(workspace);
    execFileSync('git', ['init', '-q', workspace]);
    const key = 'sk-ant-bench-key-000000000000';
    // Claude Code's first-run dialogs answered in its own state file: onboarding done, the
    // folder trusted, the environment's API key approved (it keeps the key's last 20 characters).
    writeFileSync(
      join(home, '.claude.json'),
      JSON.stringify({ hasCompletedOnboarding: true, theme: 'dark', numStartups: 10, customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] }, projects: { [workspace]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }),
    );
    const env = `HOME=${home} ANTHROPIC_API_KEY=${key} ANTHROPIC_BASE_URL=http://127.0.0.1:9 TERM=xterm-256color TESSERA_SESSION_LOG=0 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1`;
    const tessera = `cd ${workspace} && env ${env} ${process.execPath} ${TESSERA_BIN}`;
    const claudeCommand = `cd ${workspace} && env ${env} ${claude}`;
    // Warm-up: code caches, Claude Code's state migration.
    timeToPrompt(socket, tessera, 'manual mode on');
    timeToPrompt(socket, claudeCommand, 'shift+tab to cycle');
    const runs = quick ? 3 : 8;
    const tesseraMs = [];
    const claudeMs = [];
    for (let run = 0; run < runs; run++) {
      tesseraMs.push(timeToPrompt(socket, tessera, 'manual mode on'));
      claudeMs.push(timeToPrompt(socket, claudeCommand, 'shift+tab to cycle'));
    }
    return { tesseraMs: median(tesseraMs), claudeMs: median(claudeMs), runs };
  } finally {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    // Killed processes may still be writing their state files for a moment.
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (error) {
      console.warn(`could not remove ${root}: ${error.message}`);
    }
  }
}

// ------------------------------------------------------------------ run

const runs = quick ? 2 : 5;
const bytes = { tessera: [], piTui: [], ink: [] };
for (let run = 0; run < runs; run++) {
  bytes.tessera.push(await tesseraStreamBytes());
  bytes.piTui.push(await piTuiStreamBytes());
  bytes.ink.push(await inkStreamBytes());
}
const streamed = { tessera: median(bytes.tessera), piTui: median(bytes.piTui), ink: median(bytes.ink) };
console.log(`\nstreaming 400 tokens into a 30-message transcript, ${COLUMNS}×${ROWS}, bytes written (median of ${runs}):`);
console.log(table(['renderer', 'bytes', 'vs pi-tui'], Object.entries(streamed).map(([name, value]) => [name, String(Math.round(value)), fmtRatio(value / streamed.piTui)])));
targets.push(target('streaming bytes, Tessera / pi-tui raw', streamed.tessera / streamed.piTui, 1.2));
targets.push(target('streaming bytes, Tessera / ink 6', streamed.tessera / streamed.ink, 0.1));
Object.assign(results, { streamedBytes: streamed });

const latencies = await tesseraKeystrokeLatency();
const p99 = quantile(latencies, 0.99);
console.log(`\nkeystroke to echo while streaming: ${latencies.length} keys, median ${fmt(median(latencies), 2)} ms, p99 ${fmt(p99, 2)} ms, max ${fmt(Math.max(...latencies), 2)} ms`);
targets.push(target('keystroke-to-echo latency while streaming, p99 ms', p99, 16));
Object.assign(results, { keystrokeMedianMs: median(latencies), keystrokeP99Ms: p99 });

const startup = startupInTmux();
if (startup.skipped) {
  console.log(`\nstart-up in tmux: skipped (${startup.skipped})`);
  results.startupSkipped = startup.skipped;
} else {
  console.log(`\ntime to an interactive prompt in tmux (median of ${startup.runs}): Tessera ${fmt(startup.tesseraMs, 0)} ms, Claude Code ${fmt(startup.claudeMs, 0)} ms`);
  targets.push(target('time to interactive prompt, Tessera / Claude Code', startup.tesseraMs / startup.claudeMs, 0.5));
  Object.assign(results, { startupTesseraMs: startup.tesseraMs, startupClaudeMs: startup.claudeMs });
}

console.log('');
for (const t of targets) console.log(targetLine(t));
writeResults('tui', { ...results, targets });
process.exit(0);
