import { randomUUID } from 'node:crypto';
import {
  describeError,
  toolUses,
  type AssistantMessage,
  type IHistoryEntry,
  type ISession,
  type Message,
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
}

const TAP = { name: 'session-logger', stage: Stage.Observe };

/**
 * Taps the kernel hooks to log the Session Logging events the Session does not write
 * itself: provider requests and responses, raw payloads, stream deltas, tool batches,
 * requests and results, committed tool messages and history mutations. Events go through
 * `session.log()`, so they reach whatever logger that session uses. All taps observe
 * (`Stage.Observe`): logging never changes or fails a turn.
 */
export function tapSessionLogEvents(hooks: TesseraHooks): void {
  const states = new WeakMap<ISession, TurnState>();
  const stateOf = (session: ISession): TurnState => {
    let state = states.get(session);
    if (!state) {
      state = { executionId: randomUUID(), round: 0, deltaSequence: 0, rawSequence: 0, requestedAt: 0, awaitingResponse: false, calls: new Map(), resultsLogged: new Set() };
      states.set(session, state);
    }
    return state;
  };
  const log = (session: ISession, event: string, data: SessionLogData): void => (session as LoggingSession).log?.(event, data);
  const providerName = (session: ISession): string | null => (session as LoggingSession).options?.provider?.name ?? null;
  const now = (session: ISession): number => (session as LoggingSession).clock?.now() ?? Date.now();

  hooks.beforeProviderRequest.tap(TAP, ({ session, round, request }) => {
    const state = stateOf(session);
    // Rounds restart at 1 with every run(): that marks a new execution.
    if (round <= state.round) {
      state.executionId = randomUUID();
      state.calls.clear();
      state.resultsLogged.clear();
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

  hooks.textDelta.tap(TAP, ({ session, round, delta }) => {
    const state = stateOf(session);
    // One data object for both events: this runs once per streamed chunk.
    const data = { sequence: state.deltaSequence++, delta, round, executionId: state.executionId };
    log(session, 'provider_stream_raw_delta', data);
    log(session, 'text_delta', data);
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

  hooks.afterProviderResponse.tap(TAP, ({ session, round, message }) => {
    const calls = toolUses(message);
    if (calls.length === 0) return;
    const state = stateOf(session);
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

  hooks.stopFailure.tap(TAP, ({ session, error }) => {
    const state = stateOf(session);
    if (!state.awaitingResponse) return;
    state.awaitingResponse = false;
    // The call failed before anything streamed: there is no response to pair with the request.
    log(session, 'provider_error', { error: describeError(error), round: state.round, executionId: state.executionId });
  });

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
    log(session, 'tool_execution_result', {
      toolName: block.toolName,
      toolCallId: block.toolUseId,
      success: !block.isError,
      output: block.content,
      error: block.isError ? (typeof block.content === 'string' ? block.content : 'tool error') : null,
      errorCode: null,
      executed: false,
      batchIndex: state.calls.get(block.toolUseId)?.batchIndex ?? null,
      round: state.round,
      executionId: state.executionId,
    });
  }
}
