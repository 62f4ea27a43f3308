import type { ApprovalHandler } from '@tessera/contracts';
import type { CliFlags } from './args.js';
import { parseAgentsFlag } from './inline-agents.js';
import type { CliIO } from './io.js';
import type { CliPresetOptions } from './preset-composition.js';
import { withModel, type ProviderChoice } from './provider-selection.js';
import type { CliSettings } from './settings.js';

/**
 * The preset's options for one run of the CLI, as every mode builds them (print, interactive,
 * `serve`, `mcp serve`, `acp`): the settings' rules, hooks and tools, the chosen provider, the
 * flags' plugin folders, MCP servers and persistence. A mode adds its own (hook callbacks, a
 * fallback model, extra plugins) on top.
 */
export function runPresetOptions(options: {
  flags: CliFlags;
  io: CliIO;
  cwd: string;
  settings: CliSettings;
  choice: Exclude<ProviderChoice, { kind: 'none' }>;
  approvalHandler: ApprovalHandler;
  mcp: CliPresetOptions['mcp'];
}): CliPresetOptions {
  const { flags, io, cwd, settings, choice } = options;
  return {
    cwd,
    home: io.home,
    ...(settings.settingsFile === undefined ? {} : { settingsFile: settings.settingsFile }),
    loadedSettings: settings.loaded,
    provider: choice.kind === 'demo' ? { kind: 'demo', delayMs: Number(io.env.TESSERA_DEMO_DELAY_MS ?? 0) || 0 } : { kind: 'profile', name: choice.name, profile: withModel(choice, flags.model) },
    permissions: settings.permissions,
    hookFiles: settings.hookFiles,
    hookConfigs: settings.hookConfigs,
    approvalHandler: options.approvalHandler,
    ...(settings.tools === undefined ? {} : { tools: settings.tools }),
    ...(settings.language === undefined ? {} : { language: settings.language }),
    sessionPersistence: flags.sessionPersistence,
    sessionLog: io.env.TESSERA_SESSION_LOG !== '0',
    pluginDirs: flags.pluginDir,
    ...(flags.agents.length === 0 ? {} : { agents: parseAgentsFlag(flags.agents).definitions }),
    ...(settings.settingSources === undefined ? {} : { settingSources: settings.settingSources }),
    ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
  };
}
