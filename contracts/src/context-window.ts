import type { Message } from './message.js';
import type { Provider } from './provider.js';
import { createToken } from './token.js';

/** How full a session's context window is, in tokens. */
export interface IContextWindowState {
  usedTokens: number;
  maxTokens: number;
  /** 0–100. */
  usedPercentage: number;
  /** True when the figure comes from provider usage, false when estimated. */
  exact: boolean;
}

/** Tracks context usage for one session (spec: ContextWindowTracker). */
export interface ContextWindow {
  /** Recomputes usage from the session's messages and returns the new state. */
  updateFromHistory(messages: readonly Message[]): IContextWindowState;
  /** The state as of the last update. */
  getState(): IContextWindowState;
  /** True when usage has reached `threshold`, a fraction of the window (0.835 is 83.5 %). */
  shouldAutoCompact(threshold: number): boolean;
  /** Forgets all usage; the session calls it when its history is cleared, compacted or truncated. */
  reset(): void;
}

/** Bound as a factory: one tracker per session. */
export type ContextWindowFactory = (options: { sessionId: string; model?: string }) => ContextWindow;
/**
 * The factory sessions build their context-window tracker with, bound by `contextWindow()`.
 * Optional: without it sessions track no usage and never auto-compact.
 */
export const ContextWindow = createToken<ContextWindowFactory>('ContextWindow');

/** A conversation to summarise. `trigger` says whether the user asked (`manual`) or the threshold was reached. */
export interface CompactionRequest {
  messages: readonly Message[];
  systemMessage?: string;
  instructions?: string;
  trigger: 'manual' | 'auto';
  signal: AbortSignal;
  /**
   * The session's provider and model at the time of the request (they change with
   * `session.setModel`). A compaction that was not given a provider of its own summarises
   * with these, so it follows a session that switched provider.
   */
  provider?: Provider;
  model?: string;
}

/** What a compaction produced. */
export interface CompactionResult {
  /** The summary text that replaces the compacted conversation. */
  summary: string;
}

/** Summarises a conversation (spec: CompactionOrchestrator). */
export interface Compaction {
  /** Summarises `request.messages` and resolves with the summary; rejects when the model call fails or is aborted. */
  compact(request: CompactionRequest): Promise<CompactionResult>;
}

/**
 * The summariser `session.compact()` and auto-compaction use, bound by `compaction()`. Optional:
 * without it `session.compact()` throws `CompactionUnavailableError` and auto-compaction is skipped.
 */
export const Compaction = createToken<Compaction>('Compaction');
