import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Diagnostic, ParseResult } from '@tessera/contracts';
import { parseMcpServers, readMcpConfig, type McpServerConfig } from './mcp-config.js';
import { pluginNameDiagnostics } from './name-rules.js';
import { KNOWN_MANIFEST_KEYS, pluginManifestSchema, type PluginManifest } from './plugin-manifest-schema.js';
import type { PluginVariables } from './plugin-variables.js';
import { parseJsonText, readTextFile } from './read-text.js';
import { zodDiagnostics } from './zod-diagnostics.js';

/** Where a plugin's hooks come from; the hooks runner parses them (`readHooksFile`). */
export type PluginHooksSource =
  | { kind: 'file'; file: string }
  | { kind: 'inline'; file: string; value: Record<string, unknown> };

export interface PluginComponents {
  /** Absolute SKILL.md paths. */
  skills: string[];
  /** Absolute command `.md` paths. */
  commands: string[];
  /** Absolute agent `.md` paths. */
  agents: string[];
  /** Hook files (de-duplicated by resolved path) and inline hook maps. */
  hooks: PluginHooksSource[];
  /** MCP servers from `.mcp.json` and the manifest, `${CLAUDE_PLUGIN_ROOT}` substituted. */
  mcpServers: Record<string, McpServerConfig>;
}

/** A bundle plugin directory: its optional manifest and discovered components. */
export interface PluginLayout {
  root: string;
  /** Manifest `name`, else the directory name. */
  name: string;
  manifest?: PluginManifest;
  manifestFile?: string;
  components: PluginComponents;
}

export interface ReadPluginOptions extends Omit<PluginVariables, 'pluginRoot'> {}

/**
 * Reads `<pluginDir>/.claude-plugin/plugin.json` (optional) and discovers components in the
 * default layout. Manifest `skills` adds to `skills/`; `commands` and `agents` replace their
 * defaults; `hooks` and `mcpServers` add files or inline maps. Paths must stay inside the
 * plugin. Never throws.
 */
export function readPluginManifest(pluginDir: string, options: ReadPluginOptions = {}): ParseResult<PluginLayout> {
  const root = resolve(pluginDir);
  const variables: PluginVariables = { ...options, pluginRoot: root };
  const diagnostics: Diagnostic[] = [];
  const layout: PluginLayout = {
    root,
    name: basename(root),
    components: { skills: [], commands: [], agents: [], hooks: [], mcpServers: {} },
  };
  const manifestFile = join(root, '.claude-plugin', 'plugin.json');
  let manifest: PluginManifest | undefined;
  if (existsSync(manifestFile)) {
    layout.manifestFile = manifestFile;
    manifest = readManifestFile(manifestFile, diagnostics);
    if (manifest) {
      layout.manifest = manifest;
      layout.name = manifest.name;
    }
  }
  const paths = (value: string | string[] | undefined, key: string): string[] =>
    toList(value).flatMap((entry, index) => {
      const resolved = insidePlugin(root, entry, manifestFile, `${key}${Array.isArray(value) ? `[${index}]` : ''}`, diagnostics);
      return resolved === undefined ? [] : [resolved];
    });

  const { components } = layout;
  const skillDirs = [join(root, 'skills'), ...paths(manifest?.skills, 'skills')];
  components.skills = unique(skillDirs.flatMap(findSkills));
  if (components.skills.length === 0 && manifest?.skills === undefined && existsSync(join(root, 'SKILL.md'))) {
    components.skills = [join(root, 'SKILL.md')];
  }
  const commandDirs = manifest?.commands !== undefined ? paths(manifest.commands, 'commands') : [join(root, 'commands')];
  components.commands = unique(commandDirs.flatMap((entry) => findMarkdown(entry)));
  const agentDirs = manifest?.agents !== undefined ? paths(manifest.agents, 'agents') : [join(root, 'agents')];
  components.agents = unique(agentDirs.flatMap((entry) => findMarkdown(entry)));

  collectHooks(root, manifest, manifestFile, diagnostics, components, paths);
  collectMcpServers(root, manifest, manifestFile, diagnostics, components, paths, variables);
  return { value: layout, diagnostics };
}

function readManifestFile(file: string, diagnostics: Diagnostic[]): PluginManifest | undefined {
  const text = readTextFile(file);
  if (!text.ok) return void diagnostics.push(text.diagnostic);
  const json = parseJsonText(text.value, file);
  if (!json.ok) return void diagnostics.push(json.diagnostic);
  const parsed = pluginManifestSchema.safeParse(json.value);
  if (!parsed.success) {
    diagnostics.push(...zodDiagnostics(parsed.error, file, '', 'plugin manifest field'));
    return undefined;
  }
  diagnostics.push(...pluginNameDiagnostics(parsed.data.name, file, 'name'));
  for (const key of Object.keys(parsed.data)) {
    if (!KNOWN_MANIFEST_KEYS.has(key)) diagnostics.push({ severity: 'warning', file, path: key, message: `Unknown plugin.json key \`${key}\`; it is kept in the manifest and otherwise ignored.` });
  }
  return parsed.data;
}

function collectHooks(
  root: string,
  manifest: PluginManifest | undefined,
  manifestFile: string,
  diagnostics: Diagnostic[],
  components: PluginComponents,
  paths: (value: string | string[] | undefined, key: string) => string[],
): void {
  const seen = new Set<string>();
  const addFile = (file: string, declared: boolean) => {
    if (seen.has(file)) {
      if (declared) diagnostics.push({ severity: 'warning', file: manifestFile, path: 'hooks', message: `\`hooks\` names ${relative(root, file)}, which loads automatically; the duplicate is ignored. List only additional hook files.` });
      return;
    }
    seen.add(file);
    components.hooks.push({ kind: 'file', file });
  };
  const defaultFile = join(root, 'hooks', 'hooks.json');
  if (existsSync(defaultFile)) addFile(defaultFile, false);
  const declared = manifest?.hooks;
  if (declared === undefined) return;
  const entries = Array.isArray(declared) ? declared : [declared];
  entries.forEach((entry, index) => {
    if (typeof entry === 'string') {
      for (const file of paths(entry, Array.isArray(declared) ? `hooks[${index}]` : 'hooks')) addFile(file, true);
    } else components.hooks.push({ kind: 'inline', file: manifestFile, value: entry });
  });
}

function collectMcpServers(
  root: string,
  manifest: PluginManifest | undefined,
  manifestFile: string,
  diagnostics: Diagnostic[],
  components: PluginComponents,
  paths: (value: string | string[] | undefined, key: string) => string[],
  variables: PluginVariables,
): void {
  const files = new Set<string>();
  const defaultFile = join(root, '.mcp.json');
  if (existsSync(defaultFile)) files.add(defaultFile);
  const declared = manifest?.mcpServers;
  const entries = declared === undefined ? [] : Array.isArray(declared) ? declared : [declared];
  for (const entry of entries) {
    if (typeof entry === 'string') for (const file of paths(entry, 'mcpServers')) files.add(file);
  }
  for (const file of files) {
    const result = readMcpConfig(file, variables);
    diagnostics.push(...result.diagnostics);
    Object.assign(components.mcpServers, result.value.servers);
  }
  for (const entry of entries) {
    if (typeof entry === 'string') continue;
    const inline = 'mcpServers' in entry ? entry.mcpServers : entry;
    const result = parseMcpServers(inline, manifestFile, 'mcpServers', variables);
    diagnostics.push(...result.diagnostics);
    Object.assign(components.mcpServers, result.servers);
  }
}

/** Resolves a manifest path; absolute paths and `..` escapes are errors (they break on install). */
function insidePlugin(root: string, entry: string, file: string, path: string, diagnostics: Diagnostic[]): string | undefined {
  if (isAbsolute(entry)) {
    diagnostics.push({ severity: 'error', file, path, message: `Path ${JSON.stringify(entry)} is absolute; use a \`./\`-relative path inside the plugin.` });
    return undefined;
  }
  const resolved = resolve(root, entry);
  if (resolved !== root && !resolved.startsWith(root + sep)) {
    diagnostics.push({ severity: 'error', file, path, message: `Path ${JSON.stringify(entry)} escapes the plugin directory; only the plugin directory is installed.` });
    return undefined;
  }
  if (!entry.startsWith('./') && entry !== '.') {
    diagnostics.push({ severity: 'warning', file, path, message: `Path ${JSON.stringify(entry)} should start with \`./\`.` });
  }
  return resolved;
}

function toList(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `<dir>/SKILL.md` itself, or every `<dir>/<name>/SKILL.md`. */
export function findSkills(dir: string): string[] {
  if (!isDirectory(dir)) return [];
  if (existsSync(join(dir, 'SKILL.md'))) return [join(dir, 'SKILL.md')];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'SKILL.md')))
    .map((entry) => join(dir, entry.name, 'SKILL.md'))
    .sort();
}

/** A `.md` file itself, or every `.md` below a directory (recursively, sorted). */
export function findMarkdown(path: string): string[] {
  if (!isDirectory(path)) return path.endsWith('.md') && existsSync(path) ? [path] : [];
  const files: string[] = [];
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) files.push(...findMarkdown(child));
    else if (entry.isFile() && entry.name.endsWith('.md')) files.push(child);
  }
  return files.sort();
}
