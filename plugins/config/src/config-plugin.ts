import { createToken } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { loadConfig, type LoadConfigOptions, type LoadedConfig } from './load-config.js';

/** The merged settings of a session's working directory (`loadConfig` output). */
export const LoadedSettings = createToken<LoadedConfig>('LoadedSettings');

export interface ConfigPluginOptions extends LoadConfigOptions {}

/**
 * Provides `LoadedSettings`. Pure reading: the settings are loaded once, on first use, and
 * nothing is applied — permission, hook and provider plugins read what they need from it.
 */
export function configPlugin(options: ConfigPluginOptions): Plugin {
  return definePlugin({
    name: 'config',
    provides: [LoadedSettings],
    register({ bind }) {
      bind(LoadedSettings).toResolvedValue(() => loadConfig(options)).inSingletonScope();
    },
  });
}
