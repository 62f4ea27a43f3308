import type { AssistantMessage, Message } from './message.js';
import { createToken } from './token.js';
import type { ModelInfo } from './provider-profile.js';
import type { ToolSchema } from './tool.js';

/** Which part of the exchange a raw payload is: the request sent, the full response, or one stream event. */
export type ProviderRawPayloadKind = 'request' | 'response' | 'stream_event';

/** A provider's wire payload as sent or received, for debugging and recording; shape is provider-specific. */
export interface ProviderRawPayload {
  provider: string;
  /** API surface, e.g. `messages` or `chat.completions`. */
  apiSurface?: string;
  payloadKind: ProviderRawPayloadKind;
  payload: unknown;
}

/** A call to a tool the provider hosts and runs itself (such as web search); the kernel does not execute it. */
export interface ServerToolUse {
  name: string;
  input: unknown;
}

/** A piece of a tool call's input JSON, as the model streams it (the call's whole input comes with the reply). */
export interface ToolInputDelta {
  toolCallId: string;
  toolName: string;
  /** The next characters of the input's JSON text. */
  delta: string;
}

/** A retry the provider is about to make after a failed attempt. */
export interface ProviderRetry {
  /** 1-based number of the retry about to happen. */
  attempt: number;
  maxRetries: number;
  delayMs: number;
  /** The failure's code (`overloaded`, `rate_limit`…) and HTTP status when there was one. */
  code: string;
  status?: number;
  message: string;
}

/** One model round: everything the provider needs for a single call. */
export interface ProviderRequest {
  messages: readonly Message[];
  system?: string;
  tools: readonly ToolSchema[];
  /** Aborting ends the stream; the provider resolves with the partial reply marked `interrupted`. */
  signal: AbortSignal;
  model?: string;
  /**
   * Per-call requests for the provider's hosted tools. `webSearch: true` (what a session sends
   * by default) uses hosted web search when the provider offers it and its own options do not
   * turn it off; `webSearch: false` keeps it out of this call (the permission layer sets it
   * when `WebSearch` is denied); absent means the provider's own setting. Providers never
   * keep these between calls: one session's request cannot change another's.
   */
  nativeTools?: { webSearch?: boolean };
  /** Per-call: deltas of this call go here and nowhere else (shared provider instances stay isolated). */
  onTextDelta?: (delta: string) => void;
  /** Per-call: reasoning text as it streams, for providers that expose it. */
  onThinkingDelta?: (delta: string) => void;
  /** Per-call: every wire payload of this call, as the provider sends and receives it. */
  onProviderNativeRawPayload?: (payload: ProviderRawPayload) => void;
  /**
   * Per-call: a tool call's input JSON as it streams, for providers that stream it. Absent when
   * nobody watches, so a provider does nothing extra then.
   */
  onToolInputDelta?: (delta: ToolInputDelta) => void;
  /** Per-call: each hosted tool call the provider makes during this round. */
  onServerToolUse?: (use: ServerToolUse) => void;
  /** Called before each retry of a failed attempt (Claude Code's `system/api_retry`). */
  onRetry?: (retry: ProviderRetry) => void;
}

/**
 * A model backend. One `stream()` call is one model round. Contract:
 * - text is delivered through `request.onTextDelta` as it arrives;
 * - on abort it resolves (not rejects) with the partial message, `state: 'interrupted'`,
 *   `stopReason: 'aborted'` — a rejection with an `AbortError` is tolerated too;
 * - other failures reject with a `TesseraError` of category `provider`.
 */
export interface Provider {
  readonly name: string;
  readonly model?: string;
  /** Makes one model call and resolves with the complete (or, on abort, partial) assistant message. */
  stream(request: ProviderRequest): Promise<AssistantMessage>;
  /** Context-window facts for a model (default: this provider's model), when known. */
  getModelInfo?(model?: string): ModelInfo | undefined;
}

/**
 * The session's model backend, bound by a provider plugin (`anthropicProvider()`, `openaiProvider()`,
 * …). The kernel resolves it for each session unless the session options pass a `provider`.
 */
export const Provider = createToken<Provider>('Provider');
