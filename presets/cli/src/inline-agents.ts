import type { AgentDefinition } from '@tessera/contracts';
import { CliUsageError } from './args.js';

/** Where an `--agents` definition comes from (`AgentDefinition.source`). */
export const INLINE_AGENT_SOURCE = 'flag';

/** Keys an inline agent may have: Claude Code's 2025 four, plus the 2026 ones Tessera applies. */
const KNOWN_KEYS = new Set(['description', 'prompt', 'tools', 'model', 'disallowedTools', 'maxTurns']);

/**
 * `--agents '<json>'`: Claude Code's inline subagents, `{ "<name>": { "description", "prompt",
 * "tools"?, "model"? } }` (also `disallowedTools`, `maxTurns`), as agent definitions. Several
 * `--agents` flags add up (a later one wins a name). Anything malformed is a `CliUsageError`
 * naming `--agents` and the field; keys Tessera does not apply are reported in `warnings`.
 */
export function parseAgentsFlag(values: readonly string[]): { definitions: AgentDefinition[]; warnings: string[] } {
  const byName = new Map<string, AgentDefinition>();
  const warnings: string[] = [];
  for (const text of values) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new CliUsageError(`Error: --agents is not valid JSON (${error instanceof Error ? error.message : String(error)}); pass an object such as '{"reviewer":{"description":"Reviews code","prompt":"You review code."}}'.`);
    }
    if (!isRecord(parsed)) throw new CliUsageError(`Error: --agents must be a JSON object of agents by name, e.g. '{"reviewer":{"description":"Reviews code","prompt":"You review code."}}'; got ${kind(parsed)}.`);
    for (const [name, raw] of Object.entries(parsed)) {
      const fail = (field: string, problem: string): never => {
        throw new CliUsageError(`Error: --agents: agent ${JSON.stringify(name)}: "${field}" ${problem}`);
      };
      if (name.trim() === '' || name.includes(':') || name.startsWith('-')) {
        throw new CliUsageError(`Error: --agents: agent name ${JSON.stringify(name)} is refused: a name may not be empty, contain ":" or start with "-".`);
      }
      if (!isRecord(raw)) throw new CliUsageError(`Error: --agents: agent ${JSON.stringify(name)} must be an object with "description" and "prompt"; got ${kind(raw)}.`);
      const description = raw.description;
      if (typeof description !== 'string' || description.trim() === '') fail('description', `must be a non-empty string (when to use this agent); got ${kind(description)}.`);
      const prompt = raw.prompt;
      if (typeof prompt !== 'string' || prompt.trim() === '') fail('prompt', `must be a non-empty string (the agent's system prompt); got ${kind(prompt)}.`);
      const definition: AgentDefinition = { name, description: (description as string).trim(), systemPrompt: (prompt as string).trim(), source: INLINE_AGENT_SOURCE };
      for (const field of ['tools', 'disallowedTools'] as const) {
        const list = raw[field];
        if (list === undefined) continue;
        if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string' && entry.trim() !== '')) fail(field, `must be an array of tool names (e.g. ["Read", "Grep"]); got ${JSON.stringify(list)}.`);
        definition[field] = (list as string[]).map((entry) => entry.trim());
      }
      if (raw.model !== undefined) {
        if (typeof raw.model !== 'string' || raw.model.trim() === '') fail('model', `must be a model alias (sonnet, opus, haiku, inherit) or a model id; got ${JSON.stringify(raw.model)}.`);
        definition.model = (raw.model as string).trim();
      }
      if (raw.maxTurns !== undefined) {
        if (typeof raw.maxTurns !== 'number' || !Number.isInteger(raw.maxTurns) || raw.maxTurns <= 0) fail('maxTurns', `must be a whole number greater than 0; got ${JSON.stringify(raw.maxTurns)}.`);
        definition.maxTurns = raw.maxTurns as number;
      }
      const ignored = Object.keys(raw).filter((key) => !KNOWN_KEYS.has(key));
      if (ignored.length > 0) warnings.push(`warning: --agents: agent ${JSON.stringify(name)}: ${ignored.map((key) => `"${key}"`).join(', ')} ${ignored.length === 1 ? 'is' : 'are'} not applied by Tessera and ignored.`);
      byName.set(name, definition);
    }
  }
  return { definitions: [...byName.values()], warnings };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kind(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
