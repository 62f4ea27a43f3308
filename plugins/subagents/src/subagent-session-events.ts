import type { SessionEventListener, SessionLogData, SessionLogger } from '@tessera/contracts';
import type { TBackgroundTaskRunnerEvent } from '@tessera/plugin-background';

/**
 * The one mapping from a child session's events (`childSession.subscribe`) to what a
 * subagent job reports: background-task runner events for the manager (watchdogs,
 * `currentAction`, live output) and transcript lines. A tool's `tool_progress` becomes a
 * `heartbeat`, so a long tool that reports progress keeps the job's idle watchdog quiet.
 */
export function subagentSessionEvents(
  jobId: string,
  transcript: SessionLogger | undefined,
  emit: ((event: TBackgroundTaskRunnerEvent) => void) | undefined,
): SessionEventListener {
  return (event) => {
    switch (event.type) {
      case 'text_delta':
        transcript?.log(jobId, 'text_delta', { delta: event.delta });
        emit?.({ type: 'text_delta', delta: event.delta });
        return;
      case 'tool_start':
        transcript?.log(jobId, 'tool_start', { type: 'start', toolName: event.toolName, toolArgs: event.input as SessionLogData[string], toolCallId: event.toolCallId });
        emit?.({ type: 'tool_start', toolName: event.toolName, toolCallId: event.toolCallId, action: event.toolName });
        return;
      case 'tool_progress':
        transcript?.log(jobId, 'tool_progress', { toolName: event.toolName, toolCallId: event.toolCallId, progress: event.progress as SessionLogData[string] });
        emit?.({ type: 'heartbeat' });
        return;
      case 'tool_end':
        transcript?.log(jobId, 'tool_end', {
          type: 'end',
          toolName: event.toolName,
          toolArgs: event.input as SessionLogData[string],
          toolCallId: event.toolCallId,
          success: event.success,
          ...(event.denied ? { denied: true } : {}),
          ...(event.errorCode === undefined ? {} : { errorCode: event.errorCode }),
          ...(event.data === undefined ? {} : { toolResultData: event.data as SessionLogData[string] }),
        });
        emit?.({ type: 'tool_end', toolName: event.toolName, toolCallId: event.toolCallId, success: event.success, ...(event.errorCode ? { error: event.errorCode } : {}) });
        return;
      default:
        return;
    }
  };
}
