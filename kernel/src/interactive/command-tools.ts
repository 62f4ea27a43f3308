import type { ICapabilityDescriptor, ICommandResult, Tool, ToolResult } from '@tessera/contracts';
import type { SystemCommandExecutor } from './command-executor.js';

/** Provider-visible names of projected commands: `tessera_command_<id>`. */
export const COMMAND_TOOL_PREFIX = 'tessera_command_';
/** What every provider accepts as a tool name. */
export const PROVIDER_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The tool name a command is projected to (characters a provider refuses become `_`). */
export function commandToolName(command: string): string {
  return `${COMMAND_TOOL_PREFIX}${command.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * Problems with projecting model-invocable commands: a name too long for providers, or two
 * commands that project to one tool name. Reported at composition.
 */
export function commandToolProblems(commands: ReadonlyArray<{ name: string; modelInvocable?: boolean }>): string[] {
  const problems: string[] = [];
  const owners = new Map<string, string>();
  for (const command of commands) {
    if (command.modelInvocable !== true) continue;
    const tool = commandToolName(command.name);
    if (!PROVIDER_TOOL_NAME.test(tool)) problems.push(`Command "${command.name}" is model-invocable but its tool name "${tool}" is not a valid provider tool name (letters, digits, _ and -, at most 64); shorten the command name.`);
    const other = owners.get(tool);
    if (other !== undefined && other !== command.name) problems.push(`Commands "${other}" and "${command.name}" both project to the model tool "${tool}"; rename one of them.`);
    owners.set(tool, command.name);
  }
  return problems;
}

/**
 * The model's route to commands (spec: model-invocable command tools): one tool per
 * model-invocable command, described by its descriptor, running the same handler as the
 * user's `/name`. None when no command is model-invocable. The tools are ordinary tools, so
 * permission rules (`tessera_command_compact`) and hooks apply to them.
 */
export function commandTools(
  executor: SystemCommandExecutor,
  descriptors: readonly ICapabilityDescriptor[],
  run: (name: string, args: string) => Promise<ICommandResult | null>,
): Tool<{ args?: string }>[] {
  const byName = new Map(descriptors.map((descriptor) => [descriptor.name, descriptor]));
  const tools: Tool<{ args?: string }>[] = [];
  for (const command of executor.listCommands()) {
    if (!command.modelInvocable) continue;
    const descriptor = byName.get(command.name);
    const hint = descriptor?.argumentHint ?? command.argumentHint;
    const description = [descriptor?.description ?? command.description, descriptor?.usage].filter(Boolean).join('\n\n');
    tools.push({
      name: commandToolName(command.name),
      description,
      parameters: {
        type: 'object',
        properties: { args: { type: 'string', description: hint ? `Arguments: ${hint}` : 'Arguments, as typed after the command' } },
        additionalProperties: false,
      },
      validate(input) {
        if (input === undefined || input === null) return { success: true, data: {} };
        if (typeof input !== 'object' || Array.isArray(input)) return { success: false, message: 'input must be an object like { "args": "…" }' };
        const args = (input as { args?: unknown }).args;
        if (args !== undefined && typeof args !== 'string') return { success: false, message: '"args" must be a string' };
        return { success: true, data: args === undefined ? {} : { args } };
      },
      async execute(input): Promise<ToolResult> {
        const result = await run(command.name, input.args ?? '');
        if (!result) return { success: false, output: `No command "${command.name}".`, error: `No command "${command.name}".`, errorCode: 'unknown_command' };
        const text = result.message;
        return result.success
          ? { success: true, output: text, ...(result.data ? { data: result.data } : {}) }
          : { success: false, output: text, error: text, errorCode: 'command_failed', ...(result.data ? { data: result.data } : {}) };
      },
    });
  }
  return tools;
}
