import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { createToken, SkillActivator, type AgentDefinition, type ICommandHostAdapters } from '@tessera/contracts';
import type { InteractiveSession, Kernel } from '@tessera/kernel';
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

/** `/plugin` with no arguments in the terminal: the installed plugins and the commands that manage them. */
export async function listBundlePlugins(kernel: Kernel): Promise<string> {
  const manager = kernel.getOptional(BundlePlugins);
  if (!manager) return 'Bundle plugins are not part of this composition.';
  const listed = await manager.run('list');
  return [listed.message, '', 'Manage them with /plugin install name@marketplace, /plugin uninstall|enable|disable name@marketplace, /plugin marketplace add <source>.'].join('\n');
}

/**
 * `/reset` in the terminal, once confirmed: the user settings file (`~/.tessera/settings.json`)
 * is moved aside to a dated backup, never deleted, so nothing is lost; Claude Code's
 * `~/.claude/settings.json` is not Tessera's to reset and is left alone. A line for the user.
 */
export function resetUserSettings(home: string, now: Date = new Date()): string {
  const file = join(home, '.tessera', 'settings.json');
  if (!existsSync(file)) return `There are no user settings to reset (${file} does not exist).`;
  const backup = `${file}.${now.toISOString().replace(/[:.]/g, '-')}.bak`;
  renameSync(file, backup);
  return `Moved ${file} to ${backup}; Tessera starts with the default settings next time.`;
}

/** The loaded bundle plugins as `system/init` lists them (Claude Code's `plugins: [{ name, path }]`). */
export function loadedPluginsForInit(kernel: Kernel): Array<{ name: string; path: string }> {
  return (kernel.getOptional(BundlePlugins)?.registry.plugins() ?? []).map((plugin) => ({ name: plugin.name, path: plugin.root }));
}

/** The MCP servers' states (`system/init`'s `mcp_servers`, the `mcp_status` answer, `/mcp`). */
export function mcpServerStates(kernel: Kernel): McpServerState[] {
  return kernel.getOptional(McpClients)?.servers() ?? [];
}

/** The subagents plugin's registry (its token, without loading the plugin's module). */
const AgentDefinitions = createToken<{ list(): readonly AgentDefinition[]; add(definition: AgentDefinition): void }>('AgentDefinitions');

/**
 * Adds subagents to a composed kernel (a later SDK `initialize`'s `agents`): a name already
 * there is replaced, so jobs started afterwards run the new definition. False when no subagents
 * plugin is composed.
 */
export function addAgentDefinitions(kernel: Kernel, definitions: readonly AgentDefinition[]): boolean {
  const registry = kernel.getOptional(AgentDefinitions);
  if (registry === undefined) return false;
  for (const definition of definitions) registry.add(definition);
  return true;
}

/** What a session offers, as hosts list it (`system/init`, the `initialize` answer). */
export interface HostListings {
  /** Every slash command: built-ins, skills, bundle plugins' commands, MCP prompts. */
  commands: Array<{ name: string; description: string; argumentHint: string }>;
  agents: Array<{ name: string; description: string }>;
  skills: string[];
}

/** Commands (the palette's registry: modules, skills and plugin commands), agents and skills. */
export async function hostListings(kernel: Kernel, interactive: InteractiveSession): Promise<HostListings> {
  const seen = new Set<string>();
  const commands: HostListings['commands'] = [];
  const add = (name: string, description: string | undefined, argumentHint: string | undefined): void => {
    if (seen.has(name)) return;
    seen.add(name);
    commands.push({ name, description: description ?? '', argumentHint: argumentHint ?? '' });
  };
  for (const command of interactive.listCommands()) add(command.name, command.description, command.argumentHint);
  try {
    for (const command of (await interactive.getCommandRegistry()).getCommands()) add(command.name, command.description, command.argumentHint);
  } catch {
    // No registry: the composed commands are the list.
  }
  const session = interactive.getSession();
  let skills: string[] = [];
  try {
    skills = (await kernel.getOptional(SkillActivator)?.list({ sessionId: session.sessionId, cwd: session.cwd }) ?? []).map((entry) => entry.qualifiedName ?? entry.id);
  } catch {
    // A failing skill source lists nothing here; the session reports it.
  }
  const agents = (kernel.getOptional(AgentDefinitions)?.list() ?? []).map((agent) => ({ name: agent.name, description: agent.description }));
  return { commands, agents, skills };
}
