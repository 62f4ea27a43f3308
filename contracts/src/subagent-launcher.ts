import type { ISession } from './hook-payloads.js';
import { createToken } from './token.js';

/** One subagent run. `signal` aborts it; `parentSessionId` and `cwd` are the session that asks. */
export interface SubagentLaunchRequest {
  /** The task for the subagent. */
  prompt: string;
  /** Agent definition name (`general-purpose`, `Explore`, a custom agent…); default general-purpose. */
  agentType?: string;
  model?: string;
  parentSessionId: string;
  /**
   * The session that asks (or anything with its `services`). A subagent runs with that session's
   * scope (`kernel.sessionScope`: a sandboxed session's tools and service values), found by its
   * services, which are its own, where `parentSessionId` may also name a resumed copy or a fork.
   * The launcher a session resolves from its own services (`session.services.get(SubagentLauncher)`,
   * as `subagents()` binds it) sets it; without it, the newest open session with
   * `parentSessionId` is the parent.
   */
  parentSession?: Pick<ISession, 'services'>;
  cwd: string;
  signal: AbortSignal;
  /**
   * Only these tools (names, `*` suffix patterns; a rule's `(…)` part is ignored), applied after
   * the agent definition's own lists — a forked skill's `allowed-tools`.
   */
  allowedTools?: readonly string[];
  /**
   * A forked skill's run: the subagent's system prompt ends with the fork worker suffix (a final
   * message within 500 words) instead of the subagent one.
   */
  forkWorker?: boolean;
  /** Run in a git worktree of `cwd` (changes stay on its branch). */
  isolation?: 'worktree';
  /**
   * Start it and return at once: the result's `text` says it started, and its progress and
   * answer arrive as background task events (`BackgroundTasks`).
   */
  background?: boolean;
}

/** A finished subagent run. `agentId` identifies the run in task events and transcripts. */
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
  /**
   * Runs the subagent and resolves with its answer (at once, when `background` is set). Rejects
   * with an `AbortError` on abort, and when a subagent session asks (subagents cannot nest).
   */
  launch(request: SubagentLaunchRequest): Promise<SubagentLaunchResult>;
}

/** The subagent launcher, bound by `subagents()`. Optional: forked skills and the `/agent` command use it when it is bound. */
export const SubagentLauncher = createToken<SubagentLauncher>('SubagentLauncher');
