import { Provider } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
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
 * Provides `Provider` with a scripted model. Pass a `ScriptedProvider` instance instead of
 * options to keep a handle on it (to read `requests`).
 */
export function scriptedProvider(options: ScriptedProviderOptions | ScriptedProvider = {}): Plugin {
  const provider = options instanceof ScriptedProvider ? options : new ScriptedProvider(options);
  return definePlugin({
    name: 'provider-scripted',
    provides: [Provider],
    register({ bind }) {
      bind(Provider).toConstantValue(provider);
    },
  });
}
