import {
  describeError,
  type ISession,
  type PermissionPolicy,
  type PostToolUseContext,
  type PreToolUseContext,
  type PreToolUseDecision,
  type SandboxPaths,
  type ShellDirectories,
} from '@tessera/contracts';
import { requestApproval, type ApprovalChainOptions } from './approval-chain.js';
import { hostCommand, hostInput, hostPathFor } from './sandbox-view.js';
import type { SessionRule } from './evaluate-permission.js';
import { RulesPermissionPolicy } from './rules-permission-policy.js';
import { DEFAULT_MAX_OUTPUT_CHARS, truncateToolResult } from './truncate-output.js';

export interface PermissionEnforcerOptions extends ApprovalChainOptions {
  policy: PermissionPolicy;
  /**
   * Tool output longer than this is middle-truncated; `false` turns it off. Default 30,000.
   * A tool that declares `maxResultChars` (it keeps its results within that itself) is capped
   * at its own figure instead, so its result is never cut in the middle.
   */
  maxOutputChars?: number | false;
  /**
   * Where each session's shell is after a `cd` (the built-in tools bind `ShellDirectories`);
   * called at check time. A Bash command's relative paths resolve there; default the session cwd.
   */
  shellDirectories?: () => ShellDirectories | undefined;
  /**
   * Where the tools work when they run in a sandbox, called at check time: paths under its
   * root are judged as the host paths they stand for (`root` ↔ the session cwd).
   */
  sandboxPaths?: () => SandboxPaths | undefined;
}

/**
 * Decides each tool call before it runs (deny, run, or ask through the approval chain),
 * remembers "allow for session" answers as exact rules per session, and middle-truncates
 * long tool output. It never throws: any failure becomes a denial with a reason.
 */
export class PermissionEnforcer {
  // Per session, dropped with the session object: approvals never leak between sessions.
  private readonly sessionRules = new WeakMap<ISession, SessionRule[]>();

  constructor(private readonly options: PermissionEnforcerOptions) {}

  /** Late-bound approval handler (resolved from the container at boot). */
  setApprovalHandler(handler: ApprovalChainOptions['approvalHandler']): void {
    this.options.approvalHandler = handler;
  }

  /** Late-bound lookup of the sandbox mapping (the plugin passes a container lookup at boot). */
  setSandboxPaths(lookup: () => SandboxPaths | undefined): void {
    this.options.sandboxPaths = lookup;
  }

  /** Late-bound lookup of the shell directories (the plugin passes a container lookup at boot). */
  setShellDirectories(lookup: () => ShellDirectories | undefined): void {
    this.options.shellDirectories = lookup;
  }

  async checkPermission(context: PreToolUseContext): Promise<PreToolUseDecision | undefined> {
    const { session, toolName, input, toolCallId, signal } = context;
    try {
      const judged = this.hostView(toolName, input, session.cwd);
      const query = { toolName, input: judged, mode: session.getPermissionMode(), cwd: session.cwd, sessionId: session.sessionId };
      const { policy } = this.options;
      const remembered = this.sessionRules.get(session) ?? [];
      const verdict =
        policy instanceof RulesPermissionPolicy
          ? policy.explain(query, remembered, this.commandCwd(toolName, session.sessionId, session.cwd))
          : await policy.evaluate(query);
      if (verdict.decision === 'auto') return undefined;
      if (verdict.decision === 'deny') return { decision: 'deny', reason: verdict.reason ?? `${toolName} is not allowed`, source: 'permission' };
      // Approved before the guard (a PreToolUse hook): deny rules were applied above; ask no one.
      if (context.approvedBy !== undefined) return undefined;

      const suggestions = 'suggestions' in verdict ? (verdict.suggestions as SessionRule[]) : [];
      const suggestedRule = suggestions.map((rule) => rule.text).join(', ') || verdict.rule;
      const outcome = await requestApproval(this.options, {
        toolName,
        input,
        sessionId: session.sessionId,
        toolCallId,
        signal,
        ...(suggestedRule ? { suggestedRule } : {}),
      });
      if (outcome.answer === 'allow-session') {
        this.remember(session, suggestions);
        return undefined;
      }
      if (outcome.answer === true) return undefined;
      const why = 'reason' in outcome ? outcome.reason : 'the user declined';
      return { decision: 'deny', reason: `${toolName} was not approved: ${why}`, source: 'permission' };
    } catch (error) {
      return { decision: 'deny', reason: `${toolName} could not be checked: ${describeError(error)}`, source: 'permission' };
    }
  }

  /** Where a Bash call runs when an earlier `cd` moved the session's shell (as a host path under a sandbox). */
  private commandCwd(toolName: string, sessionId: string, hostCwd: string): { commandCwd?: string } {
    if (toolName !== 'Bash') return {};
    const commandCwd = this.options.shellDirectories?.()?.cwdFor(sessionId);
    if (commandCwd === undefined) return {};
    const root = this.options.sandboxPaths?.()?.root;
    return { commandCwd: root === undefined ? commandCwd : (hostPathFor(commandCwd, root, hostCwd) ?? commandCwd) };
  }

  /** The input as the rules see it: under a sandbox, its paths (and a command's) moved to the host. */
  private hostView(toolName: string, input: unknown, hostCwd: string): unknown {
    const root = this.options.sandboxPaths?.()?.root;
    if (root === undefined) return input;
    if (toolName === 'Bash' && typeof input === 'object' && input !== null && typeof (input as { command?: unknown }).command === 'string') {
      const command = (input as { command: string }).command;
      const moved = hostCommand(command, root, hostCwd);
      return moved === command ? input : { ...(input as object), command: moved };
    }
    return hostInput(input, root, hostCwd);
  }

  private remember(session: ISession, rules: readonly SessionRule[]): void {
    const list = this.sessionRules.get(session) ?? [];
    for (const rule of rules) if (!list.some((known) => known.text === rule.text)) list.push(rule);
    this.sessionRules.set(session, list);
  }

  /** Rules approved with "allow for session" in this session, as Claude Code writes them. */
  getSessionAllowedRules(session: ISession): string[] {
    return (this.sessionRules.get(session) ?? []).map((rule) => rule.text);
  }

  clearSessionAllowedRules(session: ISession): void {
    this.sessionRules.delete(session);
  }

  /** Waterfall tap body for `postToolUse` / `postToolUseFailure`. */
  truncate(context: PostToolUseContext): Partial<PostToolUseContext> | undefined {
    const configured = this.options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
    if (configured === false) return undefined;
    const max = context.tool?.maxResultChars ?? configured;
    const result = truncateToolResult(context.result, max);
    return result === context.result ? undefined : { result };
  }
}
