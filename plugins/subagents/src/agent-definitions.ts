import type { AgentDefinition, Tool } from '@tessera/contracts';
import { BackgroundTaskError } from '@tessera/plugin-background';

const REPORT_BACK =
  'When you are done, reply with a concise report for the agent that delegated this task: what you found or changed, with file paths, and anything left open.';

/** The three built-in agents (spec: Agent Definitions). */
export const BUILTIN_AGENT_DEFINITIONS: readonly AgentDefinition[] = Object.freeze([
  {
    name: 'general-purpose',
    description: 'General-purpose agent for multi-step tasks: researching, searching code and making changes. Has every tool.',
    systemPrompt: `You are a general-purpose agent working on a task delegated by another agent. Use the tools you have to complete it fully.\n\n${REPORT_BACK}`,
    source: 'builtin',
  },
  {
    name: 'Explore',
    description: 'Read-only agent for exploring a codebase quickly: finding files, searching code, answering questions about it.',
    systemPrompt: `You are a read-only exploration agent. Search and read the codebase to answer the question; never modify files.\n\n${REPORT_BACK}`,
    disallowedTools: ['Write', 'Edit'],
    source: 'builtin',
  },
  {
    name: 'Plan',
    description: 'Read-only agent for research and planning before an implementation.',
    systemPrompt: `You are a read-only planning agent. Research the codebase and produce a concrete, step-by-step implementation plan; never modify files.\n\n${REPORT_BACK}`,
    disallowedTools: ['Write', 'Edit'],
    source: 'builtin',
  },
] satisfies AgentDefinition[]);

/** Tools that start agents; a subagent never gets them (subagents cannot spawn subagents). */
export const AGENT_SPAWNING_TOOLS: readonly string[] = ['Agent', 'Task'];

/** `Bash(git:*)` → `Bash`; `Task` and `Agent` are the same tool. */
function toolKey(entry: string): string {
  const name = entry.replace(/\(.*\)\s*$/s, '').trim();
  return name === 'Task' ? 'Agent' : name;
}

function matches(pattern: string, toolName: string): boolean {
  const key = toolKey(pattern);
  const name = toolKey(toolName);
  return key.endsWith('*') ? name.startsWith(key.slice(0, -1)) : key === name;
}

/**
 * The tools a subagent gets: the denylist first, then the allowlist (when the definition has
 * one), then the request's own allowlist (a forked skill's `allowed-tools`), then every
 * agent-spawning tool removed.
 */
export function filterSubagentTools(
  tools: readonly Tool[],
  definition: Pick<AgentDefinition, 'tools' | 'disallowedTools'>,
  agentTools: readonly string[] = AGENT_SPAWNING_TOOLS,
  allowedTools?: readonly string[],
): Tool[] {
  return tools.filter((tool) => {
    if ((definition.disallowedTools ?? []).some((pattern) => matches(pattern, tool.name))) return false;
    if (definition.tools && !definition.tools.some((pattern) => matches(pattern, tool.name))) return false;
    if (allowedTools && !allowedTools.some((pattern) => matches(pattern, tool.name))) return false;
    return !agentTools.some((pattern) => matches(pattern, tool.name));
  });
}

/**
 * Definitions by name; later additions replace earlier ones (custom beats built-in). Definitions
 * from `AgentDefinitionSource`s (bundle plugins) sit below everything added: they are replaced
 * whole whenever a source changes, and a name added directly wins over them.
 */
export class AgentDefinitionRegistry {
  private readonly byName = new Map<string, AgentDefinition>();
  private sourced = new Map<string, AgentDefinition>();

  constructor(definitions: readonly AgentDefinition[] = BUILTIN_AGENT_DEFINITIONS) {
    for (const definition of definitions) this.byName.set(definition.name, definition);
  }

  add(definition: AgentDefinition): void {
    this.byName.set(definition.name, definition);
  }

  /** Replaces every definition that came from agent definition sources (first one wins a name). */
  setSourced(definitions: readonly AgentDefinition[]): void {
    const next = new Map<string, AgentDefinition>();
    for (const definition of definitions) if (!next.has(definition.name)) next.set(definition.name, definition);
    this.sourced = next;
  }

  get(name: string): AgentDefinition | undefined {
    return this.byName.get(name) ?? this.sourced.get(name);
  }

  /** The definition, or a validation error listing the known names. */
  require(name: string): AgentDefinition {
    const definition = this.get(name);
    if (definition) return definition;
    throw new BackgroundTaskError('validation', `Unknown agent type "${name}". Known agents: ${this.list().map((item) => item.name).join(', ')}. Add a .md definition under .tessera/agents or .claude/agents to define it.`, {
      code: 'subagent_unknown_type',
      details: { field: 'type', type: name },
    });
  }

  list(): AgentDefinition[] {
    return [...this.byName.values(), ...[...this.sourced.values()].filter((definition) => !this.byName.has(definition.name))];
  }
}
