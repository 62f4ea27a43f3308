import { createToken } from './token.js';

export interface SubagentLaunchRequest {
  /** The task for the subagent. */
  prompt: string;
  /** Agent definition name (`general-purpose`, `Explore`, a custom agent…); default general-purpose. */
  agentType?: string;
  model?: string;
  parentSessionId: string;
  cwd: string;
  signal: AbortSignal;
  /**
   * Only these tools (names, `*` suffix patterns; a rule's `(…)` part is ignored), applied after
   * the agent definition's own lists — a forked skill's `allowed-tools`.
   */
  allowedTools?: readonly string[];
  /** Run in a git worktree of `cwd` (changes stay on its branch). */
  isolation?: 'worktree';
  /**
   * Start it and return at once: the result's `text` says it started, and its progress and
   * answer arrive as background task events (`BackgroundTasks`).
   */
  background?: boolean;
}

export interface SubagentLaunchResult {
  /** The subagent's final answer. */
  text: string;
  agentId: string;
}

/**
 * Runs one subagent to completion and returns its answer. The subagents plugin binds it;
 * other plugins (the hook runner's `agent` hooks, an Agent tool) use it when it is bound.
 */
export interface SubagentLauncher {
  launch(request: SubagentLaunchRequest): Promise<SubagentLaunchResult>;
}

export const SubagentLauncher = createToken<SubagentLauncher>('SubagentLauncher');
