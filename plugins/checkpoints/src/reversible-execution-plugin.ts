import { EditCheckpoints, SandboxPaths, type PreToolUseContext, type PreToolUseDecision } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, Stage, type Plugin } from '@tessera/kernel';
import { FileEditCheckpoints } from './file-edit-checkpoints.js';
import { agentRunsInWorktrees, reversibilityOf } from './reversible-classification.js';

export const REVERSIBLE_EXECUTION_PLUGIN_NAME = 'reversible-execution';

/**
 * After Claude Code PreToolUse hooks (which may rewrite the input this policy reads) and just
 * before the permission guard, so nobody is asked to approve a call this policy blocks anyway.
 */
export const REVERSIBLE_GUARD_STAGE = Stage.Guard - 1;

export type ExecutionIsolation = 'worktree' | 'sandbox';

export interface ReversibleExecutionOptions {
  /** `local-first`: allow only what can be undone in the workspace, or is isolated from it. */
  mode: 'local-first';
  /**
   * The isolation the host runs the session in: a throwaway Git worktree, or a provider
   * sandbox. Default: `sandbox` for sessions whose file tools are sandboxed (`SandboxPaths` in
   * the session's services: bound kernel-wide, or given to one session, as an
   * `InteractiveSession` with a `sandboxClient` does), none otherwise. The policy trusts this; it does not set isolation up.
   */
  isolation?: ExecutionIsolation;
  /**
   * Tool names (MCP or third-party) you vouch for: they change nothing outside what the
   * session can undo. Everything else this policy does not know is blocked.
   */
  reversibleTools?: readonly string[];
}

const PREFIX = 'Reversible execution (local-first)';

/**
 * Local-first reversible execution (spec: Reversible Execution Mode): a `preToolUse` guard that
 * lets a call run only when it can be undone. Read-only and conversation-only tools always
 * run; file edits need edit checkpoints recording the session (`editCheckpoints()`) or
 * isolation; Bash, background shells and execute-family tools need a worktree or sandbox;
 * Agent calls need worktree jobs or isolation; anything else is blocked. A blocked call is
 * denied before it runs, with a reason that says what would allow it.
 */
export function reversibleExecution(options: ReversibleExecutionOptions): Plugin {
  checkOptions(options);
  const { isolation } = options;
  const vouched = new Set(options.reversibleTools ?? []);
  return definePlugin({
    name: REVERSIBLE_EXECUTION_PLUGIN_NAME,
    optional: [EditCheckpoints, SandboxPaths],
    register({ hooks }) {
      hooks.preToolUse.tap({ name: `${REVERSIBLE_EXECUTION_PLUGIN_NAME}:guard`, stage: REVERSIBLE_GUARD_STAGE }, (context) =>
        judge(context, isolation ?? (context.session.services.getOptional(SandboxPaths) === undefined ? undefined : 'sandbox'), vouched),
      );
    },
  });
}

function judge(context: PreToolUseContext, isolation: ExecutionIsolation | undefined, vouched: ReadonlySet<string>): PreToolUseDecision | undefined {
  const { toolName, session } = context;
  const deny = (reason: string): PreToolUseDecision => ({ decision: 'deny', source: 'reversible-execution', reason: `${PREFIX}: ${reason}` });
  switch (reversibilityOf(toolName, context.tool?.permission)) {
    case 'read-only':
    case 'session-only':
      return undefined;
    case 'file-edit': {
      if (isolation !== undefined) return undefined;
      const checkpoints = session.services.getOptional(EditCheckpoints);
      if (checkpoints === undefined) {
        return deny(`${toolName} changes files and no edit checkpoint would keep them. Add editCheckpoints() to allow ${toolName}, or run with a worktree or sandbox isolation.`);
      }
      // Ours can say whether it is recording; a replacement is trusted to be.
      if (checkpoints instanceof FileEditCheckpoints && !checkpoints.isRecording(session.sessionId)) {
        return deny(
          `${toolName} changes files but no checkpoint turn is open for session ${session.sessionId}. Submit the prompt through the interactive session (it opens one per prompt) or call EditCheckpoints.beginTurn() first.`,
        );
      }
      return undefined;
    }
    case 'process':
      if (isolation !== undefined) return undefined;
      return deny(
        `${toolName} ${startsBackgroundProcess(context.input) ? 'starts a background process' : 'runs commands'} whose effects no checkpoint can undo. Run with a worktree or sandbox isolation to allow ${toolName} in local-first mode.`,
      );
    case 'agent':
      if (isolation !== undefined || agentRunsInWorktrees(context.input)) return undefined;
      return deny(`${toolName} jobs share this workspace. Pass isolation: 'worktree' for the job (every job of a batch), or run with a worktree or sandbox isolation.`);
    case 'unknown':
      if (vouched.has(toolName)) return undefined;
      return deny(
        `${toolName} is not known to be reversible. If it only reads, or changes nothing outside the session, list it in reversibleExecution({ reversibleTools }); otherwise leave local-first mode to use it.`,
      );
  }
}

function startsBackgroundProcess(input: unknown): boolean {
  return typeof input === 'object' && input !== null && (input as { run_in_background?: unknown }).run_in_background === true;
}

function checkOptions(options: ReversibleExecutionOptions): void {
  const invalid = (option: string, problem: string): PluginOptionsError =>
    new PluginOptionsError('reversibleExecution', REVERSIBLE_EXECUTION_PLUGIN_NAME, option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', "must be an object such as { mode: 'local-first' }");
  if (options.mode !== 'local-first') throw invalid('mode', `must be 'local-first' (got ${JSON.stringify(options.mode)})`);
  if (options.isolation !== undefined && options.isolation !== 'worktree' && options.isolation !== 'sandbox') {
    throw invalid('isolation', `must be 'worktree' or 'sandbox' (got ${JSON.stringify(options.isolation)})`);
  }
  const tools = options.reversibleTools;
  if (tools !== undefined && (!Array.isArray(tools) || tools.some((name) => typeof name !== 'string' || name === ''))) {
    throw invalid('reversibleTools', 'must be a list of tool names');
  }
}
