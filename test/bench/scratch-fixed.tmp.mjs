import { createKernel, definePlugin, toolsPlugin, Stage } from '@tessera/kernel';
import { inMemorySessionStore } from '@tessera/kernel/testing';
import { testPreset } from '@tessera/preset-test';
import { createScript, createEchoTool } from './lib/workload.mjs';
const nullStore = { save() {}, load() {}, list() { return []; }, delete() {} };
const script = createScript(); const counter = { calls: 0 };
const kernel = await createKernel({ plugins: testPreset({ provider: script.provider, plugins: [toolsPlugin(createEchoTool(counter))], replace: [inMemorySessionStore(nullStore)] }) });
const med = a => (a.sort((x, y) => x - y), a[a.length >> 1]);
const c = [], r = [], sd = [];
for (let i = 0; i < 3000; i++) {
  script.startLoop(0);
  let t = performance.now(); const s = kernel.createSession(); const t1 = performance.now();
  await s.run('go'); const t2 = performance.now(); await s.shutdown(); const t3 = performance.now();
  if (i > 500) { c.push(t1 - t); r.push(t2 - t1); sd.push(t3 - t2); }
}
console.log('createSession µs', (med(c) * 1000).toFixed(1), 'run(0 rounds) µs', (med(r) * 1000).toFixed(1), 'shutdown µs', (med(sd) * 1000).toFixed(1));
const g = [];
for (let i = 0; i < 20000; i++) { const t = performance.now(); kernel.getOptional(Symbol.for('x')); kernel.getAll(Symbol.for('y')); g.push(performance.now()-t); }
