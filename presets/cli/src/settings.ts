import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describeError, parsePermissionMode, PERMISSION_MODES, type Diagnostic, type PermissionMode } from '@tessera/contracts';
import { loadConfig, mergeSettings, resolveProvider, type LoadedConfig, type SettingsLayer } from '@tessera/plugin-config/settings';
import { CliUsageError, type CliFlags } from './args.js';
import type { CliPermissionRules } from './preset.js';
import type { ProviderSettings } from './provider-selection.js';

/** What the CLI takes from settings and flags, merged, before anything is composed. */
export interface CliSettings {
  cwd: string;
  loaded: LoadedConfig;
  /** The `--settings` layer as a file (inline JSON is written to a private temp file). */
  settingsFile?: string;
  permissions: CliPermissionRules;
  permissionMode?: PermissionMode;
  hookFiles: string[];
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
  let settingsFile: string | undefined;
  if (flags.settings !== undefined) {
    const value = flags.settings.trim();
    if (value.startsWith('{')) {
      const dir = mkdtempSync(join(tmpdir(), 'tessera-settings-'));
      settingsFile = join(dir, 'settings-flag.json');
      writeFileSync(settingsFile, value, { mode: 0o600 });
    } else settingsFile = resolve(cwd, value);
  }
  const loaded = loadConfig({ cwd, home, env, ...(settingsFile === undefined ? {} : { settingsFile }) });
  const flagProblems = loaded.diagnostics.filter((diagnostic) => diagnostic.severity === 'error' && settingsFile !== undefined && diagnostic.file === settingsFile);
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
  // `--permission-mode` was checked with the other flags.
  const mode = flags.dangerouslySkipPermissions ? 'bypassPermissions' : (parsePermissionMode(flags.permissionMode) ?? settingsMode(loaded.layers, warnings));
  const tools = flags.tools === undefined ? undefined : flags.tools.includes('default') ? undefined : flags.tools.filter((name) => name !== '');
  return {
    cwd,
    loaded,
    ...(settingsFile === undefined ? {} : { settingsFile }),
    permissions: {
      allow: [...toolList(permissions.allow as string[] | undefined), ...flags.allowedTools],
      ask: toolList(permissions.ask as string[] | undefined),
      deny: [...toolList(permissions.deny as string[] | undefined), ...flags.disallowedTools],
      additionalDirectories: [...toolList(permissions.additionalDirectories as string[] | undefined), ...flags.addDir.map((dir) => resolve(cwd, dir))],
    },
    ...(mode === undefined ? {} : { permissionMode: mode as PermissionMode }),
    hookFiles: loaded.layers.filter((layer) => layer.exists && !layer.failed && layer.settings?.hooks !== undefined).map((layer) => layer.file),
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
