import { CommandContribution, type ICapabilityDescriptor, type ICommandResult, type ISystemCommand, type TCommandEffect, type TCommandModuleSessionRequirement, type TCommandResultDataValue } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';

/**
 * A plugin contributing one command module: how every command in this package is shipped, so
 * a product composes exactly the commands it wants (`[helpCommand(), compactCommand()]`).
 */
export function commandModulePlugin(
  name: string,
  commands: readonly ISystemCommand[],
  descriptors: readonly ICapabilityDescriptor[] = [],
  sessionRequirements: readonly TCommandModuleSessionRequirement[] = [],
): Plugin {
  return definePlugin({
    name: `command-${name}`,
    contributes: [CommandContribution],
    register({ bind }) {
      bind(CommandContribution).toConstantValue({
        name,
        systemCommands: commands,
        ...(descriptors.length > 0 ? { commandDescriptors: descriptors } : {}),
        ...(sessionRequirements.length > 0 ? { sessionRequirements } : {}),
      });
    },
  });
}

export function ok(message: string, extra: { data?: Record<string, TCommandResultDataValue>; effects?: readonly TCommandEffect[] } = {}): ICommandResult {
  return { success: true, message, ...extra };
}

/** A refused invocation: what was wrong, then the usage line. */
export function usage(command: string, hint: string, problem: string): ICommandResult {
  return { success: false, message: `${problem}\nUsage: /${command}${hint ? ` ${hint}` : ''}` };
}

export function failure(message: string): ICommandResult {
  return { success: false, message };
}

/** `args` split at white space, quotes respected (`rename "my session"`). */
export function splitArgs(args: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of args.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

/** The first word, and everything after it (trimmed). */
export function firstWord(args: string): [string, string] {
  const trimmed = args.trim();
  const space = trimmed.search(/\s/);
  return space === -1 ? [trimmed, ''] : [trimmed.slice(0, space), trimmed.slice(space).trim()];
}

/** A host capability a command needs but this host does not offer. */
export function unsupported(command: string, what: string): ICommandResult {
  return failure(`/${command} needs ${what}, which this host does not offer.`);
}
