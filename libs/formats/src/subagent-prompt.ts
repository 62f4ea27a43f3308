import { basename } from 'node:path';
import type { LoadedContext } from './load-context.js';

/** Appended to a subagent's prompt: it answers another agent, not a person. */
export const SUBAGENT_PROMPT_SUFFIX = `You are running as a subagent for another agent, which will read your final message and nothing else.
When the work is done, reply with a concise report for that caller: what you found or changed, with file paths and the evidence that matters, and anything left unresolved.`;

/** Appended to a forked worker's prompt (a skill run in its own session). */
export const FORK_WORKER_PROMPT_SUFFIX = `You are running as a forked worker; only your final message is passed back.
Keep that final message within 500 words: the result first, then the details needed to act on it.`;

export interface AssembleSubagentPromptOptions {
  /** The agent definition's system prompt. */
  agentBody: string;
  /** The parent session's CLAUDE.md text, when it has one. */
  claudeMd?: string;
  /** The parent session's AGENTS.md text, when it has one. */
  agentsMd?: string;
  /** A fork worker gets the 500-word suffix instead of the subagent one. */
  isForkWorker?: boolean;
}

/**
 * A subagent's full system prompt: its own body, then the parent's CLAUDE.md and AGENTS.md,
 * then the framework suffix. Blank parts are left out; parts are separated by a blank line.
 */
export function assembleSubagentPrompt(options: AssembleSubagentPromptOptions): string {
  const parts = [
    options.agentBody.trim(),
    options.claudeMd?.trim() ? `## CLAUDE.md\n\n${options.claudeMd.trim()}` : '',
    options.agentsMd?.trim() ? `## AGENTS.md\n\n${options.agentsMd.trim()}` : '',
    options.isForkWorker ? FORK_WORKER_PROMPT_SUFFIX : SUBAGENT_PROMPT_SUFFIX,
  ];
  return parts.filter((part) => part !== '').join('\n\n');
}

/**
 * The parent context's instruction files as `assembleSubagentPrompt` takes them: AGENTS.md
 * files (and what they import) as `agentsMd`, every other file (CLAUDE.md, .claude/CLAUDE.md,
 * CLAUDE.local.md, the user's files, their imports) as `claudeMd`, each in load order.
 */
export function contextForSubagent(context: LoadedContext): { claudeMd?: string; agentsMd?: string } {
  const agentsFiles = new Set<string>();
  const claude: string[] = [];
  const agents: string[] = [];
  for (const file of context.files) {
    // An import follows its importer, which loadContext lists first.
    const isAgents = file.importedFrom === undefined ? basename(file.path) === 'AGENTS.md' : agentsFiles.has(file.importedFrom);
    if (isAgents) agentsFiles.add(file.path);
    if (file.content.trim() === '') continue;
    (isAgents ? agents : claude).push(file.content.trim());
  }
  return {
    ...(claude.length > 0 ? { claudeMd: claude.join('\n\n') } : {}),
    ...(agents.length > 0 ? { agentsMd: agents.join('\n\n') } : {}),
  };
}
