import { homedir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { BundlePluginError } from './errors.js';

/** The marketplace-name rule of `@tessera/formats` (and Claude Code): it names a directory. */
const MARKETPLACE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

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

  /** Throws for a name that is not a plain directory name: callers delete and replace this folder. */
  marketplaceDir(name: string): string {
    checkMarketplaceName(name);
    return this.under(join(this.root, 'marketplaces'), name);
  }

  /** Throws for a segment such as `..` or `a/b`: uninstall deletes this folder, install replaces it. */
  cacheDir(marketplace: string, plugin: string, version?: string): string {
    checkMarketplaceName(marketplace);
    const dir = this.under(join(this.root, 'cache', marketplace), plugin);
    return version === undefined ? dir : this.under(dir, version);
  }

  /** Persistent per-plugin data that survives updates: `data/<id>` with the id made path-safe. */
  dataDir(id: string): string {
    return join(this.root, 'data', pluginDataId(id));
  }

  get stagingDir(): string {
    return join(this.root, '.staging');
  }

  /** `parent/segment`, refused unless it is one plain entry inside `parent`. */
  private under(parent: string, segment: string): string {
    const path = join(parent, segment);
    if (!isPlainSegment(segment) || !path.startsWith(parent + sep)) {
      throw new BundlePluginError('plugin_id_invalid', `${JSON.stringify(segment)} cannot be a folder name under ${parent}: it may not be empty, start with \`.\` or contain \`/\`, \`\\\` or control characters. Rename the plugin or version in its marketplace or plugin.json.`, { path: parent, name: segment });
    }
    return path;
  }
}

/**
 * A name usable as one folder: not `.`, `..` or any other leading-dot name (the staging areas
 * start with a dot), and without separators or control characters.
 */
export function isPlainSegment(segment: string): boolean {
  return segment !== '' && !segment.startsWith('.') && !/[/\\\u0000-\u001f\u007f]/.test(segment);
}

export function isMarketplaceName(name: string): boolean {
  return MARKETPLACE_SEGMENT.test(name) && !name.includes('..');
}

/** Refuses a marketplace name before it reaches the filesystem (formats flags it; this stops it). */
export function checkMarketplaceName(name: string, file?: string): void {
  if (isMarketplaceName(name)) return;
  throw new BundlePluginError(
    'marketplace_invalid',
    `Marketplace name ${JSON.stringify(name)}${file ? ` (${file})` : ''} cannot be used: it names a folder, so it must be letters, digits, \`.\`, \`_\` and \`-\`, start with a letter or digit and not contain \`..\`. Nothing was changed; ask the marketplace owner to rename it.`,
    { marketplace: name, ...(file ? { file } : {}) },
  );
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
