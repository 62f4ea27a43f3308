import type { ICommand, ICommandSource, SkillEntry } from '@tessera/contracts';
import type { SystemCommandExecutor } from './command-executor.js';

/**
 * Palette entries of the executable commands (spec: BuiltinCommandSource): every composed
 * command a person may type, from the executor (and so from the modules, never a fixed list).
 */
export class BuiltinCommandSource implements ICommandSource {
  readonly name = 'builtin';

  constructor(private readonly executor: SystemCommandExecutor) {}

  /** The commands a person may type, with their subcommands. */
  getCommands(): ICommand[] {
    return this.executor
      .listCommands()
      .filter((command) => command.userInvocable)
      .map((command) => ({
        name: command.name,
        description: command.description,
        source: command.source,
        ...(command.argumentHint === undefined ? {} : { argumentHint: command.argumentHint }),
        ...subcommandsOf(this.executor, command.name),
      }));
  }
}

function subcommandsOf(executor: SystemCommandExecutor, name: string): { subcommands?: readonly ICommand[] } {
  const subcommands = executor.get(name)?.subcommands;
  return subcommands && subcommands.length > 0 ? { subcommands } : {};
}

/**
 * Skills as virtual commands (spec: SkillCommandSource): `/deploy` runs the `skills` command
 * with `deploy`. Holds the entries it was last given; the host refreshes it.
 */
export class SkillCommandSource implements ICommandSource {
  readonly name = 'skills';
  private entries: readonly SkillEntry[] = [];

  /** Replaces the skills this source lists. */
  update(entries: readonly SkillEntry[]): void {
    this.entries = entries;
  }

  /** The skill with this id or qualified name (`plugin:skill`), if listed. */
  skill(name: string): SkillEntry | undefined {
    return this.entries.find((entry) => entry.id === name || entry.qualifiedName === name);
  }

  /** The skills a person may invoke, as commands. */
  getCommands(): ICommand[] {
    return this.entries
      .filter((entry) => entry.userInvocable !== false)
      .map((entry) => ({
        name: entry.qualifiedName ?? entry.id,
        description: entry.description,
        source: entry.source === 'project' || entry.source === 'user' ? 'skill' : entry.source,
        ...(entry.argumentHint === undefined ? {} : { argumentHint: entry.argumentHint }),
      }));
  }
}

/**
 * Every palette source together (spec: CommandRegistry): prefix filtering for autocomplete,
 * plugin-qualified names (`plugin:command`), subcommands. Slash syntax is the input layer's:
 * names here are slash-free.
 */
export class CommandRegistry {
  private readonly sources: ICommandSource[] = [];
  private sorted: ICommand[] | undefined;
  /** Lower-cased names, parallel to `sorted`. */
  private lowered: string[] = [];
  /** Qualified commands (`plugin:command`) with their lower-cased part after the colon. */
  private qualified: Array<[ICommand, string]> = [];

  /** Adds a source after the existing ones; an earlier source wins a name both have. */
  addSource(source: ICommandSource): void {
    this.sources.push(source);
    this.sorted = undefined;
  }

  /** Replaces the source with `name` (a dynamic source after a plugin reload). */
  replaceSource(name: string, source: ICommandSource): void {
    const index = this.sources.findIndex((candidate) => candidate.name === name);
    if (index === -1) this.sources.push(source);
    else this.sources[index] = source;
    this.sorted = undefined;
  }

  /** Call after a source's content changed, so the next query sees it. */
  invalidate(): void {
    this.sorted = undefined;
  }

  /**
   * Every command (first source wins a name), sorted by name; with `prefix`, those whose name
   * — or, for `plugin:command`, the part after the colon — starts with it.
   */
  getCommands(prefix?: string): ICommand[] {
    const all = this.all();
    if (prefix === undefined || prefix === '') return [...all];
    const wanted = prefix.replace(/^\/+/, '').toLowerCase();
    const lowered = this.lowered;
    // Sorted by name: the plain-name matches are one contiguous run, found by binary search.
    let low = 0;
    let high = all.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (lowered[middle]! < wanted) low = middle + 1;
      else high = middle;
    }
    const matches: ICommand[] = [];
    for (let index = low; index < all.length && lowered[index]!.startsWith(wanted); index += 1) matches.push(all[index]!);
    for (const [command, rest] of this.qualified) if (rest.startsWith(wanted) && !matches.includes(command)) matches.push(command);
    return matches;
  }

  /** `audit` → `my-plugin:audit` when exactly one qualified command ends so; the name itself when it exists; else null. */
  resolveQualifiedName(name: string): string | null {
    const all = this.all();
    if (all.some((command) => command.name === name)) return name;
    const qualified = all.filter((command) => command.name.endsWith(`:${name}`));
    return qualified.length === 1 ? qualified[0]!.name : null;
  }

  /** The subcommands of the command named exactly `name`; `[]` when it has none or does not exist. */
  getSubcommands(name: string): ICommand[] {
    return [...(this.all().find((command) => command.name === name)?.subcommands ?? [])];
  }

  private all(): ICommand[] {
    if (this.sorted) return this.sorted;
    const seen = new Set<string>();
    const commands: ICommand[] = [];
    for (const source of this.sources) {
      for (const command of source.getCommands()) {
        if (seen.has(command.name)) continue;
        seen.add(command.name);
        commands.push(command);
      }
    }
    commands.sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : 0));
    this.sorted = commands;
    this.lowered = commands.map((command) => command.name.toLowerCase());
    this.qualified = commands.flatMap((command): Array<[ICommand, string]> => {
      const colon = command.name.indexOf(':');
      return colon === -1 ? [] : [[command, command.name.slice(colon + 1).toLowerCase()]];
    });
    return commands;
  }
}
