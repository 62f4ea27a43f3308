import { Provider } from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import { ScriptedProvider, type ScriptedProviderOptions } from './scripted-provider.js';

export {
  ScriptedProvider,
  ScriptedProviderExhaustedError,
} from './scripted-provider.js';
export type {
  ScriptedProviderOptions,
  ScriptedRequest,
  ScriptedToolCall,
  ScriptedTurn,
  ScriptedTurnSource,
} from './scripted-provider.js';

/**
 * Provides `Provider` with a scripted model.
 *
 * The factory only checks and keeps `options`: each kernel's container builds its own
 * `ScriptedProvider` when `Provider` is first resolved, so one plugin value composed into two
 * kernels gives each a provider that starts at the first turn. Pass a `ScriptedProvider`
 * instance instead of options to keep a handle on it (to read `requests`): that instance is
 * yours, bound as it is, and shared — with its turn position — by every kernel the value is
 * composed into. Reach a built provider with `kernel.get(Provider)`.
 */
export function scriptedProvider(options: ScriptedProviderOptions | ScriptedProvider = {}): Plugin {
  const given = options instanceof ScriptedProvider ? options : undefined;
  const settings: ScriptedProviderOptions | undefined = given ? undefined : { ...(options as ScriptedProviderOptions) };
  if (settings) checkScriptedProviderOptions(settings);
  return definePlugin({
    name: 'provider-scripted',
    provides: [Provider],
    register({ bind }) {
      if (given) bind(Provider).toConstantValue(given);
      else bind(Provider).toResolvedValue(() => new ScriptedProvider(settings)).inSingletonScope();
    },
  });
}

function checkScriptedProviderOptions(options: ScriptedProviderOptions): void {
  const invalid = (option: string, problem: string): PluginOptionsError => new PluginOptionsError('scriptedProvider', 'provider-scripted', option, problem);
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object or a ScriptedProvider');
  const { turns, name, model } = options;
  if (turns !== undefined && typeof turns !== 'function' && !Array.isArray(turns)) throw invalid('turns', 'must be a list of turns or a function');
  if (name !== undefined && typeof name !== 'string') throw invalid('name', 'must be a string');
  if (model !== undefined && typeof model !== 'string') throw invalid('model', 'must be a string');
}
