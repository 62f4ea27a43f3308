// `@tessera/plugin-config/settings`: reading and checking settings files, without the plugin
// (and so without the kernel). A CLI's start-up path reads settings before anything else loads.
export { loadConfig, settingsLayerPaths } from './load-config.js';
export type { LoadConfigOptions, LoadedConfig } from './load-config.js';
export { LAYER_SCOPES, readSettingsLayer } from './settings-layer.js';
export type { LayerScope, SettingsLayer } from './settings-layer.js';
export { mergeSettings } from './merge-settings.js';
export { resolveProvider, substituteEnv } from './resolve-provider.js';
export type { ResolvedProvider } from './resolve-provider.js';
export {
  settingsSchema,
  settingsJsonSchema,
  permissionsSchema,
  hooksSchema,
  hookHandlerSchema,
  providerProfileSchema,
  KNOWN_SETTINGS_KEYS,
} from './settings-schema.js';
export type { Settings, PermissionsSettings, ProviderProfileSettings } from './settings-schema.js';
export { SettingsPolicyError } from './errors.js';
