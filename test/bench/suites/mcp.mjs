#!/usr/bin/env node
// MCP client: start-up of five stdio servers and per-call overhead over the raw SDK client.
//
//   npm run build && node test/bench/mcp.mjs [--quick]
//
// (a) Five server-everything servers declared at once: the time from the first `tools()` call to
//     every server's tools listed, against the slowest single server's own start in the same run
//     (its connection's spawn-to-tools-listed time). Target <= 1.2x: the pool starts servers in
//     parallel and adds little on top. Also printed: one server started alone with the raw SDK,
//     and five raw SDK clients started in parallel (the floor on this machine).
// (b) `echo` through the pool's tool (validate + execute + result mapping) against
//     `client.callTool` on a raw SDK client to another server, interleaved. Target <= 1.1x.
// Writes test/bench/results/mcp.json.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, fmt, fmtRatio, median, parseArgs, table, target, targetLine, writeResults } from '../lib/common.mjs';
import { everythingBin, rawStart } from './mcp/servers.mjs';

const { McpClientPool } = await import(pathToFileURL(join(REPO_ROOT, 'plugins', 'mcp', 'dist', 'index.js')).href);

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const startRounds = quick ? 1 : 5;
const calls = quick ? 200 : 2_000;
const SERVERS = 5;
const bin = everythingBin();
const spec = { type: 'stdio', command: process.execPath, args: [bin], env: {} };

function poolWith(count) {
  const declarations = Array.from({ length: count }, (_, index) => ({ name: `everything${index + 1}`, scope: 'sdk', spec }));
  return new McpClientPool({ sources: [{ name: 'bench', servers: () => declarations }], oauth: false, startupTimeoutMs: 60_000, log: () => undefined });
}

// ------------------------------------------------------------------ (a) start-up

// Warm the file cache and the module graph once.
await (await rawStart(bin)).client.close();

const rounds = [];
for (let round = 0; round < startRounds; round += 1) {
  const solo = await rawStart(bin);
  await solo.client.close();

  const rawParallelStarted = performance.now();
  const raws = await Promise.all(Array.from({ length: SERVERS }, () => rawStart(bin)));
  const rawParallelMs = performance.now() - rawParallelStarted;
  await Promise.all(raws.map(({ client }) => client.close()));

  const pool = poolWith(SERVERS);
  const started = performance.now();
  const tools = await pool.tools({ sessionId: `bench-${round}`, cwd: REPO_ROOT });
  const readyMs = performance.now() - started;
  const states = pool.servers();
  if (states.some((state) => state.status !== 'connected') || tools.length === 0) throw new Error(`not every server connected: ${JSON.stringify(states.map((state) => [state.name, state.status, state.error]))}`);
  const slowestMs = Math.max(...states.map((state) => state.startupMs));
  await pool.close();
  rounds.push({ readyMs, slowestMs, soloMs: solo.ms, rawParallelMs, tools: tools.length });
}
const startup = {
  readyMs: median(rounds.map((round) => round.readyMs)),
  slowestMs: median(rounds.map((round) => round.slowestMs)),
  soloMs: median(rounds.map((round) => round.soloMs)),
  rawParallelMs: median(rounds.map((round) => round.rawParallelMs)),
};
const startupRatio = median(rounds.map((round) => round.readyMs / round.slowestMs));

console.log(`mcp: start-up of ${SERVERS} stdio server-everything servers, median of ${startRounds} rounds (${rounds[0].tools} tools)`);
console.log(
  table(
    ['measure', 'ms', 'vs slowest server'],
    [
      [`McpClientPool.tools(): all ${SERVERS} ready`, fmt(startup.readyMs), fmtRatio(startupRatio)],
      ['slowest server in that run (spawn to tools listed)', fmt(startup.slowestMs), '1.00x'],
      [`raw SDK, ${SERVERS} clients in parallel`, fmt(startup.rawParallelMs), fmtRatio(startup.rawParallelMs / startup.slowestMs)],
      ['raw SDK, one server alone', fmt(startup.soloMs), fmtRatio(startup.soloMs / startup.slowestMs)],
    ],
  ),
);

// ------------------------------------------------------------------ (b) call overhead

// The pool's tool against `callTool` on the SDK client underneath it (same server process, same
// pipe), so only the layers this package adds are measured. Two separate server processes answer
// at different speeds depending on how the OS schedules them (up to ±30% here), so a raw client
// on a server of its own is printed for information only.
globalThis.gc?.();
const pool = poolWith(1);
const tools = await pool.tools({ sessionId: 'bench-calls', cwd: REPO_ROOT });
const echo = tools.find((tool) => tool.name === 'mcp__everything1__echo');
const sdk = pool.connection('everything1').sdkClient;
const separate = (await rawStart(bin)).client;
const context = { signal: new AbortController().signal, cwd: REPO_ROOT, toolCallId: 'bench', sessionId: 'bench-calls' };
const viaPool = async (index) => {
  const input = echo.validate({ message: `m${index}` });
  const result = await echo.execute(input.data, context);
  if (!result.success || result.output !== `Echo: m${index}`) throw new Error(`pool echo returned ${JSON.stringify(result)}`);
};
const rawOn = (client) => async (index) => {
  const result = await client.callTool({ name: 'echo', arguments: { message: `m${index}` } });
  if (result.content[0].text !== `Echo: m${index}`) throw new Error(`raw echo returned ${JSON.stringify(result)}`);
};
async function interleaved(contenders) {
  for (let index = 0; index < 300; index += 1) for (const [, run] of contenders) await run(index);
  // Interleaved batches of 20 in alternating order, so drift on a shared machine hits both alike.
  for (let batch = 0; batch < calls / 20; batch += 1) {
    for (let offset = 0; offset < contenders.length; offset += 1) {
      const [, run, samples] = contenders[(batch + offset) % contenders.length];
      const started = performance.now();
      for (let index = 0; index < 20; index += 1) await run(index);
      samples.push((performance.now() - started) / 20);
    }
  }
}
const contenders = [
  ['pool', viaPool, []],
  ['sdk', rawOn(sdk), []],
];
await interleaved(contenders);
// For information: a raw client on a server process of its own, against the same SDK client.
const informational = [
  ['separate', rawOn(separate), []],
  ['sdk', rawOn(sdk), []],
];
await interleaved(informational);
await pool.close();
await separate.close();
const poolCallMs = median(contenders[0][2]);
const rawCallMs = median(contenders[1][2]);
const separateCallMs = (median(informational[0][2]) / median(informational[1][2])) * median(contenders[1][2]);
const callRatio = poolCallMs / rawCallMs;
console.log(`\nmcp: echo tool call over stdio, median of ${calls / 20} batches of 20 calls per contender`);
console.log(
  table(
    ['contender', 'ms per call', 'vs raw SDK'],
    [
      ['McpClientPool tool (validate + execute)', fmt(poolCallMs, 3), fmtRatio(callRatio)],
      ['raw SDK client.callTool, same server', fmt(rawCallMs, 3), '1.00x'],
      ['raw SDK client.callTool, a server of its own (info)', fmt(separateCallMs, 3), fmtRatio(separateCallMs / rawCallMs)],
    ],
  ),
);

const targets = [
  target(`MCP start-up, ${SERVERS} stdio servers ready / slowest single server's start (same run)`, startupRatio, 1.2),
  target('MCP tool call, pool tool / raw SDK client.callTool', callRatio, 1.1),
];
for (const t of targets) console.log(targetLine(t));
writeResults('mcp', { suite: 'mcp', quick, servers: SERVERS, startup, startupRatio, rounds, poolCallMs, rawCallMs, separateCallMs, callRatio, targets });
