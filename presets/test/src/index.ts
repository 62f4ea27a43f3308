import type { Clock, SessionStore } from '@tessera/contracts';
import { replacePlugins, type Plugin, type PluginInput } from '@tessera/kernel';
import {
  allowAllPermissions,
  fakeClock,
  inMemorySessionStore,
  silentSessionLogger,
} from '@tessera/kernel/testing';
import { ScriptedProvider, scriptedProvider, type ScriptedProviderOptions } from '@tessera/plugin-provider-scripted';

export interface TestPresetOptions {
  /** Turns for the scripted provider. */
  turns?: ScriptedProviderOptions['turns'];
  /** A provider instance to use instead of one built from `turns`. */
  provider?: ScriptedProvider;
  clock?: Clock;
  store?: SessionStore;
  /**
   * Plugins that take the place of preset members. Each replaces the preset plugin that
   * provides the same token, so `replace: [jsonlSessionStore()]` swaps the store.
   */
  replace?: readonly Plugin[];
  /** Extra plugins appended after the preset. */
  plugins?: readonly PluginInput[];
}

/**
 * Everything a unit test needs and nothing it does not: scripted provider, in-memory store,
 * silent logger, allow-all permissions, fake clock.
 */
export function testPreset(options: TestPresetOptions = {}): PluginInput[] {
  return [
    ...replacePlugins(
      [
        scriptedProvider(options.provider ?? { turns: options.turns }),
        inMemorySessionStore(options.store),
        silentSessionLogger(),
        allowAllPermissions(),
        fakeClock(options.clock),
      ],
      options.replace ?? [],
    ),
    ...(options.plugins ?? []),
  ];
}
