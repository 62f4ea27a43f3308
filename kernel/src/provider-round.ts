import {
  isAbortError,
  type AssistantMessage,
  type BeforeProviderRequestContext,
  type ProviderRawPayload,
  type ProviderRetry,
  type ServerToolUse,
  type ToolInputDelta,
} from '@tessera/contracts';
import { ProviderTimeoutError } from './errors.js';
import { isTapped } from './hooks.js';
import type { Session } from './session.js';

/** What a session asks of provider-hosted tools unless its options say otherwise. */
const DEFAULT_NATIVE_TOOLS: Readonly<{ webSearch?: boolean }> = Object.freeze({ webSearch: true });

/**
 * Per-run state of the provider side of a turn. One instance per `run()`; its delta
 * callback is created once and reused by every round, so the streaming path allocates
 * nothing per chunk unless a `textDelta` tap is listening.
 */
export class ProviderRound {
  round = 0;
  /** What streamed so far this round; kept for providers that reject on abort instead of resolving. */
  private streamed = '';
  private lastActivity = 0;
  private readonly timeoutMs: number;
  private readonly deltaContext: { session: Session; round: number; delta: string };
  private readonly firstDelta: ((delta: string) => void) | undefined;
  private readonly secondDelta: ((delta: string) => void) | undefined;
  /**
   * The callbacks handed to the provider reach this round only through `link`. `release()`
   * empties it when the run ends, so a callback something still holds (an SDK, V8's feedback
   * for a hot call site) keeps a two-field object alive instead of the whole session.
   */
  private readonly link: { round: ProviderRound | undefined };
  readonly onTextDelta: (delta: string) => void;
  private readonly onThinkingDelta: (delta: string) => void;
  private readonly onRawPayload: (payload: ProviderRawPayload) => void;
  private readonly onServerToolUse: (use: ServerToolUse) => void;
  private readonly onToolInputDelta: (delta: ToolInputDelta) => void;

  constructor(
    private readonly session: Session,
    private readonly signal: AbortSignal,
  ) {
    const { options } = session;
    this.timeoutMs = options.providerTimeout && options.providerTimeout > 0 ? options.providerTimeout : 0;
    // At most two: the session's onTextDelta and the run's.
    [this.firstDelta, this.secondDelta] = session.deltaCallbacks;
    // One context object per run, updated in place: the hottest hook allocates nothing per chunk.
    this.deltaContext = { session, round: 0, delta: '' };
    const link: { round: ProviderRound | undefined } = { round: this };
    this.link = link;
    this.onTextDelta = (delta: string) => link.round?.textDelta(delta);
    this.onThinkingDelta = (delta: string) => link.round?.thinkingDelta(delta);
    this.onRawPayload = (payload: ProviderRawPayload) => link.round?.rawPayload(payload);
    this.onServerToolUse = (use: ServerToolUse) => link.round?.serverToolUse(use);
    this.onToolInputDelta = (delta: ToolInputDelta) => link.round?.toolInputDelta(delta);
  }

  /** Detaches the provider callbacks from this round; call when the run is over. */
  release(): void {
    this.link.round = undefined;
  }

  private textDelta(delta: string): void {
    if (this.timeoutMs > 0) this.lastActivity = this.session.clock.now();
    this.streamed += delta;
    const hook = this.session.hooks.textDelta;
    if (hook.taps.length > 0) {
      const context = this.deltaContext;
      context.round = this.round;
      context.delta = delta;
      hook.call(context);
    }
    // The session's and the run's onTextDelta, fixed for the run (monomorphic direct calls).
    this.firstDelta?.(delta);
    this.secondDelta?.(delta);
    if (this.session.subscribers > 0) this.session.emit({ type: 'text_delta', round: this.round, delta });
  }

  private thinkingDelta(delta: string): void {
    this.activity();
    // Rarer than text: every listener gets it (an `observe` listener has no other way to it).
    if (this.session.hasListeners()) this.session.emit({ type: 'thinking_delta', round: this.round, delta });
  }

  /** Thinking streams count as activity for the idle timeout; their text is in the final message. */
  private activity(): void {
    if (this.timeoutMs > 0) this.lastActivity = this.session.clock.now();
  }

  private toolInputDelta(delta: ToolInputDelta): void {
    this.activity();
    if (this.session.subscribers > 0) this.session.emit({ type: 'tool_input_delta', round: this.round, toolCallId: delta.toolCallId, toolName: delta.toolName, delta: delta.delta });
  }

  private rawPayload(payload: ProviderRawPayload): void {
    this.activity();
    const hook = this.session.hooks.providerRawPayload;
    if (isTapped(hook)) hook.call({ session: this.session, round: this.round, payload });
  }

  private serverToolUse(use: ServerToolUse): void {
    this.session.log('server_tool', { name: use.name, input: use.input as object });
  }

  /**
   * One model call. Resolves with the reply (partial and `interrupted` on abort); rejects
   * with `ProviderTimeoutError` after an idle timeout, or with the provider's error — in
   * both cases `partialMessage()` still holds what had streamed.
   */
  private readonly onRetry = (retry: ProviderRetry): void => {
    if (this.session.subscribers > 0) this.session.emit({ type: 'provider_retry', round: this.round, retry });
  };

  async stream(): Promise<AssistantMessage> {
    const { session } = this;
    const { hooks, options } = session;
    this.streamed = '';
    let request: BeforeProviderRequestContext['request'] = {
      messages: session.getHistory(),
      system: session.getSystemMessage(),
      tools: session.toolSchemas,
      model: session.requestedModel(),
      nativeTools: options.nativeTools ?? DEFAULT_NATIVE_TOOLS,
    };
    if (isTapped(hooks.beforeProviderRequest)) {
      const context = (await hooks.beforeProviderRequest.promise({
        session,
        round: this.round,
        request,
      })) as BeforeProviderRequestContext;
      request = context.request;
      // Aborted while an async tap waited (a hook script, a remote policy): the model is not asked.
      if (this.signal.aborted) return this.partialMessage();
    }

    let signal = this.signal;
    let timedOut = false;
    let timer: ReturnType<typeof session.clock.setTimeout> | undefined;
    let unlink: (() => void) | undefined;
    if (this.timeoutMs > 0) {
      const call = new AbortController();
      const forward = (): void => call.abort(this.signal.reason);
      this.signal.addEventListener('abort', forward, { once: true });
      unlink = () => this.signal.removeEventListener('abort', forward);
      signal = call.signal;
      const { clock } = session;
      this.lastActivity = clock.now();
      // Deltas only stamp `lastActivity`; the timer re-arms itself for the remaining time,
      // so the streaming path never touches timers.
      const check = (): void => {
        const idle = clock.now() - this.lastActivity;
        if (idle >= this.timeoutMs) {
          timedOut = true;
          call.abort(new ProviderTimeoutError(session.getProvider().name, this.timeoutMs));
        } else {
          timer = clock.setTimeout(check, this.timeoutMs - idle);
        }
      };
      timer = clock.setTimeout(check, this.timeoutMs);
    }

    let message: AssistantMessage;
    try {
      message = await session.getProvider().stream({
        messages: request.messages,
        system: request.system,
        tools: request.tools,
        model: request.model,
        nativeTools: request.nativeTools,
        signal,
        onTextDelta: this.onTextDelta,
        onThinkingDelta: this.onThinkingDelta,
        onProviderNativeRawPayload: this.onRawPayload,
        onServerToolUse: this.onServerToolUse,
        // Only while someone subscribes (a UI streaming tool input): otherwise providers skip the work.
        onToolInputDelta: session.subscribers > 0 ? this.onToolInputDelta : undefined,
        onRetry: this.onRetry,
      });
    } catch (error) {
      if (!signal.aborted || !isAbortError(error)) {
        if (timedOut) throw this.timeoutError();
        throw error;
      }
      message = this.partialMessage();
    } finally {
      if (timer !== undefined) session.clock.clearTimeout(timer);
      unlink?.();
    }
    if (timedOut) throw this.timeoutError();
    return message;
  }

  /** What was streamed so far, as an interrupted reply. */
  partialMessage(): AssistantMessage {
    const text = this.streamed;
    return {
      role: 'assistant',
      content: text === '' ? [] : [{ type: 'text', text }],
      state: 'interrupted',
      stopReason: 'aborted',
      provider: this.session.getProvider().name,
    };
  }

  private timeoutError(): ProviderTimeoutError {
    return new ProviderTimeoutError(this.session.getProvider().name, this.timeoutMs);
  }
}
