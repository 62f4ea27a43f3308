// Peer benchmark: pi-agent-core's Agent driven by an offline scripted model.
//
// Everything below goes through pi's real runtime: Agent.prompt() ->
// runAgentLoop -> streamSimple (API registry) -> our scripted provider, then
// tool argument validation, tool execution, tool-result messages and the next
// turn. Text deltas are counted from Agent.subscribe() events.

import { Agent } from '@mariozechner/pi-agent-core';
import { Type } from '@mariozechner/pi-ai';
import { assistantText, registerScriptedModel } from './pi-scripted.mjs';

const echoTool = {
  name: 'echo',
  label: 'Echo',
  description: 'Returns the given text unchanged.',
  parameters: Type.Object({ text: Type.String() }),
  async execute(_toolCallId, params) {
    return { content: [{ type: 'text', text: params.text }], details: {} };
  },
};

function lastToolResultText(context) {
  const msgs = context.messages;
  const last = msgs[msgs.length - 1];
  if (!last || last.role !== 'toolResult') return undefined;
  return last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

async function runWithScript(nextTurn, onEvent) {
  const scripted = registerScriptedModel(nextTurn);
  try {
    const agent = new Agent({
      initialState: {
        systemPrompt: 'bench',
        model: scripted.model,
        tools: [echoTool],
      },
    });
    agent.subscribe(onEvent);
    await agent.prompt('go');
    if (agent.state.errorMessage) {
      throw new Error(`pi agent run failed: ${agent.state.errorMessage}`);
    }
    const msgs = agent.state.messages;
    let final;
    for (let i = msgs.length - 1; i >= 0; i--) {
      if (msgs[i].role === 'assistant') {
        final = msgs[i];
        break;
      }
    }
    return { agent, final, calls: scripted.calls() };
  } finally {
    scripted.dispose();
  }
}

/**
 * `rounds` tool rounds (each: deltasPerRound text deltas + one `echo` call),
 * followed by one closing call that streams `finalText` and stops.
 * `deltas` counts every text delta seen, including the closing one.
 */
export async function runPiAgentLoop({ rounds, deltasPerRound = 1, deltaText = 'x', finalText = 'done' }) {
  if (!Number.isInteger(rounds) || rounds < 0) throw new TypeError('rounds must be a non-negative integer');
  const roundDeltas = new Array(deltasPerRound).fill(deltaText);
  let badEcho;

  const nextTurn = (i, context) => {
    if (i > 0 && badEcho === undefined) {
      const seen = lastToolResultText(context);
      if (seen !== `round ${i - 1}`) badEcho = { call: i, seen };
    }
    if (i < rounds) {
      return {
        deltas: roundDeltas,
        toolCall: { id: `call_${i}`, name: 'echo', args: { text: `round ${i}` } },
      };
    }
    return { deltas: [finalText] };
  };

  let deltas = 0;
  let toolRounds = 0;
  const { final, calls } = await runWithScript(nextTurn, (event) => {
    if (event.type === 'message_update') {
      if (event.assistantMessageEvent.type === 'text_delta') deltas++;
    } else if (event.type === 'tool_execution_end') {
      if (event.toolName === 'echo' && !event.isError) toolRounds++;
    }
  });

  if (badEcho) throw new Error(`echo result not fed back on call ${badEcho.call}: ${JSON.stringify(badEcho.seen)}`);
  if (calls !== rounds + 1) throw new Error(`expected ${rounds + 1} model calls, got ${calls}`);
  return { rounds: toolRounds, deltas, finalText: assistantText(final) };
}

/** One model call streaming `deltas` chunks of `deltaSize` chars; no tools. */
export async function runPiBigStream({ deltas = 2000, deltaSize = 1024 } = {}) {
  const chunk = 'y'.repeat(deltaSize);
  const pieces = new Array(deltas).fill(chunk);
  let chars = 0;
  await runWithScript(
    () => ({ deltas: pieces }),
    (event) => {
      if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
        chars += event.assistantMessageEvent.delta.length;
      }
    },
  );
  return chars;
}
