import { join, resolve } from 'node:path';
import type { Diagnostic } from '@tessera/contracts';
import { loadConfig } from '@tessera/plugin-config';
import { readJsonObject, updateJsonObject } from './json-file.js';
import type { PluginScope } from './plugin-state.js';

/** What the settings layers say about plugins, merged (local beats project beats user). */
export interface PluginSettings {
  enabledPlugins: Record<string, boolean>;
  /** `extraKnownMarketplaces` (or its alias `additionalMarketplaces`). */
  extraKnownMarketplaces: Record<string, { source: Record<string, unknown> }>;
  diagnostics: Diagnostic[];
}

export interface PluginSettingsOptions {
  home: string;
  cwd: string;
  /** Overrides the file written for a scope (see `settingsFileFor`). */
  files?: Partial<Record<PluginScope, string>>;
  /**
   * Only the settings files of these scopes are read for `enabledPlugins` and
   * `extraKnownMarketplaces` (Claude Code's `--setting-sources`; `[]`: none). Default: all.
   */
  settingSources?: readonly PluginScope[];
}

/**
 * The file `--scope` writes `enabledPlugins` to. User: `~/.tessera/settings.json` (the Tessera
 * user layer). Project and local: `.claude/settings.json` and `.claude/settings.local.json`, the
 * files Claude Code writes, so a team's shared settings keep working in both tools. All of
 * them are layers the config plugin reads.
 */
export function settingsFileFor(scope: PluginScope, options: PluginSettingsOptions): string {
  const override = options.files?.[scope];
  if (override !== undefined) return resolve(options.cwd, override);
  if (scope === 'user') return join(options.home, '.tessera', 'settings.json');
  return join(options.cwd, '.claude', scope === 'project' ? 'settings.json' : 'settings.local.json');
}

/**
 * Reads the six settings layers through the config plugin's loader (with `settingSources`,
 * only those scopes' files). Never throws.
 */
export function readPluginSettings(options: PluginSettingsOptions): PluginSettings {
  const sources = options.settingSources;
  try {
    const { config, diagnostics, layers } = loadConfig({ cwd: options.cwd, home: options.home, ...(sources === undefined ? {} : { scopes: sources }) });
    const raw = config as Record<string, unknown>;
    const extra = (raw.extraKnownMarketplaces ?? raw.additionalMarketplaces ?? {}) as PluginSettings['extraKnownMarketplaces'];
    const enabled: Record<string, boolean> = { ...(config.enabledPlugins ?? {}) };
    // An override file outside the six layers still counts, above the layer it stands for.
    for (const scope of ['user', 'project', 'local'] as const) {
      const file = options.files?.[scope];
      if (sources !== undefined && !sources.includes(scope)) continue;
      if (file === undefined || layers.some((layer) => layer.file === resolve(options.cwd, file))) continue;
      Object.assign(enabled, readEnabled(resolve(options.cwd, file)));
    }
    const relevant = diagnostics.filter((diagnostic) => diagnostic.path?.startsWith('enabledPlugins') || diagnostic.path?.startsWith('extraKnownMarketplaces'));
    return { enabledPlugins: enabled, extraKnownMarketplaces: extra, diagnostics: relevant };
  } catch (error) {
    return { enabledPlugins: {}, extraKnownMarketplaces: {}, diagnostics: [{ severity: 'error', file: options.cwd, message: `Settings could not be read, so no bundle plugin is enabled: ${(error as Error).message}` }] };
  }
}

function readEnabled(file: string): Record<string, boolean> {
  try {
    const value = readJsonObject(file)?.enabledPlugins;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
    // A list of version constraints reads as enabled, as in the config plugin's schema.
    return Object.fromEntries(Object.entries(value).flatMap(([id, flag]) => (typeof flag === 'boolean' ? [[id, flag]] : Array.isArray(flag) ? [[id, true]] : [])));
  } catch {
    return {};
  }
}

/** Sets (`true` / `false`) or removes (`undefined`) `enabledPlugins[id]` in the scope's file, keeping every other key. */
export function writeEnabled(scope: PluginScope, id: string, value: boolean | undefined, options: PluginSettingsOptions): string {
  const file = settingsFileFor(scope, options);
  updateJsonObject(file, (settings) => {
    const current = settings.enabledPlugins;
    const enabled = (current !== null && typeof current === 'object' && !Array.isArray(current) ? current : {}) as Record<string, unknown>;
    if (value === undefined) delete enabled[id];
    else enabled[id] = value;
    if (Object.keys(enabled).length === 0 && value === undefined) delete settings.enabledPlugins;
    else settings.enabledPlugins = enabled;
  });
  return file;
}
