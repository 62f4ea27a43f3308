// Cold-start peer: load pi-agent-core, run one offline turn, print the text.
// The model is the scripted pi-ai provider from ./pi-scripted.mjs; it streams
// "hello" as two text deltas and stops without calling tools.

import { Agent } from '@mariozechner/pi-agent-core';
import { assistantText, registerScriptedModel } from './pi-scripted.mjs';

const scripted = registerScriptedModel(() => ({ deltas: ['hel', 'lo'] }));
const agent = new Agent({ initialState: { systemPrompt: 'bench', model: scripted.model } });

let streamed = '';
agent.subscribe((event) => {
  if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
    streamed += event.assistantMessageEvent.delta;
  }
});

await agent.prompt('hi');

const last = agent.state.messages[agent.state.messages.length - 1];
const text = assistantText(last);
if (agent.state.errorMessage || text !== streamed) {
  console.error(`cold-pi failed: ${agent.state.errorMessage ?? `mismatch ${text} vs ${streamed}`}`);
  process.exit(1);
}
process.stdout.write(text + '\n');
