import {
  AgentDefinitionSourceContribution,
  createToken,
  Diagnostics,
  diagnosticReport,
  HooksConfigSourceContribution,
  McpServerSourceContribution,
  SkillSourceContribution,
} from '@tessera/contracts';
import { definePlugin, PluginOptionsError, type Plugin } from '@tessera/kernel';
import { BundlePluginManager, type BundlePluginManagerOptions } from './bundle-plugin-manager.js';
import { BundlePluginAgentSource, BundlePluginHooksSource, BundlePluginMcpServerSource, BundlePluginSkillSource } from './plugin-sources.js';

/** This kernel's bundle plugins: the registry (`reload()`), installer, marketplaces and the `/plugin` host adapter. */
export const BundlePlugins = createToken<BundlePluginManager>('BundlePlugins');

export interface BundlePluginsOptions extends BundlePluginManagerOptions {}

const NAME = 'bundle-plugins';
const FACTORY = 'bundlePlugins()';

/**
 * Claude Code bundle plugins in a kernel. Each kernel gets its own `BundlePluginManager`
 * (provided as `BundlePlugins`); its registry loads the enabled plugins at boot and contributes
 * their commands and skills (`SkillSourceContribution`), agents
 * (`AgentDefinitionSourceContribution`), hooks (`HooksConfigSourceContribution`) and MCP servers
 * (`McpServerSourceContribution`). `BundlePlugins.registry.reload()` re-reads them and tells
 * every consumer: that is what a host does for `/reload-plugins`.
 */
export function bundlePlugins(options: BundlePluginsOptions = {}): Plugin {
  check(options);
  return definePlugin({
    name: NAME,
    provides: [BundlePlugins],
    contributes: [SkillSourceContribution, AgentDefinitionSourceContribution, HooksConfigSourceContribution, McpServerSourceContribution],
    optional: [Diagnostics],
    register({ bind }) {
      const manager = new BundlePluginManager(options);
      const { registry } = manager;
      bind(BundlePlugins).toConstantValue(manager);
      bind(SkillSourceContribution).toConstantValue(new BundlePluginSkillSource(registry));
      bind(AgentDefinitionSourceContribution).toConstantValue(new BundlePluginAgentSource(registry));
      bind(HooksConfigSourceContribution).toConstantValue(new BundlePluginHooksSource(registry));
      bind(McpServerSourceContribution).toConstantValue(new BundlePluginMcpServerSource(registry));
      return {
        async boot({ getOptional }) {
          const reporter = getOptional(Diagnostics);
          // Bundle plugins are extras: whatever goes wrong loading them, the session still starts.
          const result = await registry.reload().catch((error: unknown) => {
            reporter?.report({ severity: 'error', code: 'TESSERA_BUNDLE_PLUGIN', source: NAME, message: `No bundle plugin was loaded: ${(error as Error).message}` });
            return undefined;
          });
          if (result === undefined) return;
          if (reporter === undefined) return;
          for (const diagnostic of result.diagnostics) {
            if (diagnostic.severity !== 'info') reporter.report(diagnosticReport(diagnostic, 'TESSERA_BUNDLE_PLUGIN', NAME));
          }
          for (const failure of result.failed) {
            reporter.report({ severity: 'warning', code: 'TESSERA_BUNDLE_PLUGIN', source: NAME, message: `Plugin ${failure.id} was not loaded: ${failure.error}` });
          }
        },
      };
    },
  });
}

function check(options: BundlePluginsOptions): void {
  const fail = (option: string, problem: string): never => {
    throw new PluginOptionsError(FACTORY, NAME, option, problem);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'must be an object');
  for (const key of ['home', 'cwd', 'pluginsDir', 'git', 'npm'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) fail(key, 'must be a non-empty string');
  }
  if (options.pluginDirs !== undefined && !(Array.isArray(options.pluginDirs) && options.pluginDirs.every((dir) => typeof dir === 'string' && dir !== ''))) fail('pluginDirs', 'must be an array of directory paths');
  if (options.settingSources !== undefined && !(Array.isArray(options.settingSources) && options.settingSources.every((scope) => scope === 'user' || scope === 'project' || scope === 'local'))) {
    fail('settingSources', 'must be an array of "user", "project" and "local"');
  }
  if (options.approve !== undefined && typeof options.approve !== 'function') fail('approve', 'must be a function (request) => boolean');
}
