import { createKernel, definePlugin, toolsPlugin, Stage } from '@tessera/kernel';
import { inMemorySessionStore } from '@tessera/kernel/testing';
import { testPreset } from '@tessera/preset-test';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
const chunks = new Array(2000).fill('y'.repeat(1024));
const noop = () => undefined;
const obs = definePlugin({ name: 'obs', register({ hooks }) { for (const h of Object.values(hooks)) h.tap({ name: 'obs', stage: Stage.Observe }, noop); } });
const nullStore = { save() {}, load() {}, list() { return []; }, delete() {} };
async function variant(label, { observer, store }) {
  const provider = new ScriptedProvider({ recordRequests: false, turns: () => ({ text: chunks }) });
  const kernel = await createKernel({ plugins: testPreset({ provider, plugins: observer ? [obs] : [], replace: store ? [] : [inMemorySessionStore(nullStore)] }) });
  const ms = [];
  for (let i = 0; i < 40; i++) { gc(); let c = 0; const t = performance.now(); const s = kernel.createSession(); await s.run('go', { onTextDelta: d => c += d.length }); const d = performance.now() - t; await s.shutdown(); if (i >= 10) ms.push(d); }
  ms.sort((a, b) => a - b); console.log(label.padEnd(30), ms[ms.length >> 1].toFixed(2), 'ms');
}
await variant('observer + memory store', { observer: true, store: true });
await variant('memory store only', { observer: false, store: true });
await variant('observer + null store', { observer: true, store: false });
await variant('bare (null store, no obs)', { observer: false, store: false });
// cost of structuredClone of a 2MB rope string
const ms=[]; for (let i=0;i<30;i++){ let s=''; for (const c of chunks) s+=c; gc(); const t=performance.now(); structuredClone({a:[{content:[{text:s}]}]}); ms.push(performance.now()-t);} ms.sort((a,b)=>a-b); console.log('structuredClone(2MB rope)', ms[15].toFixed(2));
