import type { SessionEventListener } from '@tessera/contracts';
import type { RunOptions, SessionOptions } from './session-options.js';

/**
 * The pre-stream callbacks (`onTextDelta`, `onToolExecution`, `onContextUpdate`, `onCompact`,
 * `onCompactEvent`) as one listener on the event stream, or undefined when none is set.
 */
export function callbackAdapter(callbacks: SessionOptions | RunOptions): SessionEventListener | undefined {
  // `onTextDelta` is not here: the turn runner calls it directly (see `deltaCallbacks`).
  const { onToolExecution } = callbacks;
  const { onContextUpdate, onCompact, onCompactEvent } = callbacks as SessionOptions;
  if (!onToolExecution && !onContextUpdate && !onCompact && !onCompactEvent) return undefined;
  return (event) => {
    switch (event.type) {
      case 'tool_start':
        onToolExecution?.({ type: 'start', toolName: event.toolName, toolArgs: event.input, toolCallId: event.toolCallId });
        return;
      case 'tool_end':
        onToolExecution?.({
          type: 'end',
          toolName: event.toolName,
          toolArgs: event.input,
          toolCallId: event.toolCallId,
          success: event.success,
          ...(event.denied ? { denied: true } : {}),
          ...(event.errorCode === undefined ? {} : { errorCode: event.errorCode }),
          ...(event.data === undefined ? {} : { toolResultData: event.data }),
        });
        return;
      case 'context_update':
        onContextUpdate?.(event.state);
        return;
      case 'compact':
        onCompact?.(event.summary);
        onCompactEvent?.({ trigger: event.trigger, before: event.before, after: event.after });
        return;
      default:
        return;
    }
  };
}
