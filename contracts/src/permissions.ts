import { createToken } from './token.js';

/**
 * How tool calls are approved (Claude Code's modes) when no rule decides: `default` asks,
 * `acceptEdits` also allows file edits inside the working directories, `plan` allows read-only
 * tools only, `bypassPermissions` allows everything, `dontAsk` denies what would need asking.
 * Deny and ask rules apply in every mode.
 */
export type PermissionMode = 'plan' | 'default' | 'acceptEdits' | 'bypassPermissions' | 'dontAsk';

/** Every permission mode, in the order Claude Code cycles them. */
export const PERMISSION_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'];

/**
 * A mode as settings, flags and hosts spell it: `manual` is Claude Code's newer name for
 * `default`. `undefined` for anything that is not a mode Tessera has.
 */
export function parsePermissionMode(value: unknown): PermissionMode | undefined {
  const mode = value === 'manual' ? 'default' : value;
  return PERMISSION_MODES.includes(mode as PermissionMode) ? (mode as PermissionMode) : undefined;
}

/** `auto`: run without asking; `approve`: ask the approval handler; `deny`: refuse. */
export type PermissionDecision = 'auto' | 'approve' | 'deny';

/** One tool call to judge, with the session's current mode and working directory. */
export interface PermissionQuery {
  toolName: string;
  input: unknown;
  mode: PermissionMode;
  cwd: string;
  sessionId: string;
}

/** A policy's decision on a tool call, with the rule and reason behind it when there is one. */
export interface PermissionVerdict {
  decision: PermissionDecision;
  /** The rule that decided, e.g. `Bash(rm *)`, for messages and "allow for session". */
  rule?: string;
  reason?: string;
}

/** Decides whether a tool call may run. Consumed by the permission enforcer plugin. */
export interface PermissionPolicy {
  /** Decides on one tool call. Must not ask the user: `approve` leaves that to the {@link ApprovalHandler}. */
  evaluate(query: PermissionQuery): PermissionVerdict | Promise<PermissionVerdict>;
}

/**
 * The policy the permission enforcer consults before each tool call. Bound by `permissionsPlugin()`
 * (rules from settings) or, in tests, `allowAllPermissions()`.
 */
export const PermissionPolicy = createToken<PermissionPolicy>('PermissionPolicy');

/** A tool call the policy sent for approval. `signal` aborts when the run is aborted: stop asking then. */
export interface ApprovalRequest {
  toolName: string;
  input: unknown;
  sessionId: string;
  toolCallId: string;
  /** The rule that would be remembered if the user allows for the session. */
  suggestedRule?: string;
  signal: AbortSignal;
}

/**
 * `allow-session` remembers the suggested rule for the rest of the session. A `ApprovalVerdict`
 * says the same with more: a replacement input to run the call with, or the message the model
 * is given when the call is refused (the Agent SDK's `canUseTool` answers this way).
 */
export type ApprovalAnswer = boolean | 'allow-session' | ApprovalVerdict;

/**
 * A detailed answer. `allow` may replace the input and, with `remember`, keep the suggested rule
 * for the session; `deny` may give the model a message, and `interrupt` asks the host to stop
 * the run as well (the Agent SDK's meaning; the kernel itself does not act on it).
 */
export type ApprovalVerdict =
  | { behavior: 'allow'; updatedInput?: unknown; remember?: boolean }
  | { behavior: 'deny'; message?: string; interrupt?: boolean };

/** Whether an answer lets the call run. */
export function isApproved(answer: ApprovalAnswer): boolean {
  return answer === true || answer === 'allow-session' || (typeof answer === 'object' && answer !== null && answer.behavior === 'allow');
}

/** Asks a human (or a test double) whether a tool call that needs approval may run. */
export interface ApprovalHandler {
  /** Resolves with the user's answer. A rejection counts as a denial. */
  requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer>;
}

/**
 * Who answers approval requests: bound by the host (the TUI, an ACP or HTTP transport, a test's
 * `recordingApprovals()`). Optional: without one, calls that need approval are denied.
 */
export const ApprovalHandler = createToken<ApprovalHandler>('ApprovalHandler');
