import type { HookEventName } from '@tessera/contracts';
import type { ProcessOutcome } from './command-executor.js';

export type HookPermissionDecision = 'allow' | 'deny' | 'ask' | 'defer';

/** What one handler said, read from its exit code and output. */
export interface HandlerOutcome {
  /** Where the handler came from, e.g. `settings.json hooks.PreToolUse[0].hooks[1]`. */
  hook: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Exit 2, `decision: "block"`, a `deny` permission decision or `ok: false`. */
  blocked: boolean;
  reason?: string;
  /** `continue: false`: stop what is going on, with `stopReason`. */
  stop?: { reason: string };
  permissionDecision?: HookPermissionDecision;
  permissionDecisionReason?: string;
  updatedInput?: unknown;
  additionalContext: string[];
  systemMessage?: string;
  /** A non-blocking problem worth showing: other exit codes, timeouts, bad JSON, configuration errors. */
  notice?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
// Plain stdout of these events is added to the model's context.
const PLAIN_CONTEXT_EVENTS: ReadonlySet<HookEventName> = new Set(['UserPromptSubmit', 'SessionStart']);
const DECISIONS = new Set(['allow', 'deny', 'ask', 'defer']);

/**
 * Reads a process result with Claude Code's rules: exit 0 → JSON or plain stdout; 2 → block;
 * other → a notice, plus its JSON if it printed some (current Claude Code reads JSON on every
 * exit code, so a hook that prints a deny and then exits 1 still denies).
 */
export function interpretOutcome(hook: string, event: HookEventName, result: ProcessOutcome): HandlerOutcome {
  const outcome: HandlerOutcome = { hook, exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr, blocked: false, additionalContext: [] };
  if (result.timedOut || result.aborted) {
    // A hook that did not finish has no say: the action goes ahead (fails open).
    outcome.notice = `${hook} ${result.timedOut ? 'timed out' : 'was aborted'} and was ignored`;
    return outcome;
  }
  const stdout = result.stdout.trim();
  let json: Record<string, unknown> | undefined;
  if (stdout.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(stdout);
      if (isRecord(parsed)) json = parsed;
    } catch {
      if (result.exitCode === 0) outcome.notice = `${hook} printed output starting with "{" that is not valid JSON; it was ignored`;
    }
  }
  if (result.exitCode === 2) {
    outcome.blocked = true;
    outcome.reason = result.stderr.trim() || `blocked by ${hook}`;
    if (event === 'PreToolUse') outcome.permissionDecision = 'deny';
    return outcome;
  }
  if (result.exitCode !== 0) {
    const firstLine = result.stderr.trim().split('\n')[0] ?? '';
    outcome.notice = `${hook} failed with exit code ${result.exitCode}${firstLine ? `: ${firstLine}` : ''}`;
    if (!json) return outcome;
  }
  if (!json) {
    if (stdout && PLAIN_CONTEXT_EVENTS.has(event)) outcome.additionalContext.push(stdout);
    return outcome;
  }
  if (json.continue === false) outcome.stop = { reason: typeof json.stopReason === 'string' ? json.stopReason : `stopped by ${hook}` };
  if (typeof json.systemMessage === 'string') outcome.systemMessage = json.systemMessage;
  const reason = typeof json.reason === 'string' ? json.reason : undefined;
  if (json.decision === 'block') {
    outcome.blocked = true;
    outcome.reason = reason ?? `blocked by ${hook}`;
    if (event === 'PreToolUse') outcome.permissionDecision = 'deny';
  } else if (json.decision === 'approve' && event === 'PreToolUse') {
    outcome.permissionDecision = 'allow';
  }
  if (json.ok === false) {
    outcome.blocked = true;
    outcome.reason = reason ?? `blocked by ${hook}`;
  }
  const specific = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : undefined;
  if (specific) {
    if (typeof specific.additionalContext === 'string' && specific.additionalContext !== '') outcome.additionalContext.push(specific.additionalContext);
    if (event === 'PreToolUse') {
      if (typeof specific.permissionDecision === 'string' && DECISIONS.has(specific.permissionDecision)) {
        outcome.permissionDecision = specific.permissionDecision as HookPermissionDecision;
      }
      if (typeof specific.permissionDecisionReason === 'string') outcome.permissionDecisionReason = specific.permissionDecisionReason;
      if (isRecord(specific.updatedInput)) outcome.updatedInput = specific.updatedInput;
      if (outcome.permissionDecision === 'deny') {
        outcome.blocked = true;
        outcome.reason = outcome.permissionDecisionReason ?? outcome.reason ?? `denied by ${hook}`;
      }
    }
  }
  return outcome;
}

/** All matching handlers' outcomes combined. */
export interface HookRunResult {
  event: HookEventName;
  outcomes: HandlerOutcome[];
  blocked: boolean;
  /** Reasons of the blocking handlers, joined. */
  reason?: string;
  stop?: { reason: string };
  /** Across handlers: deny > defer > ask > allow. */
  permissionDecision?: HookPermissionDecision;
  permissionDecisionReason?: string;
  updatedInput?: unknown;
  additionalContext: string[];
  systemMessages: string[];
  notices: string[];
}

const RANK: Record<HookPermissionDecision, number> = { deny: 4, defer: 3, ask: 2, allow: 1 };

export function combineOutcomes(event: HookEventName, outcomes: HandlerOutcome[]): HookRunResult {
  const result: HookRunResult = { event, outcomes, blocked: false, additionalContext: [], systemMessages: [], notices: [] };
  const reasons: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.blocked) {
      result.blocked = true;
      if (outcome.reason) reasons.push(outcome.reason);
    }
    if (outcome.stop && !result.stop) result.stop = outcome.stop;
    if (outcome.permissionDecision && (!result.permissionDecision || RANK[outcome.permissionDecision] > RANK[result.permissionDecision])) {
      result.permissionDecision = outcome.permissionDecision;
      if (outcome.permissionDecisionReason !== undefined) result.permissionDecisionReason = outcome.permissionDecisionReason;
      else delete result.permissionDecisionReason;
    }
    if (outcome.updatedInput !== undefined) result.updatedInput = outcome.updatedInput;
    result.additionalContext.push(...outcome.additionalContext);
    if (outcome.systemMessage) result.systemMessages.push(outcome.systemMessage);
    if (outcome.notice) result.notices.push(outcome.notice);
  }
  if (reasons.length > 0) result.reason = reasons.join('\n');
  return result;
}
