import {
  describeError,
  type PostToolUseContext,
  type PreToolUseContext,
  type PreToolUseDecision,
  type SessionEvent,
  type ToolResult,
  type ToolResultBlock,
  type ToolUseBlock,
} from '@tessera/contracts';
import { isTapped } from './hooks.js';
import type { Session } from './session.js';

function failure(output: string, errorCode: string, metadata?: Record<string, unknown>): ToolResult {
  return { success: false, output, error: output, errorCode, ...(metadata ? { metadata } : {}) };
}

function decisionResult(decision: Exclude<PreToolUseDecision, { decision: 'continue' }>): ToolResult {
  if (decision.decision === 'respond') return decision.result;
  if (decision.verbatim === true) return failure(decision.reason, 'denied', { denied: true });
  if (decision.source === undefined || decision.source === 'permission') return failure(`Permission denied: ${decision.reason}`, 'denied', { denied: true });
  return failure(`Blocked by ${decision.source}: ${decision.reason}`, 'blocked', { denied: true });
}

/**
 * Runs the tool calls of one assistant message in order and appends exactly one
 * `tool_result` per `tool_use`, whatever happens: unknown tool, invalid input, denial,
 * a throwing tool or hook, or abort part-way through the batch.
 */
export async function executeToolBatch(
  session: Session,
  calls: readonly ToolUseBlock[],
  round: number,
  signal: AbortSignal,
): Promise<void> {
  const results: ToolResultBlock[] = [];
  for (const call of calls) {
    let result: ToolResult;
    try {
      result = await executeToolCall(session, call, round, signal);
    } catch (error) {
      result = failure(`Tool "${call.name}" could not be run: ${describeError(error)}`, 'internal_error');
    }
    results.push({
      type: 'tool_result',
      toolUseId: call.id,
      toolName: call.name,
      content: result.output,
      isError: !result.success,
    });
  }
  session.appendMessage({ role: 'tool', content: results });
}

/**
 * One tool call through the whole pipeline (preToolUse hooks and permissions, validation, the
 * tool, postToolUse hooks, `tool_start` / `tool_end` events), without appending anything to
 * the conversation: how a host runs a call the user typed (`!ls` in the terminal UI).
 */
export async function executeToolCall(
  session: Session,
  call: ToolUseBlock,
  round: number,
  signal: AbortSignal,
): Promise<ToolResult> {
  const { hooks } = session;
  const tool = session.toolsByName.get(call.name);
  const observed = session.hasListeners();
  if (observed) session.emit({ type: 'tool_start', round, toolCallId: call.id, toolName: call.name, input: call.input });

  let result: ToolResult | undefined;
  let input = call.input;
  let ran = false;
  const startedAt = session.clock.now();
  if (signal.aborted) {
    result = failure(`Tool call "${call.name}" was not run: the turn was aborted.`, 'aborted');
  } else {
    if (isTapped(hooks.preToolUse)) {
      const context: PreToolUseContext = { session, round, toolCallId: call.id, toolName: call.name, input, tool, signal };
      try {
        const decision = await hooks.preToolUse.promise(context);
        // `continue` decisions are applied by the kernel's tap wrapper and never end the hook.
        if (decision && decision.decision !== 'continue') result = decisionResult(decision);
        input = context.input;
      } catch (error) {
        result = failure(`Tool call "${call.name}" was stopped because a preToolUse hook failed: ${describeError(error)}`, 'hook_error');
      }
    }
    if (!result && !tool) {
      const available = [...session.toolsByName.keys()].join(', ') || 'none';
      result = failure(
        `Tool "${call.name}" is not available, so the call was not executed. Available tools: ${available}.`,
        'unknown_tool',
      );
    }
    if (!result && tool) {
      const check = tool.validate?.(input);
      if (check && !check.success) {
        result = failure(`Invalid input for tool "${call.name}": ${check.message}. Fix the arguments and call it again.`, 'invalid_input');
      } else {
        if (check) input = check.data;
        ran = true;
        try {
          result = await tool.execute(input, {
            signal,
            cwd: session.cwd,
            toolCallId: call.id,
            sessionId: session.sessionId,
            provider: session.getProvider(),
            services: session.services,
            reportProgress: (progress) => {
              if (session.hasListeners()) session.emit({ type: 'tool_progress', toolCallId: call.id, toolName: call.name, progress });
            },
          });
        } catch (error) {
          result = failure(`Tool "${call.name}" failed: ${describeError(error)}`, 'tool_error');
        }
      }
    }
  }
  let final = result!;

  if (ran) {
    const hook = final.success ? hooks.postToolUse : hooks.postToolUseFailure;
    if (isTapped(hook)) {
      const context: PostToolUseContext = {
        session,
        round,
        toolCallId: call.id,
        toolName: call.name,
        tool,
        input,
        result: final,
        durationMs: session.clock.now() - startedAt,
      };
      try {
        final = ((await hook.promise(context)) as PostToolUseContext).result;
      } catch (error) {
        session.log('error', { phase: final.success ? 'postToolUse' : 'postToolUseFailure', error: describeError(error) });
      }
    }
  }

  if (observed || session.hasListeners()) {
    // Built field by field: spreads on this per-call path cost more than the emit itself.
    const event: Extract<SessionEvent, { type: 'tool_end' }> = {
      type: 'tool_end',
      round,
      toolCallId: call.id,
      toolName: call.name,
      input,
      success: final.success,
      durationMs: session.clock.now() - startedAt,
    };
    if (final.metadata?.denied === true) event.denied = true;
    if (final.errorCode !== undefined) event.errorCode = final.errorCode;
    if (final.data !== undefined) event.data = final.data;
    session.emit(event);
  }
  return final;
}
