import type { Plugin } from '@tessera/kernel';
import { clearCommand, compactCommand, contextCommand, costCommand, exitCommand, renameCommand, resetCommand, resumeCommand } from './session-commands.js';
import { languageCommand, modelCommand, permissionsCommand, providerCommand, statuslineCommand } from './settings-commands.js';
import { memoryCommand } from './memory-command.js';
import { skillsCommand } from './skills-command.js';
import { agentCommand, backgroundCommand, doctorCommand, helpCommand, hooksCommand, initCommand, mcpCommand, pluginCommands, rewindCommand } from './workspace-commands.js';

export { commandModulePlugin, failure, firstWord, ok, splitArgs, unsupported, usage } from './define-command.js';
export * from './session-commands.js';
export * from './settings-commands.js';
export * from './workspace-commands.js';
export * from './memory-command.js';
export * from './skills-command.js';

/**
 * Every command of this package, one plugin each (the legacy `/mode` is left out: compose
 * `legacyModeCommand()` to add it). Pass `except` to leave some out.
 */
export function builtinCommands(options: { except?: readonly string[] } = {}): Plugin[] {
  const all: Array<[string, () => Plugin]> = [
    ['help', helpCommand],
    ['clear', clearCommand],
    ['compact', compactCommand],
    ['context', contextCommand],
    ['cost', costCommand],
    ['permissions', permissionsCommand],
    ['model', modelCommand],
    ['language', languageCommand],
    ['memory', memoryCommand],
    ['rewind', rewindCommand],
    ['resume', resumeCommand],
    ['rename', renameCommand],
    ['exit', exitCommand],
    ['reset', resetCommand],
    ['background', backgroundCommand],
    ['agent', agentCommand],
    ['skills', skillsCommand],
    ['statusline', statuslineCommand],
    ['provider', providerCommand],
    ['hooks', hooksCommand],
    ['mcp', mcpCommand],
    ['plugin', pluginCommands],
    ['init', initCommand],
    ['doctor', doctorCommand],
  ];
  const except = new Set(options.except ?? []);
  return all.filter(([name]) => !except.has(name)).map(([, make]) => make());
}
