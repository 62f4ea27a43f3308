import { resolve } from 'node:path';
import type { AgentDefinition, Diagnostic, HooksConfig, HooksSource, McpServerDeclaration, SkillEntry } from '@tessera/contracts';
import { BundlePluginLoader, type LoadedBundlePlugin } from './bundle-plugin-loader.js';
import type { PluginPaths } from './plugin-paths.js';
import { readPluginSettings, type PluginSettingsOptions } from './plugin-settings.js';
import { InstalledPluginsFile, type InstalledPluginRecord } from './plugin-state.js';

export interface BundlePluginRegistryOptions extends PluginSettingsOptions {
  paths: PluginPaths;
  /** Plugin directories loaded as they are, always enabled, as `<name>@inline` (`--plugin-dir`). */
  pluginDirs?: readonly string[];
  loader?: BundlePluginLoader;
}

/** What one `reload()` found. */
export interface ReloadResult {
  /** Ids of the plugins now loaded. */
  loaded: string[];
  /** Plugins that are enabled but could not be used, with why. */
  failed: Array<{ id: string; error: string }>;
  diagnostics: Diagnostic[];
}

/**
 * The live set of enabled bundle plugins: installed (`installed_plugins.json`) and enabled by
 * the merged settings layers, plus `pluginDirs`. `reload()` reads everything again and tells
 * every listener (the skill, agent, hook and MCP sources pass that on), which is how
 * `/reload-plugins` and `/plugin install` reach a running session. Before the first load the
 * registry is empty.
 */
export class BundlePluginRegistry {
  private loaded: readonly LoadedBundlePlugin[] = [];
  private entries: readonly SkillEntry[] = [];
  private last: ReloadResult = { loaded: [], failed: [], diagnostics: [] };
  private listeners: ReadonlyArray<() => void> = [];
  private readonly loader: BundlePluginLoader;

  constructor(private readonly options: BundlePluginRegistryOptions) {
    this.loader = options.loader ?? new BundlePluginLoader();
  }

  /** Re-reads settings and installs, loads every enabled plugin, then notifies the listeners. */
  async reload(): Promise<ReloadResult> {
    const settings = readPluginSettings(this.options);
    const diagnostics: Diagnostic[] = [...settings.diagnostics];
    const failed: ReloadResult['failed'] = [];
    // A damaged installed_plugins.json is reported, never thrown: it must not stop a session.
    const { plugins: installed, diagnostics: stateProblems } = new InstalledPluginsFile(this.options.paths).readLeniently();
    diagnostics.push(...stateProblems);
    const jobs: Array<Promise<LoadedBundlePlugin | undefined>> = [];
    for (const [id, enabled] of Object.entries(settings.enabledPlugins)) {
      if (!enabled) continue;
      const record = pickRecord(installed[id], this.options.cwd);
      if (record === undefined) {
        diagnostics.push({ severity: 'warning', file: this.options.cwd, path: `enabledPlugins.${id}`, message: `${id} is enabled in settings but not installed; run \`tessera plugin install ${id}\` to use it.` });
        continue;
      }
      jobs.push(this.loadOne(id, record.installPath, record, failed));
    }
    for (const dir of this.options.pluginDirs ?? []) jobs.push(this.loadOne(undefined, resolve(this.options.cwd, dir), undefined, failed));
    const plugins = onePerName((await Promise.all(jobs)).filter((plugin): plugin is LoadedBundlePlugin => plugin !== undefined), diagnostics);
    for (const plugin of plugins) diagnostics.push(...plugin.diagnostics);
    this.loaded = plugins;
    this.entries = skillEntriesOf(plugins);
    this.last = { loaded: plugins.map((plugin) => plugin.id), failed, diagnostics };
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A listener must not stop the others (contract: onChange listeners must not throw).
      }
    }
    return this.last;
  }

  /** The plugins loaded by the last `reload()`. */
  plugins(): readonly LoadedBundlePlugin[] {
    return this.loaded;
  }

  lastReload(): ReloadResult {
    return this.last;
  }

  /**
   * Commands and skills of every plugin as skill entries. `id` is the plain name when no other
   * plugin uses it; when two do, both keep only their qualified name (`plugin:name`).
   */
  skillEntries(): readonly SkillEntry[] {
    return this.entries;
  }

  agents(): readonly AgentDefinition[] {
    return this.loaded.flatMap((plugin) => plugin.agents);
  }

  hookConfigs(): ReadonlyArray<{ config: HooksConfig; source: HooksSource }> {
    return this.loaded.flatMap((plugin) => plugin.hooks);
  }

  mcpServers(): readonly McpServerDeclaration[] {
    return this.loaded.flatMap((plugin) => plugin.mcpServers);
  }

  diagnostics(): readonly Diagnostic[] {
    return this.last.diagnostics;
  }

  onChange(listener: () => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }

  private async loadOne(id: string | undefined, root: string, record: InstalledPluginRecord | undefined, failed: ReloadResult['failed']): Promise<LoadedBundlePlugin | undefined> {
    const at = id?.lastIndexOf('@') ?? -1;
    const marketplace = id === undefined ? 'inline' : id.slice(at + 1);
    const dataId = id ?? `${root.split(/[\\/]/).at(-1)}@inline`;
    const result = await this.loader
      .load(root, { marketplace, dataDir: this.options.paths.dataDir(dataId), ...(record?.entry === undefined ? {} : { entry: record.entry }) })
      .catch((error: unknown) => ({ ok: false as const, error: (error as Error).message, diagnostics: [] }));
    if (!result.ok) {
      failed.push({ id: id ?? root, error: result.error });
      return undefined;
    }
    return result.plugin;
  }
}

/**
 * One plugin per name, because the name is the `plugin:` namespace of its commands, agents,
 * hooks and MCP servers: two copies would run every hook twice. A `pluginDirs` copy replaces
 * an installed plugin of the same name for this session (Claude Code gives `--plugin-dir`
 * precedence); of two installed ones the first stays and the other is reported.
 */
function onePerName(plugins: readonly LoadedBundlePlugin[], diagnostics: Diagnostic[]): LoadedBundlePlugin[] {
  const kept = new Map<string, LoadedBundlePlugin>();
  for (const plugin of plugins) {
    const earlier = kept.get(plugin.name);
    if (earlier === undefined) kept.set(plugin.name, plugin);
    else if (plugin.marketplace === 'inline' && earlier.marketplace !== 'inline') {
      kept.set(plugin.name, plugin);
      diagnostics.push({ severity: 'info', file: plugin.root, message: `${plugin.root} replaces the installed ${earlier.id} for this session (both are named "${plugin.name}").` });
    } else {
      diagnostics.push({ severity: 'warning', file: plugin.root, message: `${plugin.id} is not loaded: ${earlier.id} has the same name "${plugin.name}", and their commands, agents and MCP servers would clash. Disable one of them.` });
    }
  }
  return [...kept.values()];
}

/** The record for this project (project / local installs) or the user install. */
function pickRecord(records: InstalledPluginRecord[] | undefined, cwd: string): InstalledPluginRecord | undefined {
  if (!Array.isArray(records) || records.length === 0) return undefined;
  const here = resolve(cwd);
  return records.find((record) => record.projectPath !== undefined && resolve(record.projectPath) === here) ?? records.find((record) => record.projectPath === undefined) ?? records[0];
}

function skillEntriesOf(plugins: readonly LoadedBundlePlugin[]): SkillEntry[] {
  const all: SkillEntry[] = [];
  for (const plugin of plugins) {
    // A skill and a command with one name: the skill wins, as in Claude Code.
    const taken = new Set(plugin.skills.map((entry) => entry.qualifiedName));
    all.push(...plugin.skills, ...plugin.commands.filter((entry) => !taken.has(entry.qualifiedName)));
  }
  const owners = new Map<string, Set<string>>();
  for (const entry of all) owners.set(entry.id, (owners.get(entry.id) ?? new Set()).add(entry.source));
  return all.map((entry) => ((owners.get(entry.id)?.size ?? 0) > 1 ? { ...entry, id: entry.qualifiedName! } : entry));
}
