import { compareText, describeError, type ICommand, type ICommandHostContext, type ICommandInfo, type ICommandModule, type ICommandResult, type ISystemCommand } from '@tessera/contracts';

/** A command as `listCommands()` reports it (the contracts' `ICommandInfo`). */
export type ICommandListing = ICommandInfo;

/**
 * The registry and executor of slash commands (spec: SystemCommandExecutor), filled from
 * composed `ICommandModule`s — the kernel's `CommandContribution`s. It knows no command by
 * name: with no module composed it is empty.
 */
export class SystemCommandExecutor {
  private readonly modules: ICommandModule[] = [];
  /** The table as last built, and the command lists it was built from (a module may change its list). */
  private built: { commands: Map<string, { command: ISystemCommand; module: string }>; from: Array<readonly ISystemCommand[] | undefined> } | undefined;

  constructor(modules: readonly ICommandModule[] = []) {
    for (const module of modules) this.addModule(module);
  }

  /** Adds a module; a name already registered keeps its first owner (the kernel refuses duplicates at composition). */
  addModule(module: ICommandModule): void {
    this.modules.push(module);
    this.built = undefined;
  }

  /**
   * The commands by name. A module's `systemCommands` is read every time (it may be a getter:
   * an MCP server's prompts arrive after it connects); the table is rebuilt when a list changed.
   */
  private commands(): Map<string, { command: ISystemCommand; module: string }> {
    const lists = this.modules.map((module) => module.systemCommands);
    if (this.built && lists.every((list, index) => list === this.built!.from[index])) return this.built.commands;
    const commands = new Map<string, { command: ISystemCommand; module: string }>();
    for (const [index, module] of this.modules.entries()) {
      for (const command of lists[index] ?? []) {
        const name = canonicalName(command.name);
        if (!commands.has(name)) commands.set(name, { command, module: module.name });
      }
    }
    this.built = { commands, from: lists };
    return commands;
  }

  /** True when a composed module has the command (`/name` or `name`). */
  has(name: string): boolean {
    return this.commands().has(canonicalName(name));
  }

  /** The command registered under `name` (`/name` or `name`), if any. */
  get(name: string): ISystemCommand | undefined {
    return this.commands().get(canonicalName(name))?.command;
  }

  /** Every registered command, sorted by name. */
  listCommands(): ICommandListing[] {
    return [...this.commands().values()]
      .map(({ command, module }) => ({
        name: command.name,
        description: command.description,
        ...(command.argumentHint === undefined ? {} : { argumentHint: command.argumentHint }),
        userInvocable: command.userInvocable !== false,
        // A host command changes every session in the process: never the model's to run.
        modelInvocable: command.modelInvocable === true && command.scope !== 'host',
        ...(command.scope === 'host' ? { scope: 'host' as const } : {}),
        source: module,
      }))
      .sort((a, b) => compareText(a.name, b.name));
  }

  /** Palette entries from the modules' command sources (skills, plugin commands…). */
  paletteEntries(): ICommand[] {
    return this.modules.flatMap((module) => (module.commandSources ?? []).flatMap((source) => [...source.getCommands()]));
  }

  /**
   * Runs `name` with `args`; `null` when no such command is registered. A command that throws
   * gives a failed result naming it — a command never breaks its caller.
   */
  async execute(name: string, args: string, context: ICommandHostContext): Promise<ICommandResult | null> {
    const command = this.get(name);
    if (!command) return null;
    if (command.scope === 'host' && context.invocation === 'model-tool') {
      return { success: false, message: `/${command.name} changes the whole host (every session in it), so only the user can run it.` };
    }
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
