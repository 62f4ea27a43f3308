import { createKernel, definePlugin, toolsPlugin, Stage } from '@tessera/kernel';
import { inMemorySessionStore } from '@tessera/kernel/testing';
import { testPreset } from '@tessera/preset-test';
import { createScript, createEchoTool } from './lib/workload.mjs';
const noop = () => undefined;
const obsSync = definePlugin({ name: 'obs', register({ hooks }) { for (const h of Object.values(hooks)) h.tap({ name: 'obs', stage: Stage.Observe }, noop); } });
const pr = () => Promise.resolve();
const obsPromise = definePlugin({ name: 'obs', register({ hooks }) { for (const [n, h] of Object.entries(hooks)) { if (typeof h.tapPromise === 'function' && !['textDelta','providerRawPayload','contextUpdate','historyAppend','observerError'].includes(n)) h.tapPromise({ name: 'obs', stage: Stage.Observe }, pr); else h.tap({ name: 'obs', stage: Stage.Observe }, noop); } } });
const nullStore = { save() {}, load() {}, list() { return []; }, delete() {} };
const rounds = Number(process.argv[2] ?? 200);
async function variant(label, { observer, store }) {
  const script = createScript(); const counter = { calls: 0 };
  const kernel = await createKernel({ plugins: testPreset({ provider: script.provider, plugins: [toolsPlugin(createEchoTool(counter)), observer].filter(Boolean), replace: store ? [] : [inMemorySessionStore(nullStore)] }) });
  const us = [];
  for (let i = 0; i < 60; i++) { gc(); script.startLoop(rounds); const t = performance.now(); const s = kernel.createSession(); await s.run('go'); const d = performance.now() - t; await s.shutdown(); if (i >= 15) us.push(d * 1000 / rounds); }
  us.sort((a, b) => a - b); console.log(label.padEnd(34), us[us.length >> 1].toFixed(1), 'µs/round');
}
await variant('sync observer + memory store', { observer: obsSync, store: true });
await variant('promise observer + memory store', { observer: obsPromise, store: true });
await variant('memory store, no observer', { observer: null, store: true });
await variant('sync observer + null store', { observer: obsSync, store: false });
await variant('no observer + null store', { observer: null, store: false });
