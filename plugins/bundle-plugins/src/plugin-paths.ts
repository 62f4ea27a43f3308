import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Where bundle plugins live on disk, Claude Code's `~/.claude/plugins/` layout under the
 * Tessera user folder: `marketplaces/<name>/` (clones), `cache/<marketplace>/<plugin>/<version>/`
 * (installed copies), `data/<id>/` (`${CLAUDE_PLUGIN_DATA}`), `known_marketplaces.json` and
 * `installed_plugins.json`.
 */
export class PluginPaths {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** `<home>/.tessera/plugins`. */
  static forHome(home: string = homedir()): PluginPaths {
    return new PluginPaths(join(home, '.tessera', 'plugins'));
  }

  get knownMarketplacesFile(): string {
    return join(this.root, 'known_marketplaces.json');
  }

  get installedPluginsFile(): string {
    return join(this.root, 'installed_plugins.json');
  }

  marketplaceDir(name: string): string {
    return join(this.root, 'marketplaces', name);
  }

  cacheDir(marketplace: string, plugin: string, version?: string): string {
    const dir = join(this.root, 'cache', marketplace, plugin);
    return version === undefined ? dir : join(dir, version);
  }

  /** Persistent per-plugin data that survives updates: `data/<id>` with the id made path-safe. */
  dataDir(id: string): string {
    return join(this.root, 'data', pluginDataId(id));
  }

  get stagingDir(): string {
    return join(this.root, '.staging');
  }
}

/** `name@marketplace` with every character outside `[A-Za-z0-9_-]` replaced by `-` (Claude Code's rule). */
export function pluginDataId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '-');
}

/** `name@marketplace` split; throws nothing, returns undefined for anything else. */
export function parsePluginId(id: string): { name: string; marketplace: string } | undefined {
  const at = id.lastIndexOf('@');
  if (at <= 0 || at === id.length - 1) return undefined;
  return { name: id.slice(0, at), marketplace: id.slice(at + 1) };
}
