import type { SessionEvent } from './session-event.js';
import type { IContextWindowState } from './context-window.js';
import type { IHistoryEntry } from './history.js';
import type { AssistantMessage, Message } from './message.js';
import type { PermissionMode } from './permissions.js';
import type { ProviderRawPayload } from './provider.js';
import type { SessionServices } from './session-services.js';
import type { Tool, ToolResult, ToolSchema } from './tool.js';

/**
 * What hook taps see of a session. The kernel's `Session` implements it; taps that
 * need more cast to the concrete class they know.
 */
export interface ISession {
  readonly sessionId: string;
  readonly cwd: string;
  /** Services as this session resolved them (see `SessionServices`). */
  readonly services: SessionServices;
  /** The session's current permission mode. */
  getPermissionMode(): PermissionMode;
  /** The conversation so far, oldest first. Read-only: do not mutate the array or its messages. */
  getHistory(): readonly Message[];
  /**
   * Publishes an event on this session's stream (`session.subscribe`) — for plugins whose
   * work a UI shows (resolved `@file` references, skill activations). Absent on sessions that
   * have no stream.
   */
  emit?(event: SessionEvent): void;
}

/** Context of the kernel hooks `boot`, `ready` and `shutdown`. */
export interface KernelLifecycleContext {
  /** Set for `shutdown`. */
  reason?: string;
}

/** Why a session started (Claude Code's `SessionStart` sources): fresh, resumed from a store, or after a clear or a compaction. */
export type SessionStartSource = 'startup' | 'resume' | 'clear' | 'compact';
/** Why a session ended (Claude Code's `SessionEnd` reasons); `other` when nothing more specific applies. */
export type SessionEndReason = 'clear' | 'logout' | 'prompt_input_exit' | 'other';

/** Context of `sessionStart`, fired once per session before its first turn runs. */
export interface SessionStartContext {
  session: ISession;
  source: SessionStartSource;
}

/** Context of `sessionEnd`, fired when a session shuts down. */
export interface SessionEndContext {
  session: ISession;
  reason: SessionEndReason;
}

/** Waterfall: taps may rewrite `prompt`, add `additionalContext`, or set `blocked`. */
export interface UserPromptSubmitContext {
  session: ISession;
  prompt: string;
  /** What the user typed, when `prompt` was built from it (a slash command expanded to a skill's prompt). */
  rawPrompt?: string;
  /** Text added to the prompt inside a `<system-reminder>` block. */
  additionalContext: readonly string[];
  /**
   * When set, the prompt is not sent and `run()` rejects with `PromptBlockedError`. `source`
   * names who blocked it (`prompt-file-references`, a hook…) and `details` says why in a form
   * a UI can show (the failed references, for example).
   */
  blocked?: { reason: string; source?: string; details?: Record<string, unknown> };
}

/** The parts of a provider request that `beforeProviderRequest` taps may replace. */
export interface ProviderRequestDraft {
  messages: readonly Message[];
  system?: string;
  tools: readonly ToolSchema[];
  model?: string;
  /** See `ProviderRequest.nativeTools`. */
  nativeTools?: { webSearch?: boolean };
}

/** Waterfall: taps may replace `request` (trim messages, add cache markers…). */
export interface BeforeProviderRequestContext {
  session: ISession;
  round: number;
  request: ProviderRequestDraft;
}

/** Context of `afterProviderResponse`: the reply of model call number `round` of the run and how long it took, in ms. */
export interface AfterProviderResponseContext {
  session: ISession;
  round: number;
  message: AssistantMessage;
  durationMs: number;
}

/** Context of `textDelta`. The object is reused for every chunk of a run: copy `delta`, never keep the object. */
export interface TextDeltaContext {
  session: ISession;
  round: number;
  delta: string;
}

/** Context of `providerRawPayload`: one wire payload of model call number `round`. */
export interface ProviderRawPayloadContext {
  session: ISession;
  round: number;
  payload: ProviderRawPayload;
}

/** Context of `preToolUse`, before a tool call runs. `round` is the 1-based model call of the run that asked for it. */
export interface PreToolUseContext {
  session: ISession;
  round: number;
  toolCallId: string;
  toolName: string;
  /**
   * The input as it stands. Taps do not assign it: they return `{ decision: 'continue', input }`
   * and the kernel applies it, so later taps and the tool see the rewrite. (Assigning still
   * works for older plugins.)
   */
  input: unknown;
  /** Undefined for a tool nobody registered. */
  tool: Tool | undefined;
  signal: AbortSignal;
  /**
   * Who already approved the call, set by the kernel from a `continue` decision of a tap that
   * runs before the permission guard (a PreToolUse hook answering `allow`, or one whose `ask`
   * a person approved). The guard spares the prompt the permission mode alone would show; deny
   * rules still deny, and ask rules and protected paths still ask (as in Claude Code, a hook's
   * allow never overrides them).
   */
  approvedBy?: string;
  /**
   * The approval was a person's answer to a prompt (a PreToolUse hook's `ask`): the guard asks
   * no one again, ask rules and protected paths included; deny rules still deny.
   */
  approvedByPerson?: boolean;
}

/**
 * What a `preToolUse` tap returns. `deny` and `respond` are final (the first tap that returns
 * one decides); `continue` is not: the kernel applies it and the next tap runs.
 * - `deny`: the tool does not run; the model gets "Permission denied: …" (`source`
 *   `permission` or absent), "Blocked by hook: …" (`hook`), or "Blocked by <source>: …" for
 *   any other plugin that names itself (`checkpoints`, `reversible-execution`…).
 * - `respond`: the tool does not run; `result` is used as its result.
 * - `continue`: go on, with `input` replacing the call's input and/or `approvedBy` naming who
 *   approved it (the permission guard skips the prompt the mode alone would show; deny rules
 *   still deny, ask rules and protected paths still ask).
 */
export type PreToolUseDecision =
  | {
      decision: 'deny';
      reason: string;
      source?: 'permission' | 'hook' | (string & {});
      /** The reason is the whole tool result the model sees (an approver's own message), with no "Permission denied:" prefix. */
      verbatim?: boolean;
    }
  | { decision: 'respond'; result: ToolResult }
  | PreToolUseContinue;

/** The `continue` decision of a `preToolUse` tap (see {@link PreToolUseDecision}). */
export interface PreToolUseContinue {
  decision: 'continue';
  input?: unknown;
  approvedBy?: string;
  /** `approvedBy` names a person who answered a prompt for this call (see `PreToolUseContext.approvedByPerson`). */
  approvedByPerson?: boolean;
}

/** Waterfall: taps may replace `result` (truncate, annotate). */
export interface PostToolUseContext {
  session: ISession;
  round: number;
  toolCallId: string;
  toolName: string;
  /** The tool that ran (its `maxResultChars`, for output caps). */
  tool?: Tool;
  input: unknown;
  result: ToolResult;
  durationMs: number;
}

/** Context of `preCompact` and `postCompact`. */
export interface CompactContext {
  session: ISession;
  trigger: 'manual' | 'auto';
  instructions?: string;
  /** Set for `postCompact`. */
  summary?: string;
}

/** Context of `stop`, at the end of a successful turn: the final reply and its text. */
export interface StopContext {
  session: ISession;
  response: string;
  lastAssistantMessage: AssistantMessage;
  /** True when this turn already continued because of a stop tap. */
  stopHookActive: boolean;
}

/** Bail result of `stop`: keep going with `reason` as the next user message. */
export interface StopDecision {
  continue: true;
  reason: string;
}

/** Context of `stopFailure`: the error a turn failed with and its description. */
export interface StopFailureContext {
  session: ISession;
  error: unknown;
  reason: string;
}

/** Context of `contextUpdate`: the session's new context-window state. */
export interface ContextUpdateContext {
  session: ISession;
  state: IContextWindowState;
}

/** Context of `historyAppend`: the entry just added to the session's history. */
export interface HistoryAppendContext {
  session: ISession;
  entry: IHistoryEntry;
}

/** History was emptied: by `clearHistory()` or by compaction (which then appends the summary). */
export interface HistoryResetContext {
  session: ISession;
  reason: 'clear' | 'compact';
}

/** Context of `subagentStart` and `subagentStop`; `session` is the parent session. */
export interface SubagentContext {
  session: ISession;
  agentId: string;
  agentType: string;
  /** Set for `subagentStop`. */
  result?: string;
}

/** Context of `worktreeCreate` and `worktreeRemove`: the worktree's path and branch. */
export interface WorktreeContext {
  session?: ISession;
  path: string;
  branch?: string;
}

/** Context of `notification`: a message meant for the user, outside the conversation. */
export interface NotificationContext {
  session?: ISession;
  message: string;
  notificationType: string;
}

/** Context of `observerError`: the hook and tap name of an observer tap that threw, and what it threw. */
export interface ObserverErrorContext {
  hook: string;
  tap: string;
  error: unknown;
}
