import type { ICommandHostAdapters } from '@tessera/contracts';
import type { Kernel } from '@tessera/kernel';
import { BundlePlugins } from '@tessera/plugin-bundle-plugins';
import { McpClients, type McpServerState } from '@tessera/plugin-mcp/plugin';

/**
 * What the CLI lends commands in every mode: the bundle-plugin manager as `plugins` (`/plugin
 * install …` runs through it). Only adapters whose plugin is composed are present.
 */
export function cliCommandHostAdapters(kernel: Kernel): ICommandHostAdapters {
  const plugins = kernel.getOptional(BundlePlugins);
  const mcp = kernel.getOptional(McpClients);
  return { ...(plugins ? { plugins } : {}), ...(mcp ? { mcp: mcp.adapter() } : {}) };
}

/** `/reload-plugins` and a successful `/plugin …`: re-read the bundle plugins; a line for the user. */
export async function reloadBundlePlugins(kernel: Kernel): Promise<string> {
  const manager = kernel.getOptional(BundlePlugins);
  if (!manager) return 'Bundle plugins are not part of this composition.';
  const result = await manager.registry.reload();
  const loaded = result.loaded.length;
  const failed = result.failed.map((failure) => `${failure.id}: ${failure.error}`);
  return `Reloaded plugins: ${loaded} loaded${failed.length > 0 ? `; failed: ${failed.join('; ')}` : ''}.`;
}

/** The loaded bundle plugins as `system/init` lists them (Claude Code's `plugins: [{ name, path }]`). */
export function loadedPluginsForInit(kernel: Kernel): Array<{ name: string; path: string }> {
  return (kernel.getOptional(BundlePlugins)?.registry.plugins() ?? []).map((plugin) => ({ name: plugin.name, path: plugin.root }));
}

/** The MCP servers' states (`system/init`'s `mcp_servers`, the `mcp_status` answer, `/mcp`). */
export function mcpServerStates(kernel: Kernel): McpServerState[] {
  return kernel.getOptional(McpClients)?.servers() ?? [];
}
