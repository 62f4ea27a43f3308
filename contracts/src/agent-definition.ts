import type { PermissionMode } from './permissions.js';
import { createToken } from './token.js';

/** A subagent definition (built-in, or a `.md` file with frontmatter; body = system prompt). */
export interface AgentDefinition {
  /** Lowercase letters, digits, hyphens, dots and underscores (see docs/leniency.md). */
  name: string;
  description: string;
  systemPrompt: string;
  /** Allowed tools; undefined = inherit all. */
  tools?: string[];
  disallowedTools?: string[];
  /** `inherit`, a shortcut (`sonnet`, `opus`, `haiku`) or a full model id. */
  model?: string;
  maxTurns?: number;
  permissionMode?: PermissionMode;
  skills?: string[];
  isolation?: 'worktree';
  color?: string;
  /** Absolute path of the defining file; undefined for built-ins. */
  file?: string;
  /** Where it was found: `builtin`, `project`, `user`, `plugin:<name>`… */
  source: string;
}

/**
 * Contribution point for agent definitions from outside the agents folders (bundle plugins,
 * presets). The subagents plugin merges them after the built-ins and the files it discovers.
 */
export const AgentDefinitionContribution = createToken<AgentDefinition>('AgentDefinitionContribution');

/**
 * Agent definitions that are found rather than composed (bundle plugins). Asked whenever the
 * subagents plugin lists agents; a source that can change says so through `onChange`.
 */
export interface AgentDefinitionSource {
  readonly name: string;
  /** The definitions this source has now. */
  agents(): readonly AgentDefinition[];
  /** Calls `listener` whenever the answer of `agents()` may have changed; returns an unsubscribe. */
  onChange?(listener: () => void): () => void;
}

/** Contribution point: every agent definition source bound here feeds the subagents plugin. */
export const AgentDefinitionSourceContribution = createToken<AgentDefinitionSource>('AgentDefinitionSource');
