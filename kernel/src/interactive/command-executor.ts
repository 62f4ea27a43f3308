import { compareText, describeError, type ICommand, type ICommandHostContext, type ICommandInfo, type ICommandModule, type ICommandResult, type ISystemCommand } from '@tessera/contracts';

/** A command as `listCommands()` reports it (the contracts' `ICommandInfo`). */
export type ICommandListing = ICommandInfo;

/**
 * The registry and executor of slash commands (spec: SystemCommandExecutor), filled from
 * composed `ICommandModule`s — the kernel's `CommandContribution`s. It knows no command by
 * name: with no module composed it is empty.
 */
export class SystemCommandExecutor {
  private readonly commands = new Map<string, { command: ISystemCommand; module: string }>();
  private readonly sources: ICommandModule['commandSources'][] = [];

  constructor(modules: readonly ICommandModule[] = []) {
    for (const module of modules) this.addModule(module);
  }

  /** Adds a module's commands; a name already registered keeps its first owner (the kernel refuses duplicates at composition). */
  addModule(module: ICommandModule): void {
    for (const command of module.systemCommands ?? []) {
      const name = canonicalName(command.name);
      if (!this.commands.has(name)) this.commands.set(name, { command, module: module.name });
    }
    if (module.commandSources) this.sources.push(module.commandSources);
  }

  has(name: string): boolean {
    return this.commands.has(canonicalName(name));
  }

  get(name: string): ISystemCommand | undefined {
    return this.commands.get(canonicalName(name))?.command;
  }

  listCommands(): ICommandListing[] {
    return [...this.commands.values()]
      .map(({ command, module }) => ({
        name: command.name,
        description: command.description,
        ...(command.argumentHint === undefined ? {} : { argumentHint: command.argumentHint }),
        userInvocable: command.userInvocable !== false,
        modelInvocable: command.modelInvocable === true,
        source: module,
      }))
      .sort((a, b) => compareText(a.name, b.name));
  }

  /** Palette entries from the modules' command sources (skills, plugin commands…). */
  paletteEntries(): ICommand[] {
    return this.sources.flatMap((sources) => (sources ?? []).flatMap((source) => [...source.getCommands()]));
  }

  /**
   * Runs `name` with `args`; `null` when no such command is registered. A command that throws
   * gives a failed result naming it — a command never breaks its caller.
   */
  async execute(name: string, args: string, context: ICommandHostContext): Promise<ICommandResult | null> {
    const command = this.get(name);
    if (!command) return null;
    try {
      return await command.execute(context, args);
    } catch (error) {
      return { success: false, message: `/${command.name} failed: ${describeError(error)}` };
    }
  }
}

/** Slash-free, trimmed: `/compact` and `compact` are one command. */
export function canonicalName(name: string): string {
  return name.trim().replace(/^\/+/, '');
}
