import { tokenName, type Token } from '@tessera/contracts';
import type { CompositionProblem } from './errors.js';
import type { Plugin } from './plugin.js';

export interface ResolvedGraph {
  /** Plugins that stay, in composition order. */
  plugins: Plugin[];
  /** Name of a dropped plugin → name of the plugin that replaced it. */
  replaced: Map<string, string>;
  problems: CompositionProblem[];
}

function asList(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/**
 * Checks a flattened plugin list before anything registers: names are unique, `replaces`
 * drops its targets, every single-capability token has one provider, every required
 * token has a provider.
 */
export function resolvePluginGraph(input: readonly Plugin[]): ResolvedGraph {
  const problems: CompositionProblem[] = [];
  const byName = new Map<string, Plugin>();
  for (const plugin of input) {
    if (typeof plugin !== 'object' || typeof plugin.name !== 'string' || plugin.name === '') {
      problems.push({
        kind: 'invalid_plugin',
        message: `A plugin entry has no name (got ${typeof plugin === 'object' ? JSON.stringify(Object.keys(plugin)) : String(plugin)}); build plugins with definePlugin({ name, … }).`,
        plugins: [],
      });
      continue;
    }
    if (byName.has(plugin.name)) {
      problems.push({
        kind: 'duplicate_plugin',
        message: `Plugin "${plugin.name}" appears twice; remove one, or give the second a different name.`,
        plugins: [plugin.name],
      });
      continue;
    }
    byName.set(plugin.name, plugin);
  }

  const replaced = new Map<string, string>();
  for (const plugin of byName.values()) {
    for (const target of asList(plugin.replaces)) {
      if (target !== plugin.name && byName.has(target)) replaced.set(target, plugin.name);
    }
  }
  const plugins = [...byName.values()].filter((plugin) => !replaced.has(plugin.name));

  const providers = new Map<Token<unknown>, string[]>();
  for (const plugin of plugins) {
    for (const token of plugin.provides ?? []) {
      const names = providers.get(token) ?? [];
      names.push(plugin.name);
      providers.set(token, names);
    }
  }
  for (const [token, names] of providers) {
    if (names.length > 1) {
      problems.push({
        kind: 'duplicate_provider',
        message: `Token ${tokenName(token)} is provided by ${names.map((name) => `"${name}"`).join(' and ')}; keep one, or mark the newer one with replaces: '${names[0]}'.`,
        plugins: names,
        token: tokenName(token),
      });
    }
  }
  for (const plugin of plugins) {
    for (const token of plugin.requires ?? []) {
      if (!providers.has(token)) {
        problems.push({
          kind: 'missing_provider',
          message: `Plugin "${plugin.name}" requires ${tokenName(token)}, but no plugin provides it; add a plugin that provides ${tokenName(token)}.`,
          plugins: [plugin.name],
          token: tokenName(token),
        });
      }
    }
  }
  return { plugins, replaced, problems };
}
