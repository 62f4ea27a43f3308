import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describeError, parsePermissionMode, PERMISSION_MODES, SETTING_SOURCES, type Diagnostic, type HooksConfig, type HooksSource, type PermissionMode, type SettingSource } from '@tessera/contracts';
import { loadConfig, mergeSettings, resolveProvider, type LoadedConfig, type SettingsLayer } from '@tessera/plugin-config/settings';
import { checkPermissionMode, CliUsageError, type CliFlags } from './args.js';
import type { CliPermissionRules } from './preset.js';
import type { ProviderSettings } from './provider-selection.js';

/** What the CLI takes from settings and flags, merged, before anything is composed. */
export interface CliSettings {
  cwd: string;
  /** The layers read (only the `--setting-sources` ones), merged; inline `--settings` JSON is the layer named `--settings`. */
  loaded: LoadedConfig;
  /** `--settings <file>`; inline JSON has no file (it is in `loaded`). */
  settingsFile?: string;
  /** `--setting-sources`: the only file scopes read; undefined: all of them. */
  settingSources?: readonly SettingSource[];
  permissions: CliPermissionRules;
  permissionMode?: PermissionMode;
  hookFiles: string[];
  /** Hooks of inline `--settings` JSON, which has no file for the hooks plugin to read. */
  hookConfigs: Array<{ config: HooksConfig; source: HooksSource }>;
  tools?: string[];
  /** `language` from the settings: the language the model answers in. */
  language?: string;
  providerSettings: ProviderSettings;
  /** Located problems that did not stop the run, one line each. */
  warnings: string[];
}

/** `file:line:column: message (path)` */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const where = [diagnostic.file, diagnostic.line, diagnostic.column].filter((part) => part !== undefined).join(':');
  return `${diagnostic.severity === 'error' ? 'Settings error' : 'Settings warning'}: ${where}${diagnostic.path ? ` (${diagnostic.path})` : ''}: ${diagnostic.message}`;
}

/**
 * Loads the settings layers and folds the flags in. A broken `--settings` file, or rules that
 * cannot be read safely, stop the run (`CliUsageError`, nothing written); a broken file in
 * another layer is skipped with a located warning, as Claude Code does.
 */
export function loadCliSettings(options: { cwd: string; home: string; env: Readonly<Record<string, string | undefined>>; flags: CliFlags }): CliSettings {
  const { cwd, home, env, flags } = options;
  const sources = flags.settingSources === undefined ? undefined : checkSettingSources(flags.settingSources);
  const inline = flags.settings !== undefined && flags.settings.trim().startsWith('{') ? flags.settings.trim() : undefined;
  const settingsFile = flags.settings === undefined || inline !== undefined ? undefined : resolve(cwd, flags.settings.trim());
  const loaded = inline === undefined ? loadLayers(cwd, home, env, settingsFile, sources) : loadInline(inline, cwd, home, env, sources);
  const flagLayer = flags.settings === undefined ? undefined : loaded.layers.find((layer) => layer.scope === 'cli');
  const flagProblems = loaded.diagnostics.filter((diagnostic) => diagnostic.severity === 'error' && flagLayer !== undefined && diagnostic.file === flagLayer.file);
  if (flagProblems.length > 0) throw new CliUsageError(flagProblems.map(formatDiagnostic).join('\n'));
  // Provider profiles can name a server and the environment variable whose value is sent to it
  // as the key: they are read only from the user's own files and --settings, never from a
  // repository's (which `tessera -p` in a fresh clone would otherwise obey without asking).
  const trusted = loaded.layers.filter((layer) => TRUSTED_SCOPES.has(layer.scope) && layer.settings !== undefined);
  const trustedSettings = mergeSettings(trusted.map((layer) => layer.settings!));
  // `--provider <name>` picks a profile the way `currentProvider` does, with the same checks.
  const named = flags.provider !== undefined && trustedSettings.providers?.[flags.provider] !== undefined;
  const trustedProvider = resolveProvider(named ? { ...trustedSettings, currentProvider: flags.provider } : trustedSettings, trusted, env);
  const warnings = [...loaded.diagnostics.filter((diagnostic) => !PROVIDER_PATH.test(diagnostic.path ?? '')), ...trustedProvider.diagnostics]
    .filter((diagnostic) => diagnostic.severity !== 'info')
    .map(formatDiagnostic);
  for (const layer of loaded.layers) {
    if (TRUSTED_SCOPES.has(layer.scope) || layer.settings === undefined) continue;
    const keys = PROVIDER_KEYS.filter((key) => (layer.settings as Record<string, unknown>)[key] !== undefined);
    if (keys.length > 0) {
      warnings.push(`Settings warning: ${layer.file}: ${keys.join(', ')} ignored: provider profiles are read only from your user settings (~/.tessera/settings.json, ~/.claude/settings.json) or --settings, so a project cannot pick the server your keys are sent to.`);
    }
  }

  const permissions = loaded.config.permissions ?? {};
  const toolList = (list: readonly string[] | undefined) => [...(list ?? [])];
  // Checked again here (parseArgs did): flags an embedder builds are refused with the same message.
  const flagMode = flags.permissionMode === undefined ? undefined : checkPermissionMode(flags.permissionMode);
  const mode = flags.dangerouslySkipPermissions ? 'bypassPermissions' : (flagMode ?? settingsMode(loaded.layers, warnings));
  const tools = flags.tools === undefined ? undefined : flags.tools.includes('default') ? undefined : flags.tools.filter((name) => name !== '');
  return {
    cwd,
    loaded,
    ...(settingsFile === undefined ? {} : { settingsFile }),
    ...(sources === undefined ? {} : { settingSources: sources }),
    permissions: {
      allow: [...toolList(permissions.allow as string[] | undefined), ...flags.allowedTools],
      ask: toolList(permissions.ask as string[] | undefined),
      deny: [...toolList(permissions.deny as string[] | undefined), ...flags.disallowedTools],
      additionalDirectories: [...toolList(permissions.additionalDirectories as string[] | undefined), ...flags.addDir.map((dir) => resolve(cwd, dir))],
    },
    ...(mode === undefined ? {} : { permissionMode: mode as PermissionMode }),
    hookFiles: loaded.layers.filter((layer) => layer.exists && !layer.failed && layer.settings?.hooks !== undefined && layer.file !== INLINE_SETTINGS).map((layer) => layer.file),
    hookConfigs: loaded.layers.flatMap((layer) => (layer.file === INLINE_SETTINGS && !layer.failed && layer.settings?.hooks !== undefined ? [{ config: layer.settings.hooks as HooksConfig, source: { file: INLINE_SETTINGS } }] : [])),
    ...(tools === undefined ? {} : { tools }),
    ...(typeof (loaded.config as { language?: unknown }).language === 'string' && (loaded.config as { language: string }).language.trim() !== '' ? { language: (loaded.config as { language: string }).language.trim() } : {}),
    providerSettings: {
      ...(typeof trustedSettings.currentProvider === 'string' ? { currentProvider: trustedSettings.currentProvider } : {}),
      ...(trustedSettings.providers ? { providers: trustedSettings.providers as ProviderSettings['providers'] } : {}),
      ...(trustedProvider.provider ? { resolved: trustedProvider.provider } : {}),
    },
    warnings,
  };
}

/** What inline `--settings` JSON is called in messages and layers (it is never left on disk). */
const INLINE_SETTINGS = '--settings';

/** `--setting-sources` names, checked (a `CliUsageError` naming the unknown ones), without repeats. */
export function checkSettingSources(names: readonly string[]): SettingSource[] {
  const unknown = names.filter((name) => !(SETTING_SOURCES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new CliUsageError(`error: option '--setting-sources <sources>' argument '${unknown.join(',')}' is invalid. Use a comma-separated list of ${SETTING_SOURCES.join(', ')} ("" for none).`);
  }
  return [...new Set(names as SettingSource[])];
}

/**
 * The settings layers, as `loadConfig` reads them; with `sources`, only the files of those
 * scopes are read (the `--settings` layer always is), so an SDK host's isolation (`""`) keeps
 * a repository's permissions, hooks and MCP approvals out.
 */
function loadLayers(cwd: string, home: string, env: Readonly<Record<string, string | undefined>>, settingsFile: string | undefined, sources: readonly SettingSource[] | undefined): LoadedConfig {
  return loadConfig({ cwd, home, env, ...(settingsFile === undefined ? {} : { settingsFile }), ...(sources === undefined ? {} : { scopes: [...sources, 'cli'] }) });
}

/**
 * Inline `--settings` JSON: read through a private temp file that is removed before this
 * returns (the JSON may hold keys), and named `--settings` in the layers and messages.
 */
function loadInline(json: string, cwd: string, home: string, env: Readonly<Record<string, string | undefined>>, sources: readonly SettingSource[] | undefined): LoadedConfig {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-settings-'));
  const file = join(dir, 'settings-flag.json');
  try {
    writeFileSync(file, json, { mode: 0o600 });
    const loaded = loadLayers(cwd, home, env, file, sources);
    return {
      ...loaded,
      layers: loaded.layers.map((layer) => (layer.file === file ? { ...layer, file: INLINE_SETTINGS } : layer)),
      diagnostics: loaded.diagnostics.map((diagnostic) => (diagnostic.file === file ? { ...diagnostic, file: INLINE_SETTINGS } : diagnostic)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const TRUSTED_SCOPES: ReadonlySet<SettingsLayer['scope']> = new Set(['user', 'cli']);
const PROVIDER_KEYS = ['providers', 'currentProvider', 'provider'] as const;
const PROVIDER_PATH = /^(providers|currentProvider|provider)\b/;

/**
 * `permissions.defaultMode` of the highest layer that sets it: `manual` is `default`; an unknown
 * mode is ignored with a warning; `bypassPermissions` is taken only from the user's own files or
 * --settings (a repository cannot switch approvals off for whoever runs it).
 */
function settingsMode(layers: readonly SettingsLayer[], warnings: string[]): PermissionMode | undefined {
  for (let index = layers.length - 1; index >= 0; index -= 1) {
    const layer = layers[index]!;
    const raw = (layer.settings?.permissions as { defaultMode?: unknown } | undefined)?.defaultMode;
    if (raw === undefined) continue;
    const mode = parsePermissionMode(raw);
    if (mode === undefined) {
      warnings.push(`Settings warning: ${layer.file} (permissions.defaultMode): ${JSON.stringify(raw)} is not a mode Tessera has (${PERMISSION_MODES.join(', ')}); it is ignored.`);
      continue;
    }
    if (mode === 'bypassPermissions' && !TRUSTED_SCOPES.has(layer.scope)) {
      warnings.push(`Settings warning: ${layer.file} (permissions.defaultMode): bypassPermissions is taken only from your user settings or --settings; pass --permission-mode bypassPermissions to use it here.`);
      continue;
    }
    return mode;
  }
  return undefined;
}

/**
 * The run's working directory (`--cwd` applied, checked) and its settings, warnings printed; or
 * the exit code after a message on stderr naming the folder or the settings problem.
 */
export function loadRunSettings(flags: CliFlags, io: { cwd: string; home: string; env: Readonly<Record<string, string | undefined>>; stderr(text: string): void }): { cwd: string; settings: CliSettings } | { exitCode: number } {
  const cwd = resolve(io.cwd, flags.cwd ?? '.');
  let isFolder = false;
  try {
    isFolder = statSync(cwd).isDirectory();
  } catch {
    // Missing: reported below.
  }
  if (!isFolder) {
    io.stderr(`Error: the working directory ${cwd} does not exist or is not a directory${flags.cwd === undefined ? '' : ' (--cwd)'}.\n`);
    return { exitCode: 1 };
  }
  try {
    const settings = loadCliSettings({ cwd, home: io.home, env: io.env, flags });
    for (const warning of settings.warnings) io.stderr(`${warning}\n`);
    return { cwd, settings };
  } catch (error) {
    io.stderr(`${describeError(error)}\n`);
    return { exitCode: 1 };
  }
}
