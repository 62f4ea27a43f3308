import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Diagnostic } from '@tessera/contracts';
import { mergeSettings } from './merge-settings.js';
import { resolveProvider, substituteEnv, type ResolvedProvider } from './resolve-provider.js';
import { readSettingsLayer, type LayerScope, type SettingsLayer } from './settings-layer.js';
import type { Settings } from './settings-schema.js';

export interface LoadConfigOptions {
  cwd: string;
  /** Default `os.homedir()`. */
  home?: string;
  /** An explicit `--settings` file: the highest layer. */
  settingsFile?: string;
  /** For `$ENV:NAME`; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Only the files of these scopes are read (the others are not opened, nor listed in `layers`);
   * `'cli'` is the `settingsFile` layer. Claude Code's `--setting-sources user,project` is
   * `['user', 'project', 'cli']`; `[]` reads nothing. Default: every scope.
   */
  scopes?: readonly LayerScope[];
}

export interface LoadedConfig {
  /** All layers merged, `$ENV:` references in provider profiles resolved. */
  config: Settings;
  /** Every file considered, lowest precedence first (missing files have `exists: false`). */
  layers: SettingsLayer[];
  /** The active provider profile, when one is configured and valid. */
  provider?: ResolvedProvider;
  diagnostics: Diagnostic[];
}

/** The spec's six layers, lowest precedence first, then `--settings`. */
export function settingsLayerPaths(cwd: string, home: string, settingsFile?: string): Array<{ file: string; scope: LayerScope }> {
  const paths: Array<{ file: string; scope: LayerScope }> = [
    { file: join(home, '.tessera', 'settings.json'), scope: 'user' },
    { file: join(home, '.claude', 'settings.json'), scope: 'user' },
    { file: join(cwd, '.tessera', 'settings.json'), scope: 'project' },
    { file: join(cwd, '.tessera', 'settings.local.json'), scope: 'local' },
    { file: join(cwd, '.claude', 'settings.json'), scope: 'project' },
    { file: join(cwd, '.claude', 'settings.local.json'), scope: 'local' },
  ];
  if (settingsFile !== undefined) paths.push({ file: resolve(cwd, settingsFile), scope: 'cli' });
  return paths;
}

/**
 * Loads and merges settings. Content problems become located diagnostics (invalid JSON: file,
 * line, column; schema: file and JSON path) and the bad part is ignored — except when a
 * broken layer's deny/ask rules cannot be recovered: then `SettingsPolicyError` is thrown,
 * because continuing would enforce a weaker policy than the files state.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const cwd = resolve(options.cwd);
  const home = resolve(options.home ?? homedir());
  const env = options.env ?? process.env;
  const diagnostics: Diagnostic[] = [];
  const layers: SettingsLayer[] = [];
  const seen = new Set<string>();
  for (const { file, scope } of settingsLayerPaths(cwd, home, options.settingsFile)) {
    if (options.scopes !== undefined && !options.scopes.includes(scope)) continue;
    // cwd === home makes project and user paths coincide; read each file once (as the first
    // scope read that names it).
    if (seen.has(file)) continue;
    seen.add(file);
    const result = readSettingsLayer(file, scope);
    layers.push(result.layer);
    diagnostics.push(...result.diagnostics);
    if (scope === 'cli' && !result.layer.exists) {
      diagnostics.push({ severity: 'error', file, message: `The --settings file ${file} does not exist; check the path.` });
    }
  }
  const config = mergeSettings(layers.flatMap((layer) => (layer.settings ? [layer.settings] : [])));
  const resolved = resolveProvider(config, layers, env);
  diagnostics.push(...resolved.diagnostics);
  substituteProfiles(config, resolved.provider, env);
  const result: LoadedConfig = { config, layers, diagnostics };
  if (resolved.provider) result.provider = resolved.provider;
  return result;
}

/** `$ENV:` in every profile of the merged config; only the active one reports unset variables. */
function substituteProfiles(config: Settings, active: ResolvedProvider | undefined, env: Readonly<Record<string, string | undefined>>): void {
  const ignored: Diagnostic[] = [];
  if (config.providers) {
    for (const [key, profile] of Object.entries(config.providers)) {
      config.providers[key] = active?.key === key ? { ...active.profile } : (substituteEnv(profile, key, '', env, ignored) as typeof profile);
    }
  }
  if (config.provider) {
    config.provider = active?.key === 'provider' ? { ...config.provider, ...active.profile } : (substituteEnv(config.provider, 'provider', '', env, ignored) as typeof config.provider);
  }
}
