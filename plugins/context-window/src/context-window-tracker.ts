import {
  TesseraError,
  type ContextWindow,
  type IContextWindowState,
  type Message,
  type ProviderUsage,
} from '@tessera/contracts';
import { DEFAULT_CONTEXT_WINDOW, lookupModelContextWindow } from './model-windows.js';

/** A fraction of the window in (0, 1], or `false` for "never compact automatically". */
export type TAutoCompactThreshold = number | false;

export const DEFAULT_AUTO_COMPACT_THRESHOLD = 0.835;

/** Characters per token of the fallback estimate (the spec's `ceil(JSON length / 4)`). */
const CHARS_PER_TOKEN = 4;
/** What one image costs in the estimate instead of its base64 length (≈ a 1.15 MP image on Claude). */
const IMAGE_TOKENS = 1_600;

export interface ContextWindowTrackerOptions {
  model?: string;
  /** Window size in tokens; wins over the model table. */
  maxTokens?: number;
  /** Used by `shouldAutoCompact()` when called without an argument (default 0.835). */
  autoCompactThreshold?: TAutoCompactThreshold;
}

export interface ContextWindowTrackerState extends IContextWindowState {
  /** 0–100, two decimals. */
  remainingPercentage: number;
}

export class ContextWindowConfigurationError extends TesseraError {
  constructor(field: string, message: string) {
    super(`Invalid context-window option "${field}": ${message}`, {
      code: 'invalid_context_window_option',
      category: 'configuration',
      recoverable: false,
      details: { field },
    });
  }
}

/** Throws unless `threshold` is a fraction in (0, 1] or `false`. */
export function validateAutoCompactThreshold(threshold: unknown): asserts threshold is TAutoCompactThreshold {
  if (threshold === false) return;
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
    throw new ContextWindowConfigurationError(
      'autoCompactThreshold',
      `expected a fraction in (0, 1] (e.g. 0.835) or false to disable auto-compaction, got ${String(threshold)}.`,
    );
  }
}

/** Every token a call occupied: uncached and cached input plus the reply. */
export function usageTotal(usage: ProviderUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens;
}

/**
 * Context usage of one session (spec: ContextWindowTracker). Provider usage on the last
 * message is taken as exact; otherwise the figure is the larger of the serialised-history
 * estimate and the latest provider usage — never a sum of historical usages.
 *
 * The history only grows between compactions, so the estimate is kept as a running total:
 * each call costs O(new messages), not O(history). A history that shrank or was replaced
 * is rescanned, with per-message estimates cached by identity.
 */
export class ContextWindowTracker implements ContextWindow {
  readonly maxTokens: number;
  private autoCompactThreshold: TAutoCompactThreshold;
  private readonly perMessage = new WeakMap<Message, number>();
  private counted = 0;
  private head: Message | undefined;
  private tail: Message | undefined;
  private estimatedChars = 0;
  private latestUsage: number | undefined;
  private latestUsageIndex = -1;
  private state: ContextWindowTrackerState;

  constructor(options: ContextWindowTrackerOptions = {}) {
    const maxTokens = options.maxTokens ?? lookupModelContextWindow(options.model) ?? DEFAULT_CONTEXT_WINDOW;
    if (!Number.isInteger(maxTokens) || maxTokens <= 0) {
      throw new ContextWindowConfigurationError('maxTokens', `expected a positive integer number of tokens, got ${String(maxTokens)}.`);
    }
    const threshold = options.autoCompactThreshold ?? DEFAULT_AUTO_COMPACT_THRESHOLD;
    validateAutoCompactThreshold(threshold);
    this.maxTokens = maxTokens;
    this.autoCompactThreshold = threshold;
    this.state = this.buildState(0, false);
  }

  /** Recomputes usage from the session's messages and returns the new state. */
  updateFromHistory(messages: readonly Message[]): ContextWindowTrackerState {
    const continues =
      this.counted <= messages.length &&
      (this.counted === 0 || (messages[0] === this.head && messages[this.counted - 1] === this.tail));
    if (!continues) this.forget();
    for (let index = this.counted; index < messages.length; index++) {
      const message = messages[index]!;
      this.estimatedChars += this.messageChars(message);
      if (message.role === 'assistant' && message.usage) {
        this.latestUsage = usageTotal(message.usage);
        this.latestUsageIndex = index;
      }
    }
    this.counted = messages.length;
    this.head = messages[0];
    this.tail = messages[messages.length - 1];

    const exact = this.latestUsage !== undefined && this.latestUsageIndex === messages.length - 1;
    const estimate = Math.ceil(this.estimatedChars / CHARS_PER_TOKEN);
    const used = exact ? this.latestUsage! : Math.max(estimate, this.latestUsage ?? 0);
    this.state = this.buildState(used, exact);
    return this.state;
  }

  getState(): ContextWindowTrackerState {
    return this.state;
  }

  /** The spec's name for `getState()`. */
  getContextState(): ContextWindowTrackerState {
    return this.state;
  }

  /** True when usage reached `threshold` (default: this tracker's own threshold). `false` never compacts. */
  shouldAutoCompact(threshold: TAutoCompactThreshold = this.autoCompactThreshold): boolean {
    validateAutoCompactThreshold(threshold);
    if (threshold === false) return false;
    return this.state.usedTokens >= threshold * this.maxTokens;
  }

  getAutoCompactThreshold(): TAutoCompactThreshold {
    return this.autoCompactThreshold;
  }

  setAutoCompactThreshold(threshold: TAutoCompactThreshold): void {
    validateAutoCompactThreshold(threshold);
    this.autoCompactThreshold = threshold;
  }

  /** Forgets all usage (history cleared). */
  reset(): void {
    this.forget();
    this.state = this.buildState(0, false);
  }

  private forget(): void {
    this.counted = 0;
    this.head = undefined;
    this.tail = undefined;
    this.estimatedChars = 0;
    this.latestUsage = undefined;
    this.latestUsageIndex = -1;
  }

  private messageChars(message: Message): number {
    const cached = this.perMessage.get(message);
    if (cached !== undefined) return cached;
    const chars = serialisedChars(message);
    this.perMessage.set(message, chars);
    return chars;
  }

  private buildState(usedTokens: number, exact: boolean): ContextWindowTrackerState {
    const percentage = Math.min(100, Math.round((usedTokens / this.maxTokens) * 10_000) / 100);
    return {
      usedTokens,
      maxTokens: this.maxTokens,
      usedPercentage: percentage,
      remainingPercentage: Math.round((100 - percentage) * 100) / 100,
      exact,
    };
  }
}

/** JSON length of a message, with base64 image data counted as a fixed token cost instead. */
function serialisedChars(message: Message): number {
  const content = message.content;
  if (typeof content === 'string' || !hasImage(content)) return JSON.stringify(message).length;
  let images = 0;
  const json = JSON.stringify(message, function (this: { type?: unknown }, key, value: unknown) {
    if (key === 'data' && this.type === 'image' && typeof value === 'string') {
      images += 1;
      return '';
    }
    return value;
  });
  return json.length + images * IMAGE_TOKENS * CHARS_PER_TOKEN;
}

function hasImage(blocks: ReadonlyArray<{ type: string; content?: unknown }>): boolean {
  for (const block of blocks) {
    if (block.type === 'image') return true;
    if (block.type === 'tool_result' && Array.isArray(block.content) && hasImage(block.content as Array<{ type: string }>)) return true;
  }
  return false;
}
