import { randomUUID } from 'node:crypto';
import {
  toolUses,
  type AssistantMessage,
  type IHistoryEntry,
  type ISession,
  type Message,
  type SessionEvent,
  type SessionEventListener,
  type SessionLogData,
  type ToolResult,
  type ToolResultBlock,
} from '@tessera/contracts';
import { Stage, type TesseraHooks } from '@tessera/kernel';

/** What the taps need of the kernel's Session beyond `ISession`. */
interface LoggingSession extends ISession {
  log?(event: string, data: SessionLogData): void;
  getFullHistory?(): readonly IHistoryEntry[];
  readonly options?: { provider?: { name?: string } };
  readonly clock?: { now(): number };
  subscribe?(listener: SessionEventListener): () => void;
}

interface CallInfo {
  toolName: string;
  batchIndex: number;
}

/** Per-session bookkeeping that gives events their executionId, round and sequence numbers. */
interface TurnState {
  executionId: string;
  round: number;
  deltaSequence: number;
  rawSequence: number;
  requestedAt: number;
  awaitingResponse: boolean;
  calls: Map<string, CallInfo>;
  resultsLogged: Set<string>;
  /** `tool_end` error codes of calls that never ran, until their committed result is logged. */
  unrunErrorCodes: Map<string, string>;
  /** Ends the session's event subscription (set while subscribed). */
  unsubscribe: (() => void) | undefined;
}

const TAP = { name: 'session-logger', stage: Stage.Observe };

/**
 * Logs the Session Logging events the Session does not write itself. What the session's
 * event stream carries is read from it: one `session.subscribe` listener per session,
 * attached when the logger first sees the session (`sessionStart`) and removed at
 * `sessionEnd`, maps `text_delta` (the stream deltas), `assistant_message` (the tool batch
 * and its requests), `tool_end` (the error code of a call that never ran) and `error` (a
 * provider call that failed before replying). The hooks stay for what the stream does not
 * carry: the provider request and raw payloads, history appends and resets (which also
 * place the provider's reply, partial ones included, before its history line), and the
 * executed tools' results (`tool_end` has no output, error text or metadata).
 *
 * Events go through `session.log()`, so they reach whatever logger that session uses. All
 * taps observe (`Stage.Observe`) and listeners cannot fail a run: logging never changes or
 * fails a turn.
 */
export function tapSessionLogEvents(hooks: TesseraHooks): void {
  const states = new WeakMap<ISession, TurnState>();
  const stateOf = (session: ISession): TurnState => {
    let state = states.get(session);
    if (!state) {
      state = {
        executionId: randomUUID(), round: 0, deltaSequence: 0, rawSequence: 0, requestedAt: 0, awaitingResponse: false,
        calls: new Map(), resultsLogged: new Set(), unrunErrorCodes: new Map(), unsubscribe: undefined,
      };
      states.set(session, state);
      // Usually on sessionStart; any later hook attaches a session whose start this logger missed.
      state.unsubscribe = (session as LoggingSession).subscribe?.(sessionEventLogger(session, state));
    }
    return state;
  };
  const log = (session: ISession, event: string, data: SessionLogData): void => (session as LoggingSession).log?.(event, data);
  const providerName = (session: ISession): string | null => (session as LoggingSession).options?.provider?.name ?? null;
  const now = (session: ISession): number => (session as LoggingSession).clock?.now() ?? Date.now();

  hooks.sessionStart.tap(TAP, ({ session }) => void stateOf(session));
  hooks.sessionEnd.tap(TAP, ({ session }) => {
    const state = states.get(session);
    state?.unsubscribe?.();
    // The state stays, so a late hook call does not subscribe again.
    if (state) state.unsubscribe = undefined;
  });

  hooks.beforeProviderRequest.tap(TAP, ({ session, round, request }) => {
    const state = stateOf(session);
    // Rounds restart at 1 with every run(): that marks a new execution.
    if (round <= state.round) {
      state.executionId = randomUUID();
      state.calls.clear();
      state.resultsLogged.clear();
      state.unrunErrorCodes.clear();
    }
    state.round = round;
    state.deltaSequence = 0;
    state.rawSequence = 0;
    state.requestedAt = now(session);
    state.awaitingResponse = true;
    log(session, 'provider_request', {
      provider: providerName(session),
      model: request.model ?? null,
      system: request.system ?? null,
      messages: request.messages,
      messageCount: request.messages.length,
      tools: request.tools,
      round,
      executionId: state.executionId,
    });
  });

  hooks.providerRawPayload.tap(TAP, ({ session, round, payload }) => {
    const state = stateOf(session);
    log(session, 'provider_native_raw_payload', {
      provider: payload.provider,
      apiSurface: payload.apiSurface ?? null,
      payloadKind: payload.payloadKind,
      sequence: state.rawSequence++,
      payload: payload.payload as object,
      round,
      executionId: state.executionId,
    });
  });

  hooks.historyAppend.tap(TAP, ({ session, entry }) => {
    const state = stateOf(session);
    const message = entry.category === 'chat' ? (entry.data as Message) : undefined;
    // The first assistant message after a request is the provider's reply (complete, or
    // partial when the call was aborted or failed mid-stream).
    if (message?.role === 'assistant' && state.awaitingResponse) {
      state.awaitingResponse = false;
      logResponse(session, state, message);
    }
    log(session, 'history_mutation', {
      mutation: message ? 'append_message' : 'append_event',
      entry,
      round: state.round,
      executionId: state.executionId,
    });
    if (message?.role === 'tool') {
      for (const block of message.content) if (!state.resultsLogged.has(block.toolUseId)) logCommittedResult(session, state, block);
      log(session, 'tool_message_committed', {
        toolCallIds: message.content.map((block) => block.toolUseId),
        resultCount: message.content.length,
        round: state.round,
        executionId: state.executionId,
      });
    }
  });

  const onToolResult = ({ session, round, toolCallId, toolName, result, durationMs }: { session: ISession; round: number; toolCallId: string; toolName: string; result: ToolResult; durationMs: number }): void => {
    const state = stateOf(session);
    state.resultsLogged.add(toolCallId);
    log(session, 'tool_execution_result', {
      toolName,
      toolCallId,
      success: result.success,
      output: result.output,
      error: result.error ?? null,
      errorCode: result.errorCode ?? null,
      data: (result.data as object) ?? null,
      metadata: result.metadata ?? null,
      durationMs,
      batchIndex: state.calls.get(toolCallId)?.batchIndex ?? null,
      round,
      executionId: state.executionId,
    });
  };
  hooks.postToolUse.tap(TAP, (context) => void onToolResult(context));
  hooks.postToolUseFailure.tap(TAP, (context) => void onToolResult(context));

  hooks.historyReset.tap(TAP, ({ session, reason }) => {
    const state = stateOf(session);
    // Clear and compaction empty history without an append; the appends that follow rebuild it.
    log(session, 'history_mutation', {
      mutation: 'reset',
      reason,
      entries: [],
      round: state.round,
      executionId: state.executionId,
    });
  });

  /**
   * One session's stream listener. `text_delta` is the hot path (two lines per streamed
   * chunk): one data object shared by both lines, and the state is in the closure rather
   * than looked up per chunk.
   */
  function sessionEventLogger(session: ISession, state: TurnState): SessionEventListener {
    return (event: SessionEvent) => {
      switch (event.type) {
        case 'text_delta': {
          const data = { sequence: state.deltaSequence++, delta: event.delta, round: event.round, executionId: state.executionId };
          log(session, 'provider_stream_raw_delta', data);
          log(session, 'text_delta', data);
          return;
        }
        case 'assistant_message':
          logToolRequests(session, state, event.round, event.message);
          return;
        case 'tool_end':
          // A call that ran has its result logged already (postToolUse); one that never ran is
          // logged from the committed tool message, with this code.
          if (event.errorCode !== undefined && !state.resultsLogged.has(event.toolCallId)) state.unrunErrorCodes.set(event.toolCallId, event.errorCode);
          return;
        case 'error':
          if (!state.awaitingResponse) return;
          state.awaitingResponse = false;
          // The call failed before anything streamed: there is no response to pair with the request.
          log(session, 'provider_error', { error: event.message, round: state.round, executionId: state.executionId });
          return;
        default:
          return;
      }
    };
  }

  /**
   * The batch and one request per tool call of a reply. Every reply the stream reports gets
   * them, including an interrupted one, whose calls are then committed as not run.
   */
  function logToolRequests(session: ISession, state: TurnState, round: number, message: AssistantMessage): void {
    const calls = toolUses(message);
    if (calls.length === 0) return;
    log(session, 'tool_batch_started', {
      batchMode: 'sequential',
      maxConcurrency: 1,
      requestCount: calls.length,
      toolNames: calls.map((call) => call.name),
      round,
      executionId: state.executionId,
    });
    calls.forEach((call, batchIndex) => {
      state.calls.set(call.id, { toolName: call.name, batchIndex });
      log(session, 'tool_execution_request', {
        toolName: call.name,
        toolCallId: call.id,
        parameters: call.input as object,
        batchIndex,
        ownerPath: [session.sessionId],
        round,
        executionId: state.executionId,
      });
    });
  }

  function logResponse(session: ISession, state: TurnState, message: AssistantMessage): void {
    const base = { round: state.round, executionId: state.executionId };
    log(session, 'provider_response_raw', { provider: providerName(session), responseKind: 'assistant_message', response: message, ...base });
    log(session, 'provider_response_normalized', {
      message,
      toolCallCount: toolUses(message).length,
      provider: message.provider ?? providerName(session),
      model: message.model ?? null,
      state: message.state,
      stopReason: message.stopReason ?? null,
      usage: message.usage ?? null,
      durationMs: now(session) - state.requestedAt,
      ...base,
    });
  }

  /** Calls that never ran (denied, blocked, unknown, aborted) get their result from the committed message. */
  function logCommittedResult(session: ISession, state: TurnState, block: ToolResultBlock): void {
    state.resultsLogged.add(block.toolUseId);
    const errorCode = state.unrunErrorCodes.get(block.toolUseId) ?? null;
    state.unrunErrorCodes.delete(block.toolUseId);
    log(session, 'tool_execution_result', {
      toolName: block.toolName,
      toolCallId: block.toolUseId,
      success: !block.isError,
      output: block.content,
      error: block.isError ? (typeof block.content === 'string' ? block.content : 'tool error') : null,
      errorCode,
      executed: false,
      batchIndex: state.calls.get(block.toolUseId)?.batchIndex ?? null,
      round: state.round,
      executionId: state.executionId,
    });
  }
}
