// Settings layers, provider profiles and product composition: typed, validated data with
// located diagnostics. Reading only — applying settings is the job of the plugins that use them.
export * from './settings-entry.js';
export { loadCompositionConfig, compositionConfigSchema } from './composition-config.js';
export type { CompositionConfig, LoadedCompositionConfig } from './composition-config.js';
export { configPlugin, LoadedSettings } from './config-plugin.js';
export type { ConfigPluginOptions } from './config-plugin.js';
