import type { MarketplaceEntry } from '@tessera/formats';
import type { PluginPaths } from './plugin-paths.js';
import { readJsonObject, updateJsonObject } from './json-file.js';

export type PluginScope = 'user' | 'project' | 'local';

/** One install of a plugin (Claude Code's `installed_plugins.json` v2 entry). */
export interface InstalledPluginRecord {
  scope: PluginScope;
  installPath: string;
  version: string;
  installedAt: string;
  lastUpdated: string;
  gitCommitSha?: string;
  /** Project and local scopes: the project the install belongs to. */
  projectPath?: string;
  /** When the person agreed to the hooks and MCP servers it runs (first enable). */
  approvedAt?: string;
  /** Tessera: the marketplace entry it was installed from (its name, `strict` and component fields apply at load). */
  entry?: MarketplaceEntry;
}

/** How a known marketplace was added (`known_marketplaces.json`). */
export interface MarketplaceSourceSpec {
  source: 'github' | 'git' | 'url' | 'directory' | 'file' | 'settings';
  repo?: string;
  url?: string;
  ref?: string;
  path?: string;
  headers?: Record<string, string>;
}

export interface KnownMarketplace {
  source: MarketplaceSourceSpec;
  installLocation: string;
  lastUpdated: string;
  autoUpdate?: boolean;
  /** Tessera: the person accepted this marketplace (`--yes` or the approve callback). */
  trusted?: boolean;
}

/** `installed_plugins.json`: `{ version: 2, plugins: { "name@mkt": [record per scope] } }`. */
export class InstalledPluginsFile {
  constructor(private readonly paths: PluginPaths) {}

  all(): Record<string, InstalledPluginRecord[]> {
    const value = readJsonObject(this.paths.installedPluginsFile);
    const plugins = value?.plugins;
    if (plugins === null || typeof plugins !== 'object' || Array.isArray(plugins)) return {};
    return plugins as Record<string, InstalledPluginRecord[]>;
  }

  get(id: string): InstalledPluginRecord[] {
    const records = this.all()[id];
    return Array.isArray(records) ? records : [];
  }

  /** The record for `scope` (and, for project/local, this project); else any record of the plugin. */
  find(id: string, scope?: PluginScope, projectPath?: string): InstalledPluginRecord | undefined {
    const records = this.get(id);
    return scope === undefined ? records[0] : records.find((record) => record.scope === scope && (scope === 'user' || record.projectPath === projectPath));
  }

  put(id: string, record: InstalledPluginRecord): void {
    this.update((plugins) => {
      const others = (plugins[id] ?? []).filter((item) => !(item.scope === record.scope && item.projectPath === record.projectPath));
      plugins[id] = [...others, record];
    });
  }

  remove(id: string, scope: PluginScope, projectPath?: string): InstalledPluginRecord[] {
    let left: InstalledPluginRecord[] = [];
    this.update((plugins) => {
      left = (plugins[id] ?? []).filter((item) => !(item.scope === scope && (scope === 'user' || item.projectPath === projectPath)));
      if (left.length === 0) delete plugins[id];
      else plugins[id] = left;
    });
    return left;
  }

  private update(change: (plugins: Record<string, InstalledPluginRecord[]>) => void): void {
    updateJsonObject(this.paths.installedPluginsFile, (value) => {
      const plugins = (value.plugins !== null && typeof value.plugins === 'object' ? value.plugins : {}) as Record<string, InstalledPluginRecord[]>;
      change(plugins);
      value.version = 2;
      value.plugins = plugins;
    });
  }
}

/** `known_marketplaces.json`: `{ "<name>": { source, installLocation, lastUpdated, … } }`. */
export class KnownMarketplacesFile {
  constructor(private readonly paths: PluginPaths) {}

  all(): Record<string, KnownMarketplace> {
    return (readJsonObject(this.paths.knownMarketplacesFile) ?? {}) as unknown as Record<string, KnownMarketplace>;
  }

  get(name: string): KnownMarketplace | undefined {
    return this.all()[name];
  }

  put(name: string, value: KnownMarketplace): void {
    updateJsonObject(this.paths.knownMarketplacesFile, (all) => {
      all[name] = value;
    });
  }

  remove(name: string): void {
    updateJsonObject(this.paths.knownMarketplacesFile, (all) => {
      delete all[name];
    });
  }
}
