// The scripted model behaviour and the echo tool shared by the Tessera and
// hand-written contenders, plus the hand-written loop itself.
//
// Loop script: call i (0-based) streams one text delta "x" and asks for
// echo({ text: `round ${i}` }); call `rounds` streams "done" and stops.
// Every call after the first checks that the previous echo result came back as
// the last message, so a contender that drops or reorders tool results fails.
// Stream script: a single call streaming prebuilt chunks and no tool calls.

import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { defineTool } from '@tessera/kernel';
import { z } from 'zod';

export const FINAL_TEXT = 'done';
export const DELTA_TEXT = 'x';

export function createScript() {
  const state = {
    mode: 'loop',
    rounds: 0,
    base: 0,
    problem: undefined,
    bigTurn: undefined,
  };

  const turns = (request) => {
    if (state.mode === 'stream') return state.bigTurn;
    const i = request.index - state.base;
    if (i > 0 && state.problem === undefined) {
      const last = request.messages[request.messages.length - 1];
      const block = last && last.role === 'tool' ? last.content[0] : undefined;
      if (!block || block.isError || block.content !== `round ${i - 1}`) {
        state.problem = `call ${i}: expected the echo result "round ${i - 1}" as last message, got ${JSON.stringify(block ?? last?.role)}`;
      }
    }
    if (i < state.rounds) {
      return { text: DELTA_TEXT, toolCalls: [{ name: 'echo', input: { text: `round ${i}` } }] };
    }
    if (i > state.rounds && state.problem === undefined) state.problem = `unexpected model call ${i} after the final reply`;
    return { text: FINAL_TEXT };
  };

  const provider = new ScriptedProvider({ turns, recordRequests: false });

  return {
    provider,
    /** Arms the script for one run; call before the run starts. */
    startLoop(rounds) {
      state.mode = 'loop';
      state.rounds = rounds;
      state.base = provider.callCount;
      state.problem = undefined;
    },
    startStream(chunks) {
      state.mode = 'stream';
      state.bigTurn = { text: chunks };
      state.base = provider.callCount;
      state.problem = undefined;
    },
    /** Model calls since the last start. */
    calls: () => provider.callCount - state.base,
    problem: () => state.problem,
  };
}

/** `echo({ text })` → text. `counter.calls` counts executions. */
export function createEchoTool(counter) {
  return defineTool({
    name: 'echo',
    description: 'Returns the given text unchanged.',
    inputSchema: z.object({ text: z.string() }),
    async execute(input) {
      counter.calls += 1;
      return { success: true, output: input.text };
    },
  });
}

async function runTool(tool, call, signal) {
  if (!tool) return { success: false, output: `Tool "${call.name}" does not exist.` };
  const check = tool.validate ? tool.validate(call.input) : { success: true, data: call.input };
  if (!check.success) return { success: false, output: `Invalid input for "${call.name}": ${check.message}` };
  try {
    return await tool.execute(check.data, { signal, cwd: process.cwd(), toolCallId: call.id, sessionId: 'hand' });
  } catch (error) {
    return { success: false, output: `Tool "${call.name}" failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The smallest correct agent loop over the Provider contract: send history,
 * append the reply, run its tool calls in order (validate, execute, one result
 * per call), append the results, repeat until a reply has no tool calls.
 */
export async function handLoop({ provider, tools, prompt, onTextDelta }) {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const schemas = tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  const { signal } = new AbortController();
  const messages = [{ role: 'user', content: prompt }];
  for (;;) {
    const reply = await provider.stream({ messages, tools: schemas, signal, onTextDelta });
    messages.push(reply);
    let text = '';
    const calls = [];
    for (const block of reply.content) {
      if (block.type === 'text') text += block.text;
      else if (block.type === 'tool_use') calls.push(block);
    }
    if (calls.length === 0) return { text, messages };
    const results = [];
    for (const call of calls) {
      const result = await runTool(byName.get(call.name), call, signal);
      results.push({
        type: 'tool_result',
        toolUseId: call.id,
        toolName: call.name,
        content: result.output,
        isError: !result.success,
      });
    }
    messages.push({ role: 'tool', content: results });
  }
}
