import type { Diagnostic } from '@tessera/contracts';
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
  /** When the person last agreed to hooks or MCP servers it runs; absent when it runs none. */
  approvedAt?: string;
  /**
   * Tessera: the hooks and MCP servers agreed to, one line each (see `codeDetails`). An update
   * or enable that brings a line not in this list asks again.
   */
  approved?: string[];
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

  /**
   * Every readable record, for loading at start-up: never throws. A file that cannot be read
   * gives no records and an error naming it; a record that is not an object with a string
   * `installPath` and `scope` is skipped with a warning, and the others are kept (Claude Code
   * is as lenient).
   */
  readLeniently(): { plugins: Record<string, InstalledPluginRecord[]>; diagnostics: Diagnostic[] } {
    const file = this.paths.installedPluginsFile;
    const diagnostics: Diagnostic[] = [];
    let all: Record<string, unknown>;
    try {
      all = this.all();
    } catch (error) {
      diagnostics.push({ severity: 'error', file, message: `${(error as Error).message} Until then no installed plugin is loaded; or delete the file and run \`tessera plugin install\` for each plugin again.` });
      return { plugins: {}, diagnostics };
    }
    const plugins: Record<string, InstalledPluginRecord[]> = {};
    for (const [id, records] of Object.entries(all)) {
      if (!Array.isArray(records)) {
        diagnostics.push({ severity: 'warning', file, path: `plugins.${id}`, message: `The records of ${id} are not a list; they are skipped. Run \`tessera plugin install ${id}\` to write them again.` });
        continue;
      }
      plugins[id] = records.filter((record: unknown, index) => {
        const ok = record !== null && typeof record === 'object' && typeof (record as InstalledPluginRecord).installPath === 'string' && typeof (record as InstalledPluginRecord).scope === 'string';
        if (!ok) diagnostics.push({ severity: 'warning', file, path: `plugins.${id}[${index}]`, message: `Not an install record (an object with scope and installPath); it is skipped. Run \`tessera plugin install ${id}\` to write it again.` });
        return ok;
      });
    }
    return { plugins, diagnostics };
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

  /** The file can hold a git URL with a token in it (needed to fetch again), so only the owner reads it. */
  put(name: string, value: KnownMarketplace): void {
    updateJsonObject(
      this.paths.knownMarketplacesFile,
      (all) => {
        all[name] = value;
      },
      { mode: 0o600 },
    );
  }

  remove(name: string): void {
    updateJsonObject(
      this.paths.knownMarketplacesFile,
      (all) => {
        delete all[name];
      },
      { mode: 0o600 },
    );
  }
}
