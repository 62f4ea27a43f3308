import type { IContextWindowState } from './context-window.js';
import type { AssistantMessage } from './message.js';
import type { ProviderRetry } from './provider.js';
import type { IPromptFileReferenceRecord, ISkillActivationEvent } from './interactive.js';

/** What a running tool reports about itself (`ToolContext.reportProgress`). */
export interface ToolProgress {
  /** One line for a status row ("cloned 120/300 objects"). */
  message?: string;
  /** 0…1 when the tool can tell. */
  fraction?: number;
  /** Anything structured a UI may show. */
  data?: unknown;
}

/**
 * One session's events, in the order they happen. Every UI, transport, logger and test reads
 * this one stream (`session.subscribe`), so no two of them map the session differently.
 *
 * A run emits `turn_start`, then per round `text_delta`/`thinking_delta`s and an
 * `assistant_message`, then for each tool call `tool_start`, any `tool_progress`, `tool_end`;
 * `context_update` when the estimate changes and `compact` after a compaction; it ends with
 * exactly one of `turn_end` (success), `error` (failure) or `interrupted` (abort).
 */
export type SessionEvent =
  | { type: 'turn_start'; prompt: string }
  | { type: 'text_delta'; round: number; delta: string }
  | { type: 'thinking_delta'; round: number; delta: string }
  | { type: 'assistant_message'; round: number; message: AssistantMessage }
  /** A tool call's input JSON as the model streams it (providers that stream it; only while a `subscribe` listener exists). */
  | { type: 'tool_input_delta'; round: number; toolCallId: string; toolName: string; delta: string }
  | { type: 'tool_start'; round: number; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool_progress'; toolCallId: string; toolName: string; progress: ToolProgress }
  | {
      type: 'tool_end';
      round: number;
      toolCallId: string;
      toolName: string;
      input: unknown;
      success: boolean;
      /** Set when a permission rule, the user or a hook refused the call. */
      denied?: boolean;
      /** The runtime's or the tool's code for a failure (`denied`, `unknown_tool`, `tool_error`, …). */
      errorCode?: string;
      /** The result's structured data (diffs, start lines…), for display. */
      data?: unknown;
      durationMs: number;
    }
  | { type: 'provider_retry'; round: number; retry: ProviderRetry }
  | { type: 'context_update'; state: IContextWindowState }
  | { type: 'compact'; trigger: 'manual' | 'auto'; summary: string; before: IContextWindowState | undefined; after: IContextWindowState | undefined }
  | { type: 'turn_end'; text: string; rounds: number }
  | { type: 'error'; message: string; code?: string }
  | { type: 'interrupted' }
  /** `@file` references in the prompt were read and sent to the model (contents are not in the event). */
  | { type: 'prompt_file_reference'; prompt: string; references: readonly IPromptFileReferenceRecord[] }
  | { type: 'skill_activation'; event: ISkillActivationEvent };

/** The `type` of a {@link SessionEvent}. */
export type SessionEventType = SessionEvent['type'];
/** A subscriber to a session's events. Called synchronously as each event happens: keep it cheap. */
export type SessionEventListener = (event: SessionEvent) => void;
