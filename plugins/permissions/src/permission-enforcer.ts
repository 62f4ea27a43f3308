import {
  ApprovalHandler,
  describeError,
  PermissionPolicy,
  SandboxPaths,
  ShellDirectories,
  type ISession,
  type PostToolUseContext,
  type PreToolUseContext,
  type PreToolUseDecision,
  type PermissionVerdict,
  type SessionServices,
  type ToolPermission,
} from '@tessera/contracts';
import { judgedTool, type SessionRule } from '@tessera/permission-rules';
import { requestApproval, type ApprovalChainOptions } from './approval-chain.js';
import { hostCommand, hostInput, hostPathFor } from '@tessera/permission-rules';
import { RulesPermissionPolicy, type ExplainOptions, type RulesPermissionQuery } from './rules-permission-policy.js';
import { DEFAULT_MAX_OUTPUT_CHARS, truncateToolResult } from './truncate-output.js';

export interface PermissionEnforcerOptions extends ApprovalChainOptions {
  /**
   * The policy every check uses. Default: the session's `PermissionPolicy`
   * (`session.services`), so a `rebind` reaches sessions created afterwards.
   */
  policy?: PermissionPolicy;
  /**
   * Tool output longer than this is middle-truncated; `false` turns it off. Default 30,000.
   * A tool that declares `maxResultChars` (it keeps its results within that itself) is capped
   * at its own figure instead, so its result is never cut in the middle.
   */
  maxOutputChars?: number | false;
  /**
   * Where each session's shell is after a `cd`, called at check time. A Bash command's
   * relative paths resolve there; default: the session's `ShellDirectories` (bound by the
   * built-in tools), else the session cwd.
   */
  shellDirectories?: () => ShellDirectories | undefined;
  /**
   * Where the tools work when they run in a sandbox, called at check time: paths under its
   * root are judged as the host paths they stand for (`root` ↔ the session cwd). Default: the
   * session's `SandboxPaths`.
   */
  sandboxPaths?: () => SandboxPaths | undefined;
  /**
   * The services a check looks `PermissionPolicy`, `ApprovalHandler`, `ShellDirectories` and
   * `SandboxPaths` up in (those not given above). Default: `session.services`.
   */
  services?: (session: ISession) => SessionServices;
}

const sessionServices = (session: ISession): SessionServices => session.services;

/** An `approve` verdict and how it was reached, for {@link asksAnyway}. */
interface ApprovedCheck {
  policy: PermissionPolicy;
  verdict: PermissionVerdict;
  query: RulesPermissionQuery;
  remembered: readonly SessionRule[];
  where: ExplainOptions;
}

/**
 * Whether an `approve` verdict must still ask after an approval made before the guard. With
 * rules, the call is judged again as though approved: in bypassPermissions mode (only ask
 * rules, possible deny matches and critical `rm`s ask there) and, for a non-Bash call, in its
 * own mode with the call's exact rule allowed (a protected path still asks there, and so does a
 * call no exact rule can name). With any other policy: when the verdict names the rule that asked.
 */
function asksAnyway({ policy, verdict, query, remembered, where }: ApprovedCheck): boolean {
  if (!(policy instanceof RulesPermissionPolicy)) return verdict.rule !== undefined;
  if (policy.explain({ ...query, mode: 'bypassPermissions' }, remembered, where).decision !== 'auto') return true;
  const suggestions = 'suggestions' in verdict ? (verdict.suggestions as SessionRule[]) : [];
  // A Bash call can need more than its own rules (Edit rules for its redirections): a Bash
  // approval is judged by the bypass check alone; no protected-path check applies to it.
  if (judgedTool(query.toolName, query.permission).family === 'Bash') return false;
  return policy.explain(query, [...remembered, ...suggestions], where).decision !== 'auto';
}

/**
 * Decides each tool call before it runs (deny, run, or ask through the approval chain),
 * remembers "allow for session" answers as exact rules per session, and middle-truncates
 * long tool output. It never throws: any failure becomes a denial with a reason.
 *
 * What it does not hold itself — the policy, the approver, the shell directories, the sandbox
 * mapping — it looks up per call in the session's services (a `Map` read once the session
 * has resolved them), so it works the same in every kernel and follows a `rebind`.
 */
export class PermissionEnforcer {
  // Per session, dropped with the session object: approvals never leak between sessions.
  private readonly sessionRules = new WeakMap<ISession, SessionRule[]>();
  private readonly services: (session: ISession) => SessionServices;

  constructor(private readonly options: PermissionEnforcerOptions = {}) {
    this.services = options.services ?? sessionServices;
  }

  async checkPermission(context: PreToolUseContext): Promise<PreToolUseDecision | undefined> {
    const { session, toolName, input, toolCallId, signal } = context;
    try {
      const services = this.services(session);
      const policy = this.options.policy ?? services.get(PermissionPolicy);
      const root = (this.options.sandboxPaths ? this.options.sandboxPaths() : services.getOptional(SandboxPaths))?.root;
      // How a tool the rules do not know by name is judged (MCP and third-party tools).
      const permission = context.tool?.permission;
      const judged = this.hostView(toolName, input, session.cwd, root, permission);
      const query: RulesPermissionQuery = {
        toolName,
        input: judged,
        mode: session.getPermissionMode(),
        cwd: session.cwd,
        sessionId: session.sessionId,
        ...(permission === undefined ? {} : { permission }),
      };
      const remembered = this.sessionRules.get(session) ?? [];
      const where = this.commandCwd(toolName, session, services, root);
      const verdict = policy instanceof RulesPermissionPolicy ? policy.explain(query, remembered, where) : await policy.evaluate(query);
      if (verdict.decision === 'auto') return undefined;
      if (verdict.decision === 'deny') return { decision: 'deny', reason: verdict.reason ?? `${toolName} is not allowed`, source: 'permission' };
      // Approved before the guard (a PreToolUse hook): deny rules were applied above. The
      // approval spares only the prompt the mode would show: an ask rule or a protected path
      // still asks (Claude Code: a hook's "allow" never overrides deny or ask rules).
      // A person who answered the hook's prompt for this very call is not asked again.
      if (context.approvedBy !== undefined && (context.approvedByPerson === true || !asksAnyway({ policy, verdict, query, remembered, where }))) return undefined;

      const suggestions = 'suggestions' in verdict ? (verdict.suggestions as SessionRule[]) : [];
      const suggestedRule = suggestions.map((rule) => rule.text).join(', ') || verdict.rule;
      const approvalHandler = this.options.approvalHandler ?? services.getOptional(ApprovalHandler);
      const outcome = await requestApproval(
        { ...this.options, ...(approvalHandler ? { approvalHandler } : {}) },
        {
          toolName,
          input,
          sessionId: session.sessionId,
          toolCallId,
          signal,
          ...(suggestedRule ? { suggestedRule } : {}),
        },
      );
      const answer = outcome.answer;
      if (answer === 'allow-session' || (typeof answer === 'object' && answer.behavior === 'allow' && answer.remember === true)) this.remember(session, suggestions);
      if (answer === 'allow-session' || answer === true) return undefined;
      if (typeof answer === 'object' && answer.behavior === 'allow') {
        // The approver may run the call with a changed input (the Agent SDK's `updatedInput`).
        return answer.updatedInput === undefined ? undefined : { decision: 'continue', input: answer.updatedInput, approvedBy: outcome.via };
      }
      // An approver's own message is what the model is told, word for word (Claude Code's canUseTool deny).
      if (typeof answer === 'object' && answer.message) return { decision: 'deny', reason: answer.message, source: 'permission', verbatim: true };
      const why = 'reason' in outcome ? outcome.reason : 'the user declined';
      return { decision: 'deny', reason: `${toolName} was not approved: ${why}`, source: 'permission' };
    } catch (error) {
      return { decision: 'deny', reason: `${toolName} could not be checked: ${describeError(error)}`, source: 'permission' };
    }
  }

  /** Where a Bash call runs when an earlier `cd` moved the session's shell (as a host path under a sandbox). */
  private commandCwd(toolName: string, session: ISession, services: SessionServices, root: string | undefined): { commandCwd?: string } {
    if (toolName !== 'Bash') return {};
    const shells = this.options.shellDirectories ? this.options.shellDirectories() : services.getOptional(ShellDirectories);
    const commandCwd = shells?.cwdFor(session.sessionId);
    if (commandCwd === undefined) return {};
    return { commandCwd: root === undefined ? commandCwd : (hostPathFor(commandCwd, root, session.cwd) ?? commandCwd) };
  }

  /**
   * The input as the rules see it: under a sandbox, its paths (and a command's) moved to the
   * host — for a tool with a declared family, in the field it declares too.
   */
  private hostView(toolName: string, input: unknown, hostCwd: string, root: string | undefined, permission: ToolPermission | undefined): unknown {
    if (root === undefined || typeof input !== 'object' || input === null) return input;
    const tool = judgedTool(toolName, permission);
    const fields = input as Record<string, unknown>;
    const commandField = tool.family === 'Bash' ? (tool.subjectField ?? 'command') : undefined;
    const command = commandField === undefined ? undefined : fields[commandField];
    if (commandField !== undefined && typeof command === 'string') {
      const moved = hostCommand(command, root, hostCwd);
      return moved === command ? input : { ...fields, [commandField]: moved };
    }
    const moved = hostInput(input, root, hostCwd);
    const field = tool.family === 'Read' || tool.family === 'Edit' ? tool.subjectField : undefined;
    const path = field === undefined ? undefined : (moved as Record<string, unknown>)[field];
    if (field === undefined || typeof path !== 'string') return moved;
    const host = hostPathFor(path, root, hostCwd);
    return host === undefined ? moved : { ...(moved as Record<string, unknown>), [field]: host };
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
