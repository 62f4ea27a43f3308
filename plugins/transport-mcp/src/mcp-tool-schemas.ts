import type { IExecutionResult, IToolState } from '@tessera/contracts';
import { z } from 'zod';

/**
 * The wire format of the MCP tools in one place: input shapes (the SDK validates calls against
 * them and lists them as JSON Schema), the `prompt` tool's structured result, and the mapping
 * from a turn's result to it.
 */

/** `prompt`: one turn in a new session, or in one of this MCP session's sessions. */
export const promptInput = {
  prompt: z.string().min(1, 'prompt must not be empty').describe('What to ask the agent, as a user would type it.'),
  sessionId: z
    .string()
    .min(1)
    .optional()
    .describe('Continue this session (an id an earlier `prompt` result returned); omit to start a new session.'),
};

/** `abort`: stop the turn running in a session. */
export const abortInput = {
  sessionId: z.string().min(1).describe('The session whose running turn to stop.'),
};

/** `command_<name>`: a model-invocable slash command. */
export const commandInput = {
  args: z.string().optional().describe('Arguments, as typed after the command.'),
  sessionId: z
    .string()
    .min(1)
    .optional()
    .describe('The session to run it in; omit for the session this MCP client used last (a new one when there is none).'),
};

/** One tool call of a turn, as the `prompt` result reports it. */
export const toolCallSummary = z.object({
  name: z.string(),
  /** The call's main argument (a path, a command, a pattern). */
  target: z.string(),
  status: z.enum(['success', 'error', 'denied', 'interrupted']),
});

export type ToolCallSummary = z.infer<typeof toolCallSummary>;

/** The `prompt` tool's `structuredContent`. */
export const promptOutput = {
  sessionId: z.string().describe('Pass it back as `sessionId` to continue this conversation.'),
  response: z.string().describe("The agent's final answer."),
  stopReason: z.enum(['completed', 'interrupted']),
  toolCalls: z.array(toolCallSummary),
};

export interface PromptOutput {
  sessionId: string;
  response: string;
  stopReason: 'completed' | 'interrupted';
  toolCalls: ToolCallSummary[];
  [key: string]: unknown;
}

export function summarizeTool(state: IToolState): ToolCallSummary {
  const status = state.isRunning ? 'interrupted' : state.denied === true || state.result === 'denied' ? 'denied' : state.result === 'error' ? 'error' : 'success';
  return { name: state.toolName, target: state.firstArg, status };
}

export function promptOutputOf(sessionId: string, result: IExecutionResult, interrupted: boolean): PromptOutput {
  return {
    sessionId,
    response: result.response,
    stopReason: interrupted ? 'interrupted' : 'completed',
    toolCalls: result.toolSummaries.map(summarizeTool),
  };
}

/** One line per call, `Bash(pwd): success`, for the text content a client shows. */
export function toolCallLines(calls: readonly ToolCallSummary[]): string {
  return calls.map((call) => `${call.name}${call.target === '' ? '' : `(${call.target})`}: ${call.status}`).join('\n');
}
