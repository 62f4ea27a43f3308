import type { ICommand, ICommandModule, ICommandResult, ISystemCommand } from '@tessera/contracts';
import { describe } from './mcp-errors.js';
import type { McpClientPool } from './mcp-client-pool.js';
import type { McpPromptInfo } from './mcp-types.js';

/** The command that runs any MCP prompt: `/mcp-prompt mcp__<server>__<prompt> [arguments]`. */
export const PROMPT_DISPATCHER = 'mcp-prompt';

/**
 * MCP prompts as commands. The palette lists each prompt as `mcp__<server>__<prompt>` (a command
 * source, so it follows servers as they come and go); `systemCommands` holds the prompts known
 * when a host builds its command table, and the fixed `/mcp-prompt <name> [args]` runs any prompt
 * whenever it appeared. Arguments are `key=value` pairs, or words taken in the order the prompt
 * declares its arguments (the last one takes the rest of the line).
 */
export function promptCommandModule(pool: McpClientPool): ICommandModule {
  const dispatcher: ISystemCommand = {
    name: PROMPT_DISPATCHER,
    description: 'Run an MCP prompt: /mcp-prompt mcp__<server>__<prompt> [arguments]',
    argumentHint: '<mcp__server__prompt> [arguments]',
    safety: 'read-only',
    execute: (_context, args) => {
      const [name = '', ...rest] = args.trim().split(/\s+/);
      return runPrompt(pool, name.replace(/^\/+/, ''), rest.join(' '));
    },
  };
  return {
    name: 'mcp-prompts',
    commandSources: [
      {
        name: 'mcp prompts',
        getCommands: (): ICommand[] => pool.prompts().map(({ command, prompt, server }) => ({ name: command, description: promptDescription(prompt, server), source: `mcp:${server}`, ...hint(prompt) })),
      },
    ],
    get systemCommands(): readonly ISystemCommand[] {
      const prompts = pool.prompts();
      // The dispatcher is listed only when some server offers prompts (a run without MCP shows no MCP command).
      if (prompts.length === 0) return [];
      return [
        dispatcher,
        ...prompts.map(({ command, prompt, server }) => ({
          name: command,
          description: promptDescription(prompt, server),
          ...hint(prompt),
          safety: 'read-only' as const,
          execute: (_context: unknown, args: string) => runPrompt(pool, command, args),
        })),
      ];
    },
  };
}

function promptDescription(prompt: McpPromptInfo, server: string): string {
  return `${prompt.description ?? prompt.title ?? prompt.name} (MCP prompt from ${server})`;
}

function hint(prompt: McpPromptInfo): { argumentHint?: string } {
  const names = (prompt.arguments ?? []).map((argument) => (argument.required ? `<${argument.name}>` : `[${argument.name}]`));
  return names.length === 0 ? {} : { argumentHint: names.join(' ') };
}

/** Parses `key=value` pairs or positional words against the prompt's declared arguments. */
export function promptArguments(prompt: McpPromptInfo, text: string): { values: Record<string, string> } | { error: string } {
  const declared = prompt.arguments ?? [];
  const values: Record<string, string> = {};
  const words = text.trim() === '' ? [] : text.trim().split(/\s+/);
  const named = words.length > 0 && words.every((word) => /^[A-Za-z_][\w-]*=/.test(word));
  if (named) {
    for (const word of words) {
      const at = word.indexOf('=');
      values[word.slice(0, at)] = word.slice(at + 1);
    }
  } else {
    declared.forEach((argument, index) => {
      if (index >= words.length) return;
      values[argument.name] = index === declared.length - 1 ? words.slice(index).join(' ') : words[index]!;
    });
    if (declared.length === 0 && words.length > 0) return { error: `This prompt takes no arguments (got "${text.trim()}").` };
  }
  const missing = declared.filter((argument) => argument.required && (values[argument.name] === undefined || values[argument.name] === ''));
  if (missing.length > 0) return { error: `Missing required argument${missing.length > 1 ? 's' : ''} ${missing.map((argument) => argument.name).join(', ')}. Usage: ${hint(prompt).argumentHint ?? ''}` };
  return { values };
}

async function runPrompt(pool: McpClientPool, command: string, args: string): Promise<ICommandResult> {
  const entry = pool.prompts().find((candidate) => candidate.command === command);
  if (!entry) return { success: false, message: `No connected MCP server offers a prompt named ${command}. /mcp lists servers and their state.` };
  const parsed = promptArguments(entry.prompt, args);
  if ('error' in parsed) return { success: false, message: `/${command}: ${parsed.error}` };
  try {
    const result = (await entry.connection.getPrompt(entry.prompt.name, parsed.values)) as { messages?: unknown; description?: unknown };
    const messages = (Array.isArray(result.messages) ? result.messages : []).map((message) => {
      const role = (message as { role?: unknown }).role === 'assistant' ? 'assistant' : 'user';
      const content = (message as { content?: { type?: unknown; text?: unknown; resource?: { uri?: unknown; text?: unknown } } }).content;
      const text = content?.type === 'text' && typeof content.text === 'string'
        ? content.text
        : content?.type === 'resource' && typeof content.resource?.text === 'string'
          ? `[resource ${String(content.resource.uri)}]\n${content.resource.text}`
          : `[${String(content?.type ?? 'unknown')} content]`;
      return { role, text };
    });
    const prompt = messages.map((message) => message.text).join('\n\n');
    return {
      success: true,
      message: prompt === '' ? `/${command} returned no messages.` : `Prompt /${command} from ${entry.server}:\n${prompt}`,
      data: { server: entry.server, prompt: entry.prompt.name, text: prompt, messages },
      // The prompt's text goes to the model, as Claude Code runs an MCP prompt.
      ...(prompt === '' ? {} : { effects: [{ type: 'prompt-submit-requested' as const, text: prompt }] }),
    };
  } catch (error) {
    return { success: false, message: `/${command} failed on MCP server "${entry.server}": ${describe(error)}` };
  }
}
