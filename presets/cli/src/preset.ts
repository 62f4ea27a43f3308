import { anthropicProviderFactory } from '@tessera/plugin-provider-anthropic';
import { openaiProviderFactory, providerFromProfile } from '@tessera/plugin-provider-openai';
import type { PluginInput } from '@tessera/kernel';
import { composeCliPreset, type CliPresetOptions } from './preset-composition.js';

export { approvalHandlerPlugin, type CliPermissionRules, type CliPresetOptions } from './preset-composition.js';

/**
 * The `tessera` CLI's composition: every first-party capability as a plugin. Pure: it reads no
 * file and builds nothing — each plugin does its own work when the kernel first needs it.
 * Both provider packages (and so both SDKs) are imported; `loadCliPreset` loads only the one a
 * profile needs.
 */
export function cliPreset(options: CliPresetOptions): PluginInput[] {
  const choice = options.provider;
  // Both factories are contributed, so the profile's `type` picks one; the profile builds the provider.
  const profilePlugins =
    choice.kind === 'demo'
      ? []
      : [anthropicProviderFactory(), openaiProviderFactory(), providerFromProfile(choice.profile, choice.name === undefined ? {} : { profileName: choice.name })];
  return composeCliPreset(options, profilePlugins);
}
