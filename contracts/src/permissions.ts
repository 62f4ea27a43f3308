import { createToken } from './token.js';

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

export interface PermissionQuery {
  toolName: string;
  input: unknown;
  mode: PermissionMode;
  cwd: string;
  sessionId: string;
}

export interface PermissionVerdict {
  decision: PermissionDecision;
  /** The rule that decided, e.g. `Bash(rm *)`, for messages and "allow for session". */
  rule?: string;
  reason?: string;
}

/** Decides whether a tool call may run. Consumed by the permission enforcer plugin. */
export interface PermissionPolicy {
  evaluate(query: PermissionQuery): PermissionVerdict | Promise<PermissionVerdict>;
}

export const PermissionPolicy = createToken<PermissionPolicy>('PermissionPolicy');

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

export type ApprovalVerdict =
  | { behavior: 'allow'; updatedInput?: unknown; remember?: boolean }
  | { behavior: 'deny'; message?: string; interrupt?: boolean };

/** Whether an answer lets the call run. */
export function isApproved(answer: ApprovalAnswer): boolean {
  return answer === true || answer === 'allow-session' || (typeof answer === 'object' && answer !== null && answer.behavior === 'allow');
}

/** Asks a human (or a test double) whether a tool call that needs approval may run. */
export interface ApprovalHandler {
  requestApproval(request: ApprovalRequest): Promise<ApprovalAnswer>;
}

export const ApprovalHandler = createToken<ApprovalHandler>('ApprovalHandler');
