import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { BundlePluginInstaller, describeComponents } from './bundle-plugin-installer.js';
import { BundlePluginLoader } from './bundle-plugin-loader.js';
import { BundlePluginRegistry } from './bundle-plugin-registry.js';
import { BundlePluginError } from './errors.js';
import { GitClient } from './git-client.js';
import { describeSource, MarketplaceClient, type ApproveCallback } from './marketplace-client.js';
import { PluginPaths } from './plugin-paths.js';
import { readPluginSettings } from './plugin-settings.js';
import { PluginSourceFetcher } from './plugin-source-fetcher.js';
import { redactCredentials } from './redact-credentials.js';
import type { PluginScope } from './plugin-state.js';

export interface BundlePluginManagerOptions {
  /** The user folder: settings in `<home>/.tessera/settings.json`, plugins in `<home>/.tessera/plugins`. Default `os.homedir()`. */
  home?: string;
  /** The project: project and local settings, relative paths. Default `process.cwd()`. */
  cwd?: string;
  /** Where marketplaces, installed copies and plugin data go. Default `<home>/.tessera/plugins`. */
  pluginsDir?: string;
  /** Plugin directories loaded as they are (`<name>@inline`, always enabled). */
  pluginDirs?: readonly string[];
  /** Overrides the settings file `--scope` writes (`user`, `project`, `local`). */
  settingsFiles?: Partial<Record<PluginScope, string>>;
  /**
   * Only these scopes' settings files enable plugins and declare marketplaces (the CLI's
   * `--setting-sources`; `[]`: none, so only `pluginDirs` load). Default: all of them.
   */
  settingSources?: readonly PluginScope[];
  /** Asked before trusting a marketplace or enabling a plugin's hooks and MCP servers; without it `--yes` is needed. */
  approve?: ApproveCallback;
  /** The git executable (default `git`). */
  git?: string;
  /** The npm executable (default `npm`). */
  npm?: string;
  /** For marketplace.json URLs; default the global `fetch`. */
  fetch?: typeof fetch;
}

/** What `/plugin …` answers (the shape the `/plugin` command passes on). */
export interface PluginCommandResult {
  success: boolean;
  message: string;
}

const USAGE = [
  'Usage: plugin <command>',
  '  install <name@marketplace> [--scope user|project|local] [--yes]',
  '  uninstall <name@marketplace> [--scope …] [--keep-data]',
  '  enable <name@marketplace> [--scope …] [--yes]',
  '  disable <name@marketplace> [--scope …]',
  '  list [--json]',
  '  marketplace add <directory | marketplace.json URL | git URL[#ref] | owner/repo[@ref]> [--yes]',
  '  marketplace list [--json] | update [name] | remove <name>',
  '  reload',
].join('\n');

/**
 * Bundle plugins for one user folder and project: the live registry, the installer and the
 * marketplace client, and the `/plugin` host adapter (`run(args)`). A change made through
 * `run` reloads the registry, so the running session's sources see it.
 */
export class BundlePluginManager {
  readonly paths: PluginPaths;
  readonly registry: BundlePluginRegistry;
  readonly marketplaces: MarketplaceClient;
  readonly installer: BundlePluginInstaller;
  private readonly approve: ApproveCallback | undefined;
  private everLoaded = false;

  constructor(options: BundlePluginManagerOptions = {}) {
    const home = resolve(options.home ?? homedir());
    const cwd = resolve(options.cwd ?? process.cwd());
    this.paths = options.pluginsDir === undefined ? PluginPaths.forHome(home) : new PluginPaths(resolve(cwd, options.pluginsDir));
    const settings = { home, cwd, ...(options.settingsFiles ? { files: options.settingsFiles } : {}), ...(options.settingSources ? { settingSources: options.settingSources } : {}) };
    const git = new GitClient(options.git);
    const loader = new BundlePluginLoader();
    this.marketplaces = new MarketplaceClient({
      paths: this.paths,
      cwd,
      git,
      declared: () => readPluginSettings(settings).extraKnownMarketplaces,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.registry = new BundlePluginRegistry({ ...settings, paths: this.paths, loader, ...(options.pluginDirs ? { pluginDirs: options.pluginDirs } : {}) });
    this.installer = new BundlePluginInstaller({
      ...settings,
      paths: this.paths,
      marketplaces: this.marketplaces,
      loader,
      fetcher: new PluginSourceFetcher({ git, ...(options.npm ? { npm: options.npm } : {}) }),
    });
    this.approve = options.approve;
    this.registry.onChange(() => (this.everLoaded = true));
  }

  /** The `/plugin` host adapter: `install x@m --scope project`, `marketplace add ./dir`… Never throws. */
  async run(args: string): Promise<PluginCommandResult> {
    return this.exec(splitArgs(args));
  }

  /** Every answer, listings included, has credentials in URLs redacted: it lands in terminals and transcripts. */
  async exec(argv: readonly string[]): Promise<PluginCommandResult> {
    try {
      const result = await this.dispatch(parseFlags(argv));
      return { ...result, message: redactCredentials(result.message) };
    } catch (error) {
      return { success: false, message: redactCredentials(error instanceof BundlePluginError ? error.message : `plugin: ${(error as Error).message}`) };
    }
  }

  private async dispatch(parsed: ParsedArgs): Promise<PluginCommandResult> {
    const [command, ...rest] = parsed.positional;
    const trust = { yes: parsed.flags.yes === true, ...(this.approve ? { approve: this.approve } : {}) };
    const scope = parsed.scope;
    const target = () => rest[0] ?? usage(`${command} needs name@marketplace`);
    switch (command) {
      case 'install':
      case 'i': {
        const result = await this.installer.install(target(), { ...trust, ...(scope ? { scope } : {}) });
        await this.registry.reload();
        const lines = [`Installed ${result.id} ${result.version} (${scope ?? 'user'} scope, enabled in ${result.settingsFile}).`, ...result.components.map((line) => `  ${line}`)];
        if (result.warnings.length) lines.push('Warnings:', ...result.warnings.map((line) => `  ${line}`));
        return { success: true, message: lines.join('\n') };
      }
      case 'uninstall':
      case 'remove': {
        const result = this.installer.uninstall(target(), { ...(scope ? { scope } : {}), keepData: parsed.flags['keep-data'] === true });
        await this.registry.reload();
        return { success: true, message: `Uninstalled ${result.id}${result.removedFiles ? '' : ' from this scope (still installed in another)'}.` };
      }
      case 'enable': {
        const result = await this.installer.enable(target(), { ...trust, ...(scope ? { scope } : {}) });
        await this.registry.reload();
        return { success: true, message: `Enabled ${result.id} in ${result.settingsFile}.` };
      }
      case 'disable': {
        const result = this.installer.disable(target(), scope ? { scope } : {});
        await this.registry.reload();
        return { success: true, message: `Disabled ${result.id} in ${result.settingsFile}. Its commands, skills, agents, hooks and MCP servers are gone from the next session.` };
      }
      case 'list':
      case undefined:
        return command === undefined && parsed.flags.help !== true ? this.list(false) : parsed.flags.help ? { success: true, message: USAGE } : this.list(parsed.flags.json === true);
      case 'reload': {
        const result = await this.registry.reload();
        return { success: result.failed.length === 0, message: [`Reloaded ${result.loaded.length} plugin(s).`, ...result.failed.map((item) => `  ${item.id}: ${item.error}`)].join('\n') };
      }
      case 'marketplace':
        return this.marketplace(rest, parsed, trust);
      case 'help':
        return { success: true, message: USAGE };
      default:
        return usage(`unknown command "${command}"`);
    }
  }

  private async list(json: boolean): Promise<PluginCommandResult> {
    // The CLI's manager has not loaded anything yet; a kernel's has (at boot).
    if (!this.everLoaded) await this.registry.reload();
    const rows = this.installer.list();
    const loaded = new Map(this.registry.plugins().map((plugin) => [plugin.id, plugin]));
    if (json) return { success: true, message: JSON.stringify(rows.map((row) => ({ ...row, components: loaded.get(row.id) ? describeComponents(loaded.get(row.id)!) : [] })), null, 2) };
    if (rows.length === 0 && loaded.size === 0) return { success: true, message: 'No plugins installed. Add a marketplace with `plugin marketplace add <source>`, then `plugin install name@marketplace`.' };
    const lines: string[] = [];
    for (const row of rows) {
      lines.push(`${row.id} ${row.version} — ${row.enabled ? 'enabled' : 'disabled'} (${row.scopes.join(', ')})`);
      const plugin = loaded.get(row.id);
      if (plugin) lines.push(...describeComponents(plugin).map((line) => `  ${line}`));
    }
    for (const plugin of loaded.values()) {
      if (plugin.marketplace === 'inline') lines.push(`${plugin.id} — loaded from ${plugin.root}`, ...describeComponents(plugin).map((line) => `  ${line}`));
    }
    return { success: true, message: lines.join('\n') };
  }

  private async marketplace(argv: string[], parsed: ParsedArgs, trust: { yes: boolean; approve?: ApproveCallback }): Promise<PluginCommandResult> {
    const [command, argument] = argv;
    switch (command) {
      case 'add': {
        if (argument === undefined) return usage('marketplace add needs a source');
        const added = await this.marketplaces.add(argument, trust);
        return { success: true, message: `Added marketplace ${added.name} (${added.marketplace.plugins.length} plugins) from ${describeSource(added.known.source)}.` };
      }
      case 'update': {
        const updated = await this.marketplaces.update(argument);
        return { success: true, message: updated.length ? updated.map((item) => `Updated ${item.name} (${item.marketplace.plugins.length} plugins).`).join('\n') : 'No marketplaces to update.' };
      }
      case 'remove':
      case 'rm': {
        if (argument === undefined) return usage('marketplace remove needs a name');
        const removed = this.installer.uninstallMarketplace(argument);
        this.marketplaces.remove(argument);
        if (removed.length) await this.registry.reload();
        return { success: true, message: `Removed marketplace ${argument}${removed.length ? ` and uninstalled ${removed.join(', ')}` : ''}.` };
      }
      case 'list':
      case undefined: {
        const rows = this.marketplaces.list();
        if (parsed.flags.json === true) return { success: true, message: JSON.stringify(rows, null, 2) };
        if (rows.length === 0) return { success: true, message: 'No marketplaces. Add one with `plugin marketplace add <source>`.' };
        return { success: true, message: rows.map((row) => `${row.name} — ${describeSource(row.source)}${row.fromSettings ? ' (declared in settings, not fetched yet)' : row.trusted ? '' : ' (not trusted)'}`).join('\n') };
      }
      default:
        return usage(`unknown marketplace command "${command}"`);
    }
  }
}

interface ParsedArgs {
  positional: string[];
  flags: Record<string, string | boolean>;
  scope?: PluginScope;
}

function usage(problem: string): never {
  throw new BundlePluginError('usage', `plugin: ${problem}.\n${USAGE}`);
}

function parseFlags(argv: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const flags: Record<string, string | boolean> = {};
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (arg === '-y') flags.yes = true;
    else if (arg === '-h') flags.help = true;
    else if (arg.startsWith('--')) {
      const [key, value] = arg.slice(2).split('=', 2) as [string, string | undefined];
      if (key === 'scope' || key === 'sparse') flags[key] = value ?? argv[++index] ?? '';
      else flags[key] = value ?? true;
    } else positional.push(arg);
  }
  const result: ParsedArgs = { positional, flags };
  if (flags.scope !== undefined) {
    if (flags.scope !== 'user' && flags.scope !== 'project' && flags.scope !== 'local') usage(`--scope must be user, project or local (got "${String(flags.scope)}")`);
    result.scope = flags.scope;
  }
  return result;
}

/** Splits a command line on spaces, keeping quoted parts together. */
export function splitArgs(text: string): string[] {
  const parts: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of text.matchAll(pattern)) parts.push(match[1] ?? match[2] ?? match[3]!);
  return parts;
}
