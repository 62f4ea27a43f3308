import { existsSync, mkdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve, sep } from 'node:path';
import type { AgentDefinition, Diagnostic, HookHandlerConfig, HooksConfig, HooksSource, McpServerDeclaration, SkillEntry } from '@tessera/contracts';
import { expandPluginVariables, findMarkdown, findSkills, type MarketplaceEntry, type McpServerConfig, parseFrontmatter, parseHooksConfig, parseJsonText, parseMcpServers, type PluginHooksSource, type PluginLayout, type PluginManifest, type PluginVariables, readAgentDefinition, readCommandFile, readHooksFile, readPluginManifest, readSkillFile, readTextFile } from '@tessera/formats';

/** An output style a plugin ships (`output-styles/*.md`). Listed; applying one is the host's choice. */
export interface PluginOutputStyle {
  name: string;
  description: string;
  file: string;
}

/**
 * A bundle plugin read from its directory (spec: ILoadedBundlePlugin): the manifest and every
 * component, already in the shapes the contribution points take.
 */
export interface LoadedBundlePlugin {
  /** `name@marketplace` (`name@inline` for a directory loaded directly). */
  id: string;
  name: string;
  marketplace: string;
  root: string;
  /** `${CLAUDE_PLUGIN_DATA}`; created when the plugin loads. */
  dataDir: string;
  version?: string;
  description?: string;
  manifest?: PluginManifest;
  /** Legacy `commands/*.md`, as skill entries (`source: plugin:<name>`, `qualifiedName: <name>:<command>`). */
  commands: SkillEntry[];
  /** `skills/<name>/SKILL.md`, as skill entries. */
  skills: SkillEntry[];
  /** Agents, named `<plugin>:<agent>`. */
  agents: AgentDefinition[];
  /** Hook configurations with their file and the plugin root (`CLAUDE_PLUGIN_ROOT` for the hook process). */
  hooks: Array<{ config: HooksConfig; source: HooksSource }>;
  mcpServers: McpServerDeclaration[];
  /** LSP servers by name: listed, not run (Tessera has no LSP client). */
  lspServers: string[];
  outputStyles: PluginOutputStyle[];
  /** Everything found on the way; an `error` names the one file or entry that was skipped. */
  diagnostics: Diagnostic[];
}

export interface LoadPluginOptions {
  /** The marketplace it was installed from; `inline` when loaded from a directory. */
  marketplace?: string;
  /** The marketplace entry: its name wins over the manifest's, and its component fields apply. */
  entry?: MarketplaceEntry;
  /** The marketplace file, for messages about the entry. */
  marketplaceFile?: string;
  /** `${CLAUDE_PLUGIN_DATA}`; default `<root>/.data` is never used in practice — the registry passes one. */
  dataDir: string;
}

/** The result of loading: the plugin, or why it could not be used at all (a broken manifest). */
export type LoadPluginResult = { ok: true; plugin: LoadedBundlePlugin } | { ok: false; error: string; diagnostics: Diagnostic[] };

const COMPONENT_KEYS = ['commands', 'agents', 'skills', 'hooks', 'mcpServers', 'lspServers', 'outputStyles'] as const;
/** Names usable in `plugin:name`: no spaces or colons. */
const QUALIFIABLE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Loads a bundle plugin directory (spec: BundlePluginLoader): `.claude-plugin/plugin.json` when
 * present, else the default layout, plus the marketplace entry's component fields. As lenient
 * as Claude Code: a component that fails to read is reported with its file and skipped; only a
 * manifest Claude Code would refuse fails the whole plugin. Never throws on file content.
 */
export class BundlePluginLoader {
  async load(dir: string, options: LoadPluginOptions): Promise<LoadPluginResult> {
    const root = resolve(dir);
    if (!isDirectory(root)) return { ok: false, error: `${root} is not a directory`, diagnostics: [] };
    mkdirSync(options.dataDir, { recursive: true });
    const variables: PluginVariables = { pluginRoot: root, pluginData: options.dataDir };
    const read = readPluginManifest(root, { pluginData: options.dataDir });
    const layout = read.value;
    const diagnostics = [...read.diagnostics];
    if (layout.manifestFile !== undefined && layout.manifest === undefined) {
      const reason = read.diagnostics.find((diagnostic) => diagnostic.severity === 'error');
      return { ok: false, error: `${layout.manifestFile}: ${reason?.message ?? 'the manifest cannot be read'}`, diagnostics };
    }
    const entry = options.entry;
    const name = entry?.name ?? layout.manifest?.name ?? basename(root);
    const marketplace = options.marketplace ?? 'inline';
    if (entry !== undefined && !entry.strict) {
      const declared = COMPONENT_KEYS.filter((key) => layout.manifest?.[key] !== undefined);
      if (declared.length > 0) {
        const error = `${name} is listed with "strict": false, so its marketplace entry is the whole definition, but its plugin.json also declares ${declared.join(', ')}; remove one of the two.`;
        return { ok: false, error, diagnostics: [...diagnostics, { severity: 'error', file: layout.manifestFile!, message: error }] };
      }
    }
    const plugin: LoadedBundlePlugin = {
      id: `${name}@${marketplace}`,
      name,
      marketplace,
      root,
      dataDir: options.dataDir,
      commands: [],
      skills: [],
      agents: [],
      hooks: [],
      mcpServers: [],
      lspServers: [],
      outputStyles: [],
      diagnostics,
    };
    const version = layout.manifest?.version ?? entry?.version;
    if (version !== undefined) plugin.version = version;
    const description = layout.manifest?.description ?? entry?.description;
    if (description !== undefined) plugin.description = description;
    if (layout.manifest !== undefined) plugin.manifest = layout.manifest;

    const overrides = entry === undefined ? undefined : new EntryComponents(root, entry, options.marketplaceFile ?? root, diagnostics);
    this.readSkills(plugin, layout, overrides);
    this.readCommands(plugin, layout, overrides);
    this.readAgents(plugin, layout, overrides, variables);
    await this.readHooks(plugin, layout, overrides, variables);
    this.readMcpServers(plugin, layout, overrides, variables);
    this.readLspServers(plugin, layout, entry);
    this.readOutputStyles(plugin, layout);
    return { ok: true, plugin };
  }

  private readSkills(plugin: LoadedBundlePlugin, layout: PluginLayout, overrides: EntryComponents | undefined): void {
    const files = unique([...layout.components.skills, ...(overrides?.paths('skills').flatMap(findSkills) ?? [])]);
    for (const file of files) {
      const { value, diagnostics } = readSkillFile(file);
      plugin.diagnostics.push(...diagnostics);
      if (diagnostics.some((diagnostic) => diagnostic.severity === 'error')) continue;
      // A root SKILL.md makes a single-skill plugin named after the plugin, not its (versioned) folder.
      const id = dirname(file) === plugin.root ? plugin.name : value.id;
      const label = value.name !== value.id && QUALIFIABLE.test(value.name) ? value.name : id;
      plugin.skills.push({ ...entryOf(plugin.name, id, label, value.description, file, value.argumentHint, value.userInvocable, !value.disableModelInvocation), pluginRoot: plugin.root, pluginData: plugin.dataDir });
    }
  }

  private readCommands(plugin: LoadedBundlePlugin, layout: PluginLayout, overrides: EntryComponents | undefined): void {
    const declared = overrides?.paths('commands');
    const defaults = overrides?.replacesDefaults && declared !== undefined && declared.length > 0 ? [] : layout.components.commands;
    const files = unique([...defaults, ...(declared?.flatMap((path) => findMarkdown(path)) ?? [])]);
    for (const file of files) {
      const { value, diagnostics } = readCommandFile(file);
      plugin.diagnostics.push(...diagnostics);
      if (diagnostics.some((diagnostic) => diagnostic.severity === 'error')) continue;
      plugin.commands.push({ ...entryOf(plugin.name, value.name, value.name, value.description, file, value.argumentHint, value.userInvocable, !value.disableModelInvocation), pluginRoot: plugin.root, pluginData: plugin.dataDir });
    }
  }

  private readAgents(plugin: LoadedBundlePlugin, layout: PluginLayout, overrides: EntryComponents | undefined, variables: PluginVariables): void {
    const declared = overrides?.paths('agents');
    const defaults = overrides?.replacesDefaults && declared !== undefined && declared.length > 0 ? [] : layout.components.agents;
    const files = unique([...defaults, ...(declared?.flatMap((path) => findMarkdown(path)) ?? [])]);
    for (const file of files) {
      const { value, diagnostics } = readAgentDefinition(file, { source: `plugin:${plugin.name}` });
      plugin.diagnostics.push(...diagnostics);
      if (diagnostics.some((diagnostic) => diagnostic.severity === 'error')) continue;
      const { extra: _extra, permissionMode, ...definition } = value;
      if (permissionMode !== undefined) {
        plugin.diagnostics.push({ severity: 'info', file, path: 'permissionMode', message: 'Plugin agents cannot set `permissionMode` (Claude Code ignores it too); the session mode applies.' });
      }
      plugin.agents.push({ ...definition, name: `${plugin.name}:${value.name}`, systemPrompt: expandPluginVariables(value.systemPrompt, variables) });
    }
  }

  private async readHooks(plugin: LoadedBundlePlugin, layout: PluginLayout, overrides: EntryComponents | undefined, variables: PluginVariables): Promise<void> {
    const source = (file: string): HooksSource => ({ file, pluginRoot: plugin.root });
    const seen = new Set<string>();
    const fileSources = [...layout.components.hooks, ...(overrides?.hooks() ?? [])];
    for (const hooks of fileSources) {
      if (hooks.kind === 'file') {
        if (seen.has(hooks.file)) continue;
        seen.add(hooks.file);
        const parsed = await readHooksFile(hooks.file, { pluginRoot: plugin.root });
        plugin.diagnostics.push(...parsed.diagnostics);
        if (Object.keys(parsed.value).length > 0) plugin.hooks.push({ config: expandHooks(parsed.value, variables), source: source(hooks.file) });
      } else {
        // Inline maps are the bare event map; a `{ "hooks": … }` wrapper is accepted too.
        const value = 'hooks' in hooks.value && typeof hooks.value.hooks === 'object' ? hooks.value.hooks : hooks.value;
        const parsed = parseHooksConfig(value, source(hooks.file));
        plugin.diagnostics.push(...parsed.diagnostics);
        if (Object.keys(parsed.value).length > 0) plugin.hooks.push({ config: expandHooks(parsed.value, variables), source: source(hooks.file) });
      }
    }
  }

  private readMcpServers(plugin: LoadedBundlePlugin, layout: PluginLayout, overrides: EntryComponents | undefined, variables: PluginVariables): void {
    const defaultFile = join(plugin.root, '.mcp.json');
    const file = existsSync(defaultFile) ? defaultFile : (layout.manifestFile ?? defaultFile);
    const servers: Record<string, McpServerConfig> = { ...layout.components.mcpServers, ...(overrides?.mcpServers(variables) ?? {}) };
    for (const [name, spec] of Object.entries(servers)) {
      plugin.mcpServers.push({ name, spec, scope: 'plugin', plugin: plugin.name, file });
    }
  }

  private readLspServers(plugin: LoadedBundlePlugin, layout: PluginLayout, entry: MarketplaceEntry | undefined): void {
    const names = new Set<string>();
    const add = (value: unknown): void => {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) for (const key of Object.keys(value)) names.add(key);
    };
    add(layout.manifest?.lspServers);
    add(entry?.fields.lspServers);
    const lspFile = join(plugin.root, '.lsp.json');
    if (existsSync(lspFile)) {
      const text = readTextFile(lspFile);
      const json = text.ok ? parseJsonText(text.value, lspFile) : undefined;
      if (json?.ok) add(json.value);
    }
    plugin.lspServers = [...names];
    if (plugin.lspServers.length > 0) {
      plugin.diagnostics.push({ severity: 'info', file: layout.manifestFile ?? plugin.root, path: 'lspServers', message: `LSP servers (${plugin.lspServers.join(', ')}) are listed but not started: Tessera has no LSP client yet.` });
    }
  }

  private readOutputStyles(plugin: LoadedBundlePlugin, layout: PluginLayout): void {
    const declared = layout.manifest?.outputStyles;
    const dirs = declared === undefined ? [join(plugin.root, 'output-styles')] : (Array.isArray(declared) ? declared : [declared]).map((path) => resolve(plugin.root, path));
    for (const file of unique(dirs.filter((dir) => dir === plugin.root || dir.startsWith(plugin.root + sep)).flatMap((dir) => findMarkdown(dir)))) {
      const text = readTextFile(file);
      if (!text.ok) {
        plugin.diagnostics.push(text.diagnostic);
        continue;
      }
      const document = parseFrontmatter(text.value, file);
      plugin.diagnostics.push(...document.diagnostics);
      const name = typeof document.data.name === 'string' ? document.data.name : basename(file, extname(file));
      const description = typeof document.data.description === 'string' ? document.data.description : '';
      plugin.outputStyles.push({ name, description, file });
    }
  }
}

/** The component fields of a marketplace entry (`commands`, `hooks`, `mcpServers`…), resolved inside the plugin. */
class EntryComponents {
  /** `strict: false`: the entry is the definition, so its `commands` / `agents` replace the defaults. */
  readonly replacesDefaults: boolean;

  constructor(
    private readonly root: string,
    private readonly entry: MarketplaceEntry,
    private readonly file: string,
    private readonly diagnostics: Diagnostic[],
  ) {
    this.replacesDefaults = !entry.strict;
  }

  paths(key: 'commands' | 'agents' | 'skills'): string[] {
    const value = this.entry.fields[key];
    const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
    return list.flatMap((path) => {
      const resolved = resolve(this.root, path);
      if (isAbsolute(path) || (resolved !== this.root && !resolved.startsWith(this.root + sep))) {
        this.diagnostics.push({ severity: 'error', file: this.file, path: `${this.entry.name}.${key}`, message: `Path ${JSON.stringify(path)} leaves the plugin directory; it is skipped.` });
        return [];
      }
      return [resolved];
    });
  }

  hooks(): PluginHooksSource[] {
    const value = this.entry.fields.hooks;
    const items: unknown[] = value === undefined ? [] : Array.isArray(value) ? value : [value];
    return items.flatMap((item): PluginHooksSource[] => {
      if (typeof item === 'string') return this.inside(item, 'hooks').map((file) => ({ kind: 'file' as const, file }));
      if (item !== null && typeof item === 'object') return [{ kind: 'inline' as const, file: this.file, value: item as Record<string, unknown> }];
      return [];
    });
  }

  mcpServers(variables: PluginVariables): Record<string, McpServerConfig> {
    const value = this.entry.fields.mcpServers;
    if (value === undefined) return {};
    if (typeof value === 'string') return {};
    const inline = typeof value === 'object' && value !== null && 'mcpServers' in value ? (value as { mcpServers: unknown }).mcpServers : value;
    const parsed = parseMcpServers(inline, this.file, `${this.entry.name}.mcpServers`, variables);
    this.diagnostics.push(...parsed.diagnostics);
    return parsed.servers;
  }

  private inside(path: string, key: string): string[] {
    const resolved = resolve(this.root, path);
    if (resolved !== this.root && !resolved.startsWith(this.root + sep)) {
      this.diagnostics.push({ severity: 'error', file: this.file, path: `${this.entry.name}.${key}`, message: `Path ${JSON.stringify(path)} leaves the plugin directory; it is skipped.` });
      return [];
    }
    return [resolved];
  }
}

function entryOf(
  plugin: string,
  id: string,
  label: string,
  description: string,
  file: string,
  argumentHint: string | undefined,
  userInvocable: boolean,
  modelInvocable: boolean,
): SkillEntry {
  return {
    id,
    name: label,
    description,
    source: `plugin:${plugin}`,
    qualifiedName: `${plugin}:${label}`,
    file,
    ...(argumentHint === undefined ? {} : { argumentHint }),
    userInvocable,
    modelInvocable,
  };
}

/** `${CLAUDE_PLUGIN_ROOT}` / `${CLAUDE_PLUGIN_DATA}` substituted in hook commands, URLs and headers. */
function expandHooks(config: HooksConfig, variables: PluginVariables): HooksConfig {
  const expand = (handler: HookHandlerConfig): HookHandlerConfig => {
    if (handler.type === 'command') return { ...handler, command: expandPluginVariables(handler.command, variables) };
    if (handler.type === 'http') {
      const headers = handler.headers === undefined ? undefined : Object.fromEntries(Object.entries(handler.headers).map(([key, text]) => [key, expandPluginVariables(text, variables)]));
      return { ...handler, url: expandPluginVariables(handler.url, variables), ...(headers === undefined ? {} : { headers }) };
    }
    return handler;
  };
  const result: HooksConfig = {};
  for (const [event, groups] of Object.entries(config) as Array<[keyof HooksConfig, NonNullable<HooksConfig[keyof HooksConfig]>]>) {
    result[event] = groups.map((group) => ({ ...group, hooks: group.hooks.map(expand) }));
  }
  return result;
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

