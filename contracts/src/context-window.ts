import type { Message } from './message.js';
import type { Provider } from './provider.js';
import { createToken } from './token.js';

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
  updateFromHistory(messages: readonly Message[]): IContextWindowState;
  getState(): IContextWindowState;
  shouldAutoCompact(threshold: number): boolean;
  reset(): void;
}

/** Bound as a factory: one tracker per session. */
export type ContextWindowFactory = (options: { sessionId: string; model?: string }) => ContextWindow;
export const ContextWindow = createToken<ContextWindowFactory>('ContextWindow');

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

export interface CompactionResult {
  /** The summary text that replaces the compacted conversation. */
  summary: string;
}

/** Summarises a conversation (spec: CompactionOrchestrator). */
export interface Compaction {
  compact(request: CompactionRequest): Promise<CompactionResult>;
}

export const Compaction = createToken<Compaction>('Compaction');
