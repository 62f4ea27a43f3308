import type { Plugin, PluginInput } from '@tessera/kernel';
import { composeCliPreset, type CliPresetOptions } from './preset-composition.js';

/**
 * `cliPreset`, with only the provider packages the chosen profile needs imported: each one
 * pulls in its SDK, and loading an SDK the run never calls was a large part of start-up.
 * A profile of another (or no) type gets both factories, so its error lists both types.
 */
export async function loadCliPreset(options: CliPresetOptions): Promise<PluginInput[]> {
  const choice = options.provider;
  if (choice.kind === 'demo') return composeCliPreset(options, []);
  const type = choice.profile.type;
  const [anthropic, openai, { providerFromProfile }] = await Promise.all([
    type === 'openai' ? undefined : import('@tessera/plugin-provider-anthropic'),
    type === 'anthropic' ? undefined : import('@tessera/plugin-provider-openai'),
    import('@tessera/plugin-provider-openai/provider-from-profile'),
  ]);
  // Same order as cliPreset: the factories, then the profile that picks one.
  const plugins: Plugin[] = [];
  if (anthropic) plugins.push(anthropic.anthropicProviderFactory());
  if (openai) plugins.push(openai.openaiProviderFactory());
  plugins.push(providerFromProfile(choice.profile, choice.name === undefined ? {} : { profileName: choice.name }));
  return composeCliPreset(options, plugins);
}
