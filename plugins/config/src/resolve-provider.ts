import type { Diagnostic, ProviderProfile } from '@tessera/contracts';
import type { SettingsLayer } from './settings-layer.js';
import type { Settings } from './settings-schema.js';

/** The active provider profile, after `$ENV:` substitution. */
export interface ResolvedProvider {
  /** Profile key (`providers.<key>`), or `provider` for the legacy block. */
  key: string;
  profile: ProviderProfile;
  /** The settings file(s) that defined it, highest precedence first. */
  files: string[];
}

const ENV_REFERENCE = /^\$ENV:([A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * Picks the active profile: `providers[currentProvider]`, else the legacy `provider` block
 * (which never overrides an explicit `currentProvider`), else none. A missing profile or a
 * profile without `type` is an error naming the file to fix.
 */
export function resolveProvider(
  config: Settings,
  layers: readonly SettingsLayer[],
  env: Readonly<Record<string, string | undefined>>,
): { provider?: ResolvedProvider; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const definedIn = (test: (settings: Settings) => boolean) =>
    layers.filter((layer) => layer.settings !== undefined && test(layer.settings)).map((layer) => layer.file).reverse();

  if (config.currentProvider !== undefined) {
    const key = config.currentProvider;
    const selectedIn = definedIn((settings) => settings.currentProvider !== undefined)[0] ?? '(settings)';
    const raw = config.providers?.[key];
    if (raw === undefined) {
      const known = Object.keys(config.providers ?? {});
      diagnostics.push({
        severity: 'error',
        file: selectedIn,
        path: 'currentProvider',
        message: `currentProvider is ${JSON.stringify(key)} but no \`providers.${key}\` profile exists${known.length ? ` (profiles: ${known.join(', ')})` : ''}. Add the profile or change currentProvider in ${selectedIn}.`,
      });
      return { diagnostics };
    }
    const files = definedIn((settings) => settings.providers?.[key] !== undefined);
    return finish(key, raw, files.length ? files : [selectedIn], `providers.${key}`, env, diagnostics);
  }
  if (config.provider !== undefined) {
    const { name, ...rest } = config.provider;
    const files = definedIn((settings) => settings.provider !== undefined);
    return finish('provider', { ...rest, type: rest.type ?? name }, files, 'provider', env, diagnostics);
  }
  return { diagnostics };
}

function finish(
  key: string,
  raw: Record<string, unknown>,
  files: string[],
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  diagnostics: Diagnostic[],
): { provider?: ResolvedProvider; diagnostics: Diagnostic[] } {
  const file = files[0] ?? '(settings)';
  const substituted = substituteEnv(raw, path, file, env, diagnostics) as Record<string, unknown>;
  if (typeof substituted.type !== 'string' || substituted.type === '') {
    diagnostics.push({
      severity: 'error',
      file,
      path: `${path}.type`,
      message: `Provider profile \`${path}\` has no \`type\`; add e.g. "type": "anthropic" or "openai" in ${file}.`,
    });
    return { diagnostics };
  }
  const profile = { ...substituted } as unknown as ProviderProfile;
  return { provider: { key, profile, files }, diagnostics };
}

/**
 * Replaces `$ENV:NAME` (the whole string) in every string of a profile, options included. An
 * unset variable is an error naming the variable and the file; the field is left out.
 */
export function substituteEnv(
  value: unknown,
  path: string,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  diagnostics: Diagnostic[],
): unknown {
  if (typeof value === 'string') {
    const match = ENV_REFERENCE.exec(value);
    if (!match) return value;
    const resolved = env[match[1]!];
    if (resolved === undefined || resolved === '') {
      diagnostics.push({ severity: 'error', file, path, message: `\`${path}\` refers to $ENV:${match[1]} but that environment variable is not set; export it or put the value in ${file}.` });
    }
    return resolved === '' ? undefined : resolved;
  }
  if (Array.isArray(value)) return value.map((item, index) => substituteEnv(item, `${path}[${index}]`, file, env, diagnostics));
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const substituted = substituteEnv(item, `${path}.${key}`, file, env, diagnostics);
      if (substituted !== undefined) result[key] = substituted;
    }
    return result;
  }
  return value;
}
