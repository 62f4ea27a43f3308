// Settings layers, provider profiles and product composition: typed, validated data with
// located diagnostics. Reading only — applying settings is the job of the plugins that use them.
export { loadConfig, settingsLayerPaths } from './load-config.js';
export type { LoadConfigOptions, LoadedConfig } from './load-config.js';
export { readSettingsLayer } from './settings-layer.js';
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
export { loadCompositionConfig, compositionConfigSchema } from './composition-config.js';
export type { CompositionConfig, LoadedCompositionConfig } from './composition-config.js';
export { SettingsPolicyError } from './errors.js';
export { configPlugin, LoadedSettings } from './config-plugin.js';
export type { ConfigPluginOptions } from './config-plugin.js';
