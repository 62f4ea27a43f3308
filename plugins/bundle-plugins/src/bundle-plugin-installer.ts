import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { MarketplaceEntry } from '@tessera/formats';
import { BundlePluginLoader, type LoadedBundlePlugin } from './bundle-plugin-loader.js';
import { BundlePluginError } from './errors.js';
import { MarketplaceClient, requireApproval, type ResolvedMarketplace, type TrustOptions } from './marketplace-client.js';
import { readJsonObject } from './json-file.js';
import { isPlainSegment, parsePluginId, type PluginPaths } from './plugin-paths.js';
import { readPluginSettings, settingsFileFor, writeEnabled, type PluginSettingsOptions } from './plugin-settings.js';
import { PluginSourceFetcher } from './plugin-source-fetcher.js';
import { InstalledPluginsFile, type InstalledPluginRecord, type PluginScope } from './plugin-state.js';

export interface BundlePluginInstallerOptions extends PluginSettingsOptions {
  paths: PluginPaths;
  marketplaces: MarketplaceClient;
  fetcher?: PluginSourceFetcher;
  loader?: BundlePluginLoader;
  now?: () => Date;
}

export interface InstallOptions extends TrustOptions {
  /** Which settings file gets `enabledPlugins[id] = true`. Default `user`. */
  scope?: PluginScope;
}

export interface InstallResult {
  id: string;
  version: string;
  installPath: string;
  /** The settings file that now enables it. */
  settingsFile: string;
  gitCommitSha?: string;
  /** One line per component kind, for the message (`commands: commit, push`). */
  components: string[];
  warnings: string[];
}

export interface InstalledPluginRow {
  id: string;
  version: string;
  scopes: PluginScope[];
  enabled: boolean;
  installPath: string;
}

/**
 * Installs, uninstalls, enables and disables bundle plugins (spec: BundlePluginInstaller), in
 * Claude Code's layout: copies under `cache/<marketplace>/<plugin>/<version>/`, records in
 * `installed_plugins.json`, and `enabledPlugins` in the scope's settings file. An install is
 * staged and swapped in with a rename: if anything fails, the previous version stays.
 */
export class BundlePluginInstaller {
  private readonly installed: InstalledPluginsFile;
  private readonly fetcher: PluginSourceFetcher;
  private readonly loader: BundlePluginLoader;

  constructor(private readonly options: BundlePluginInstallerOptions) {
    this.installed = new InstalledPluginsFile(options.paths);
    this.fetcher = options.fetcher ?? new PluginSourceFetcher();
    this.loader = options.loader ?? new BundlePluginLoader();
  }

  async install(id: string, options: InstallOptions = {}): Promise<InstallResult> {
    const { name, marketplace } = checkId(id);
    const scope = options.scope ?? 'user';
    const market = await this.options.marketplaces.resolve(marketplace, options);
    const entry = findEntry(market, name);
    const pluginId = `${entry.name}@${market.name}`;
    const { paths } = this.options;
    // The entry name becomes cache/<marketplace>/<name>, which uninstall deletes.
    paths.cacheDir(market.name, entry.name);
    const stage = join(paths.stagingDir, randomUUID());
    const staged = join(stage, 'plugin');
    mkdirSync(stage, { recursive: true });
    try {
      const fetched = await this.fetcher.fetch(entry, market, staged);
      const loaded = await this.loader.load(staged, { marketplace: market.name, entry, marketplaceFile: market.file, dataDir: paths.dataDir(pluginId) });
      if (!loaded.ok) throw new BundlePluginError('plugin_load_failed', `${pluginId} cannot be loaded: ${loaded.error}. Nothing was installed.`, { plugin: pluginId });
      const previous = this.installed.get(pluginId);
      const approval = await this.approveCode(loaded.plugin, previous, options);
      const version = sanitizeVersion(loaded.plugin.version ?? fetched.gitCommitSha?.slice(0, 12) ?? 'unknown');
      const installPath = paths.cacheDir(market.name, entry.name, version);
      // A settings file that cannot be written fails here, before the copy or any record changes.
      readJsonObject(settingsFileFor(scope, this.options));
      swapIn(staged, installPath);
      const now = (this.options.now?.() ?? new Date()).toISOString();
      const projectPath = scope === 'user' ? undefined : resolve(this.options.cwd);
      const earlier = previous.find((record) => record.scope === scope && record.projectPath === projectPath);
      const approvedAt = approval.asked ? now : earlier?.approvedAt;
      const record: InstalledPluginRecord = {
        scope,
        installPath,
        version,
        installedAt: earlier?.installedAt ?? now,
        lastUpdated: now,
        ...(approvedAt === undefined ? {} : { approvedAt }),
        ...(approval.approved.length === 0 ? {} : { approved: approval.approved }),
        entry: portableEntry(entry),
        ...(fetched.gitCommitSha === undefined ? {} : { gitCommitSha: fetched.gitCommitSha }),
        ...(projectPath === undefined ? {} : { projectPath }),
      };
      this.installed.put(pluginId, record);
      // Other scopes' records point at the same copy once it is replaced, and so share its approval.
      for (const other of previous.filter((item) => item !== earlier && item.installPath !== installPath)) {
        this.installed.put(pluginId, { ...other, installPath, version, lastUpdated: now, ...(approval.asked ? { approvedAt: now, approved: approval.approved } : {}) });
      }
      const settingsFile = writeEnabled(scope, pluginId, true, this.options);
      this.options.marketplaces.trust(market.name);
      return {
        id: pluginId,
        version,
        installPath,
        settingsFile,
        ...(fetched.gitCommitSha === undefined ? {} : { gitCommitSha: fetched.gitCommitSha }),
        components: describeComponents(loaded.plugin),
        warnings: [...fetched.diagnostics, ...loaded.plugin.diagnostics].filter((diagnostic) => diagnostic.severity !== 'info').map((diagnostic) => `${diagnostic.file}${diagnostic.path ? ` ${diagnostic.path}` : ''}: ${diagnostic.message}`),
      };
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  }

  /** Removes the scope's install (for project and local: this project's); the files go with the last record. */
  uninstall(id: string, options: { scope?: PluginScope; keepData?: boolean } = {}): { id: string; removedFiles: boolean; settingsFile: string } {
    const pluginId = this.requireInstalled(id);
    const here = resolve(this.options.cwd);
    const records = this.installed.get(pluginId);
    const mine = (item: InstalledPluginRecord) => item.scope === 'user' || (item.projectPath !== undefined && resolve(item.projectPath) === here);
    const scope = options.scope ?? records.find(mine)?.scope ?? 'user';
    // Project and local records of other projects are theirs: only this project's record goes.
    const record = records.find((item) => item.scope === scope && mine(item));
    if (record === undefined) {
      const where = records.map((item) => (item.projectPath === undefined ? item.scope : `${item.scope} in ${item.projectPath}`)).join(', ');
      throw new BundlePluginError('plugin_not_installed', `${pluginId} is not installed in the ${scope} scope of ${scope === 'user' ? 'this user' : here} (it is in: ${where}). Pass --scope, or run uninstall from that project.`, { plugin: pluginId });
    }
    const removedFiles = this.drop(pluginId, record, options.keepData === true);
    const settingsFile = writeEnabled(scope, pluginId, undefined, this.options);
    return { id: pluginId, removedFiles, settingsFile };
  }

  /**
   * `enabledPlugins[id] = true` in the scope's file. Hooks and MCP servers that were never
   * approved for this plugin are listed and need `--yes` or the approve callback first.
   */
  async enable(id: string, options: InstallOptions = {}): Promise<{ id: string; settingsFile: string }> {
    const pluginId = this.requireInstalled(id);
    const records = this.installed.get(pluginId);
    const record = records[0]!;
    const loaded = await this.loader.load(record.installPath, { marketplace: parsePluginId(pluginId)!.marketplace, dataDir: this.options.paths.dataDir(pluginId), ...(record.entry ? { entry: record.entry } : {}) });
    // A copy that does not load runs nothing, so there is nothing to approve (and nothing is stamped).
    if (loaded.ok) {
      const approval = await this.approveCode(loaded.plugin, records, options);
      if (approval.asked) {
        const now = (this.options.now?.() ?? new Date()).toISOString();
        for (const each of records) this.installed.put(pluginId, { ...each, approvedAt: now, approved: approval.approved });
      }
    }
    return { id: pluginId, settingsFile: writeEnabled(options.scope ?? 'user', pluginId, true, this.options) };
  }

  disable(id: string, options: { scope?: PluginScope } = {}): { id: string; settingsFile: string } {
    const pluginId = this.requireInstalled(id);
    return { id: pluginId, settingsFile: writeEnabled(options.scope ?? 'user', pluginId, false, this.options) };
  }

  list(): InstalledPluginRow[] {
    const enabled = readPluginSettings(this.options).enabledPlugins;
    return Object.entries(this.installed.all())
      .filter(([, records]) => Array.isArray(records) && records.length > 0)
      .map(([id, records]) => ({
        id,
        version: records[0]!.version,
        scopes: records.map((record) => record.scope),
        enabled: enabled[id] === true,
        installPath: records[0]!.installPath,
      }))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * Uninstalls every record of every plugin from `marketplace` (used by `marketplace remove`),
   * other projects' included; only this project's and the user's settings files are edited.
   */
  uninstallMarketplace(marketplace: string): string[] {
    const removed: string[] = [];
    const here = resolve(this.options.cwd);
    for (const [id, records] of Object.entries(this.installed.all())) {
      if (parsePluginId(id)?.marketplace !== marketplace) continue;
      for (const record of records) {
        this.drop(id, record, false);
        if (record.scope === 'user' || (record.projectPath !== undefined && resolve(record.projectPath) === here)) writeEnabled(record.scope, id, undefined, this.options);
      }
      removed.push(id);
    }
    return removed;
  }

  records(id: string): InstalledPluginRecord[] {
    return this.installed.get(id);
  }

  /** Removes one record; with the last one, the cached copy (and the data unless kept) goes too. */
  private drop(pluginId: string, record: InstalledPluginRecord, keepData: boolean): boolean {
    const left = this.installed.remove(pluginId, record.scope, record.projectPath);
    if (left.length > 0) return false;
    const { name, marketplace } = parsePluginId(pluginId)!;
    rmSync(this.options.paths.cacheDir(marketplace, name), { recursive: true, force: true });
    if (!keepData) rmSync(this.options.paths.dataDir(pluginId), { recursive: true, force: true });
    return true;
  }

  private requireInstalled(id: string): string {
    checkId(id);
    if (this.installed.get(id).length === 0) {
      const known = Object.keys(this.installed.all());
      throw new BundlePluginError('plugin_not_installed', `${id} is not installed${known.length ? ` (installed: ${known.join(', ')})` : ''}. Install it with \`plugin install ${id}\`.`, { plugin: id });
    }
    return id;
  }

  /**
   * Hooks and MCP servers run code, so each one is approved before it can run. `approved` on the
   * records says which ones were; only lines not among them are asked about, which is how an
   * update that adds a hook asks again (as Claude Code does). Returns the lines now approved and
   * whether the person was asked (or passed `--yes`) for any.
   */
  private async approveCode(plugin: LoadedBundlePlugin, records: readonly InstalledPluginRecord[], trust: TrustOptions): Promise<{ approved: string[]; asked: boolean }> {
    const details = codeDetails(plugin);
    const before = new Set(records.flatMap((record) => (Array.isArray(record.approved) ? record.approved : [])));
    const fresh = details.filter((line) => !before.has(line));
    if (fresh.length === 0) return { approved: details, asked: false };
    await requireApproval(trust, { kind: 'plugin', name: plugin.id, details: fresh.map(shorten) }, 'plugin_approval_required');
    return { approved: details, asked: true };
  }
}

/**
 * One line per hook handler and MCP server, in full, with the install directory written as
 * `${CLAUDE_PLUGIN_ROOT}` so that the same plugin gives the same lines wherever it is staged.
 */
export function codeDetails(plugin: LoadedBundlePlugin): string[] {
  const portable = (text: string) => text.split(plugin.root).join('${CLAUDE_PLUGIN_ROOT}');
  const lines = [
    ...plugin.hooks.flatMap(({ config }) =>
      Object.entries(config).flatMap(([event, groups]) =>
        (groups ?? []).flatMap((group) => group.hooks.map((handler) => `hook ${event}${group.matcher ? ` [${group.matcher}]` : ''}: ${handlerText(handler)}`)),
      ),
    ),
    ...plugin.mcpServers.map((server) => {
      const spec = server.spec;
      // What the server is given goes with it: an update that starts sending an env secret or
      // a header to an approved server is new code to approve.
      const given = spec.type === 'stdio' ? withGiven({ env: spec.env }) : withGiven({ headers: spec.headers, headersHelper: spec.headersHelper });
      return `MCP server ${server.name}: ${spec.type === 'stdio' ? [spec.command, ...spec.args].join(' ') : `${spec.type} ${spec.url}`}${given}`;
    }),
  ];
  return [...new Set(lines.map(portable))];
}

function handlerText(handler: { type: string; command?: string; url?: string; prompt?: string; headers?: Record<string, string>; allowedEnvVars?: string[] }): string {
  // An HTTP hook's headers and the variables it may read into them are part of what is approved.
  return `${handler.type} ${handler.command ?? handler.url ?? handler.prompt ?? ''}${withGiven({ headers: handler.headers, allowedEnvVars: handler.allowedEnvVars })}`;
}

/** ` {…}` with the fields that are set and not empty, keys sorted (the same declaration gives the same line), or ''. */
function withGiven(fields: Record<string, unknown>): string {
  const sorted = (value: unknown): unknown =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, (value as Record<string, unknown>)[key]])) : value;
  const kept = Object.keys(fields)
    .sort()
    .filter((key) => {
      const value = fields[key];
      return value !== undefined && !(typeof value === 'object' && value !== null && Object.keys(value).length === 0);
    });
  return kept.length === 0 ? '' : ` ${JSON.stringify(Object.fromEntries(kept.map((key) => [key, sorted(fields[key])])))}`;
}

/** The request shows each line up to 200 characters; the record keeps it whole. */
function shorten(line: string): string {
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function checkId(id: string): { name: string; marketplace: string } {
  const parsed = parsePluginId(id);
  if (parsed === undefined) throw new BundlePluginError('plugin_id_invalid', `"${id}" is not a plugin id; write name@marketplace (for example commit-commands@claude-plugins-official).`, { plugin: id });
  return parsed;
}

function findEntry(market: ResolvedMarketplace, wanted: string): MarketplaceEntry {
  const renamed = market.marketplace.renames?.[wanted];
  const name = typeof renamed === 'string' ? renamed : wanted;
  const entry = market.marketplace.plugins.find((item) => item.name === name);
  if (entry !== undefined) return entry;
  const close = market.marketplace.plugins.map((item) => item.name).filter((item) => item.includes(wanted) || wanted.includes(item)).slice(0, 5);
  throw new BundlePluginError(
    'plugin_not_found',
    `Marketplace ${market.name} has no plugin "${wanted}"${renamed === null ? ' (it was removed from the catalogue)' : ''}.${close.length ? ` Did you mean ${close.join(', ')}?` : ''} Run \`plugin marketplace update ${market.name}\` if it was added recently.`,
    { plugin: wanted, marketplace: market.name },
  );
}

/** The entry as kept in `installed_plugins.json`: no absolute marketplace path. */
function portableEntry(entry: MarketplaceEntry): MarketplaceEntry {
  if (entry.source.source !== 'relative') return entry;
  return { ...entry, source: { source: 'relative', path: entry.source.path, resolvedPath: entry.source.path } };
}

/** A version as one folder name: `.`, `..` and other leading-dot versions get a `_` in front. */
export function sanitizeVersion(version: string): string {
  const safe = version.replace(/[^A-Za-z0-9._+-]/g, '-') || 'unknown';
  return isPlainSegment(safe) ? safe : `_${safe}`;
}

/** Moves `staged` to `target` with renames; on failure the old `target` is put back. */
function swapIn(staged: string, target: string): void {
  mkdirSync(dirname(target), { recursive: true });
  const old = `${target}.old-${randomUUID()}`;
  const hadOld = existsSync(target);
  if (hadOld) renameSync(target, old);
  try {
    renameSync(staged, target);
  } catch (error) {
    if (hadOld) renameSync(old, target);
    throw new BundlePluginError('plugin_fetch_failed', `Could not move the new copy into ${target}: ${(error as Error).message}. The previous version is unchanged.`, { path: target }, error);
  }
  if (hadOld) rmSync(old, { recursive: true, force: true });
}

export function describeComponents(plugin: LoadedBundlePlugin): string[] {
  const names = (items: readonly { qualifiedName?: string; name: string }[]) => items.map((item) => item.qualifiedName ?? item.name).join(', ');
  const lines: string[] = [];
  if (plugin.commands.length) lines.push(`commands: ${names(plugin.commands)}`);
  if (plugin.skills.length) lines.push(`skills: ${names(plugin.skills)}`);
  if (plugin.agents.length) lines.push(`agents: ${plugin.agents.map((agent) => agent.name).join(', ')}`);
  const events = [...new Set(plugin.hooks.flatMap(({ config }) => Object.keys(config)))];
  if (events.length) lines.push(`hooks: ${events.join(', ')}`);
  if (plugin.mcpServers.length) lines.push(`MCP servers: ${plugin.mcpServers.map((server) => server.name).join(', ')}`);
  if (plugin.lspServers.length) lines.push(`LSP servers (not started): ${plugin.lspServers.join(', ')}`);
  if (plugin.outputStyles.length) lines.push(`output styles: ${plugin.outputStyles.map((style) => style.name).join(', ')}`);
  return lines;
}
