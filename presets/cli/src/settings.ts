import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Diagnostic, PermissionMode } from '@tessera/contracts';
import { loadConfig, type LoadedConfig } from '@tessera/plugin-config';
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
  const warnings = loaded.diagnostics.filter((diagnostic) => diagnostic.severity !== 'info').map(formatDiagnostic);

  const permissions = loaded.config.permissions ?? {};
  const toolList = (list: readonly string[] | undefined) => [...(list ?? [])];
  const mode = flags.dangerouslySkipPermissions ? 'bypassPermissions' : flags.permissionMode === 'manual' ? 'default' : (flags.permissionMode ?? permissions.defaultMode);
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
    providerSettings: {
      ...(typeof loaded.config.currentProvider === 'string' ? { currentProvider: loaded.config.currentProvider } : {}),
      ...(loaded.config.providers ? { providers: loaded.config.providers as ProviderSettings['providers'] } : {}),
      ...(loaded.provider ? { resolved: loaded.provider } : {}),
    },
    warnings,
  };
}
