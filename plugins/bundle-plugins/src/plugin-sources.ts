import type { AgentDefinition, AgentDefinitionSource, Diagnostic, HooksConfig, HooksConfigSource, HooksSource, McpServerDeclaration, McpServerSource, SkillEntry, SkillSource } from '@tessera/contracts';
import type { BundlePluginRegistry } from './bundle-plugin-registry.js';

const NAME = 'bundle-plugins';

/** Plugin commands and skills as skill entries (`source: plugin:<name>`, `qualifiedName: <plugin>:<name>`). */
export class BundlePluginSkillSource implements SkillSource {
  readonly name = NAME;
  constructor(private readonly registry: BundlePluginRegistry) {}
  skills(): readonly SkillEntry[] {
    return this.registry.skillEntries();
  }
  onChange(listener: () => void): () => void {
    return this.registry.onChange(listener);
  }
}

/** Plugin agents, named `<plugin>:<agent>`. */
export class BundlePluginAgentSource implements AgentDefinitionSource {
  readonly name = NAME;
  constructor(private readonly registry: BundlePluginRegistry) {}
  agents(): readonly AgentDefinition[] {
    return this.registry.agents();
  }
  onChange(listener: () => void): () => void {
    return this.registry.onChange(listener);
  }
}

/** Plugin `hooks/hooks.json` (and inline hooks), with the plugin root for `CLAUDE_PLUGIN_ROOT`. */
export class BundlePluginHooksSource implements HooksConfigSource {
  readonly name = NAME;
  constructor(private readonly registry: BundlePluginRegistry) {}
  configs(): ReadonlyArray<{ config: HooksConfig; source: HooksSource }> {
    return this.registry.hookConfigs();
  }
  onChange(listener: () => void): () => void {
    return this.registry.onChange(listener);
  }
}

/** Plugin MCP servers (`scope: 'plugin'`; tools named `mcp__plugin_<plugin>_<server>__<tool>`). */
export class BundlePluginMcpServerSource implements McpServerSource {
  readonly name = NAME;
  constructor(private readonly registry: BundlePluginRegistry) {}
  servers(): readonly McpServerDeclaration[] {
    return this.registry.mcpServers();
  }
  diagnostics(): readonly Diagnostic[] {
    return this.registry.diagnostics().filter((diagnostic) => diagnostic.file.endsWith('.mcp.json') || diagnostic.path?.includes('mcpServers'));
  }
  onChange(listener: () => void): () => void {
    return this.registry.onChange(listener);
  }
}
