// Cold-start program: load Tessera, compose the test preset with one scripted
// turn that streams "hello" in two deltas, run it once, print the text.
// Spawned repeatedly by ../cold-start.mjs; must print exactly "hello\n".

import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';

const kernel = await createKernel({ plugins: testPreset({ turns: [{ text: ['hel', 'lo'] }] }) });
const session = kernel.createSession();

let streamed = '';
const text = await session.run('hi', {
  onTextDelta: (delta) => {
    streamed += delta;
  },
});
await kernel.shutdown();

if (text !== streamed) {
  console.error(`tessera-one-turn failed: final text ${JSON.stringify(text)} vs streamed ${JSON.stringify(streamed)}`);
  process.exit(1);
}
process.stdout.write(text + '\n');
