import { createKernel, toolsPlugin } from '@tessera/kernel';
import { inMemorySessionStore } from '@tessera/kernel/testing';
import { testPreset } from '@tessera/preset-test';
import { createScript, createEchoTool, handLoop } from './lib/workload.mjs';
const nullStore = { save() {}, load() {}, list() { return []; }, delete() {} };
const script = createScript(); const counter = { calls: 0 };
const echo = createEchoTool(counter);
const kernel = await createKernel({ plugins: testPreset({ provider: script.provider, plugins: [toolsPlugin(echo)], replace: process.argv[2] === 'null' ? [inMemorySessionStore(nullStore)] : [] }) });
const med = a => (a.sort((x, y) => x - y), a[a.length >> 1]);
for (const rounds of [20, 200, 1000, 20]) for (const useGc of [true, false]) {
  const us = [], hs = [];
  const n = Math.max(30, 6000 / rounds);
  for (let i = 0; i < n; i++) {
    if (useGc) gc(); script.startLoop(rounds);
    let t = performance.now(); const s = kernel.createSession(); await s.run('go'); us.push((performance.now() - t) * 1000 / rounds); await s.shutdown();
    if (useGc) gc(); script.startLoop(rounds);
    t = performance.now(); await handLoop({ provider: script.provider, tools: [echo], prompt: 'go' }); hs.push((performance.now() - t) * 1000 / rounds);
  }
  console.log(rounds, useGc ? 'gc  ' : 'nogc', 'tessera', med(us.slice(n/3)).toFixed(1), 'hand', med(hs.slice(n/3)).toFixed(1));
}
