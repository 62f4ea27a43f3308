import { createToken } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import { loadConfig, type LoadConfigOptions, type LoadedConfig } from './load-config.js';
import { LAYER_SCOPES } from './settings-layer.js';

/** The merged settings of a session's working directory (`loadConfig` output). */
export const LoadedSettings = createToken<LoadedConfig>('LoadedSettings');

export interface ConfigPluginOptions extends LoadConfigOptions {}

/**
 * Provides `LoadedSettings`. Pure reading: nothing is applied — permission, hook and provider
 * plugins read what they need from it.
 *
 * The factory only checks and keeps `options` (it reads no file and no environment). Each
 * kernel's container loads the settings once, when `LoadedSettings` is first resolved; the
 * environment (`env`, default `process.env`) and the home directory are read then.
 */
export function configPlugin(options: ConfigPluginOptions): Plugin {
  const settings = checkOptions(options);
  return definePlugin({
    name: 'config',
    provides: [LoadedSettings],
    register({ bind }) {
      bind(LoadedSettings).toResolvedValue(() => loadConfig(settings)).inSingletonScope();
    },
  });
}

function checkOptions(options: ConfigPluginOptions): ConfigPluginOptions {
  const invalid = (option: string, problem: string): PluginOptionsError => new PluginOptionsError('configPlugin', 'config', option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object with at least { cwd }');
  if (typeof options.cwd !== 'string' || options.cwd === '') throw invalid('cwd', 'must be a non-empty path (the directory whose settings to load)');
  for (const option of ['home', 'settingsFile'] as const) {
    if (options[option] !== undefined && (typeof options[option] !== 'string' || options[option] === '')) throw invalid(option, 'must be a non-empty path');
  }
  if (options.env !== undefined && (typeof options.env !== 'object' || options.env === null)) throw invalid('env', 'must be an object of variables');
  if (options.scopes !== undefined && (!Array.isArray(options.scopes) || options.scopes.some((scope) => !LAYER_SCOPES.includes(scope)))) {
    throw invalid('scopes', `must be a list of ${LAYER_SCOPES.join(', ')} (the settings scopes to read)`);
  }
  // A shallow copy: `env` stays the object given (process.env is read when settings load, not here).
  return { ...options };
}
