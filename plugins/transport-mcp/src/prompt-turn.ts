import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { describeError, type IToolState } from '@tessera/contracts';
import type { InteractiveSession } from '@tessera/kernel';
import { promptOutputOf, toolCallLines } from './mcp-tool-schemas.js';

/** What a tool handler gets from the SDK with each call. */
export type ToolCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The `_meta` key of a progress notification saying which session event it carries. */
export const PROGRESS_EVENT_META = 'tessera/event';

/** A failed tool call: the message is what the client (and its model) reads. */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * Sends a turn's events as `notifications/progress` when the caller asked for progress (sent a
 * `progressToken`): each text delta as it streams, and a line per tool call. `progress` counts
 * the notifications (it must increase); there is no `total`. Sending never fails the turn.
 */
function progressSender(extra: ToolCallExtra): (message: string, event: string) => void {
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => undefined;
  let progress = 0;
  return (message, event) => {
    progress += 1;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message, _meta: { [PROGRESS_EVENT_META]: event } } })
      .catch(() => undefined);
  };
}

function toolLine(state: IToolState): string {
  return `${state.toolName}${state.firstArg === '' ? '' : `(${state.firstArg})`}`;
}

/**
 * Runs `prompt` as one turn of `session` for an MCP tool call: streams progress, aborts the
 * turn when the call's signal aborts (the client cancelled), and answers with the final text,
 * the tool calls and the session id (also as `structuredContent`). A turn that fails is an
 * `isError` result naming the failure.
 */
export async function runPromptTurn(session: InteractiveSession, prompt: string, extra: ToolCallExtra): Promise<CallToolResult> {
  const sessionId = session.getSessionId();
  if (extra.signal.aborted) return toolError('The request was cancelled before the turn started.');
  const send = progressSender(extra);
  let interrupted = false;
  // What streamed since the last tool call: an aborted turn's answer so far.
  let streamed = '';
  const stops = [
    session.on('text_delta', (delta) => {
      streamed += delta;
      send(delta, 'text_delta');
    }),
    session.on('tool_start', (state) => {
      streamed = '';
      send(`\n[tool] ${toolLine(state)}\n`, 'tool_start');
    }),
    session.on('tool_end', (state) => send(`[tool] ${toolLine(state)}: ${state.result ?? 'done'}\n`, 'tool_end')),
    session.on('interrupted', () => void (interrupted = true)),
  ];
  const onAbort = (): void => session.abort();
  extra.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await session.submit(prompt);
    if (!result) return toolError(`The prompt was cancelled before it ran in session ${sessionId}.`);
    const output = promptOutputOf(sessionId, result, interrupted);
    if (interrupted && output.response === '') output.response = streamed;
    const content: CallToolResult['content'] = [{ type: 'text', text: output.response === '' ? '(no text answer)' : output.response }];
    if (output.toolCalls.length > 0) content.push({ type: 'text', text: `Tool calls:\n${toolCallLines(output.toolCalls)}` });
    content.push({
      type: 'text',
      text: `${interrupted ? 'The turn was aborted. ' : ''}Session: ${sessionId} (pass it as sessionId to continue this conversation).`,
    });
    return { content, structuredContent: output };
  } catch (error) {
    return toolError(`The turn failed in session ${sessionId}: ${describeError(error)}`);
  } finally {
    extra.signal.removeEventListener('abort', onAbort);
    for (const stop of stops) stop();
  }
}

/** Runs a slash command in `session` for a `command_<name>` call. */
export async function runCommandCall(session: InteractiveSession, name: string, args: string): Promise<CallToolResult> {
  const sessionId = session.getSessionId();
  try {
    // The caller is a model (another agent's), not the user at a prompt: user-only actions (/memory approve…) are refused.
    const result = await session.executeCommand(name, args, { invocation: 'model-tool' });
    if (!result) return toolError(`No command "${name}" in session ${sessionId}; the composition no longer offers it.`);
    const text = result.message === '' ? `/${name} done.` : result.message;
    const notes = result.diagnostics && result.diagnostics.length > 0 ? `\n\n${result.diagnostics.join('\n')}` : '';
    return {
      content: [{ type: 'text', text: `${text}${notes}` }, { type: 'text', text: `Session: ${sessionId}` }],
      ...(result.success ? {} : { isError: true }),
    };
  } catch (error) {
    return toolError(`/${name} failed in session ${sessionId}: ${describeError(error)}`);
  }
}
