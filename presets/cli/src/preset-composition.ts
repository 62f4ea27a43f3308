import { join } from 'node:path';
import { ApprovalHandler, type AgentDefinition, type HooksConfig, type HooksSource, type ISession, type ProviderProfile } from '@tessera/contracts';
import { definePlugin, replacePlugins, type Plugin, type PluginInput } from '@tessera/kernel';
import { inMemorySessionStore } from '@tessera/kernel/testing';
import { backgroundRuntime } from '@tessera/plugin-background';
import { editCheckpoints } from '@tessera/plugin-checkpoints';
import { bundlePlugins } from '@tessera/plugin-bundle-plugins';
import { builtinCommands } from '@tessera/plugin-commands';
import { compaction } from '@tessera/plugin-compaction';
import { configPlugin, LoadedSettings } from '@tessera/plugin-config';
import type { LoadedConfig } from '@tessera/plugin-config/settings';
import { contextWindow } from '@tessera/plugin-context-window';
import { hooksPlugin } from '@tessera/plugin-hooks';
import { mcpClient, type McpAuthorize, type McpLog, type McpProjectApprovalSettings } from '@tessera/plugin-mcp/plugin';
import { projectMemory, userLocalStorage } from '@tessera/plugin-memory';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { promptHistory } from '@tessera/plugin-prompt-history';
import { promptFileReferences } from '@tessera/plugin-prompt-references';
import { scriptedProvider } from '@tessera/plugin-provider-scripted';
import { sessionLogger } from '@tessera/plugin-session-logger';
import { jsonlSessionStore } from '@tessera/plugin-session-store-jsonl';
import { skills } from '@tessera/plugin-skills';
import { subagents } from '@tessera/plugin-subagents';
import { systemPrompt } from '@tessera/plugin-system-prompt';
import { BUILTIN_TOOL_NAMES, builtinTools, type BuiltinToolName } from '@tessera/plugin-tools';
import { DEMO_MODEL_ID, demoModel } from './demo-model.js';
import { fallbackModels } from './fallback-model.js';
import { onlyTools } from './only-tools.js';
import { sessionTranscriptPath } from './transcript-path.js';

/** Permission rules as settings and flags give them. */
export interface CliPermissionRules {
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  additionalDirectories?: readonly string[];
}

export interface CliPresetOptions {
  /** The project directory: settings, context files, checkpoints and `/x` rules are relative to it. */
  cwd: string;
  /** The user's home (`~/.tessera`, `~/.claude`); default `os.homedir()`. */
  home?: string;
  /** `--settings`: one more settings layer for the config plugin. */
  settingsFile?: string;
  /**
   * The settings the CLI already read (its `--setting-sources`, inline `--settings` JSON): the
   * config plugin's `LoadedSettings` is this, not a second read of every file.
   */
  loadedSettings?: LoadedConfig;
  /** The model: a settings or environment profile, or the built-in demo model. */
  provider: { kind: 'profile'; name?: string; profile: ProviderProfile } | { kind: 'demo'; delayMs?: number };
  /** Merged rules (settings plus `--allowedTools` / `--disallowedTools`). */
  permissions?: CliPermissionRules;
  /** Settings files whose `hooks` run (Claude Code's command / http / prompt / agent hooks). */
  hookFiles?: readonly string[];
  /** Hooks given in code: the Agent SDK's callbacks registered over the control protocol. */
  hookConfigs?: ReadonlyArray<{ config: HooksConfig; source: HooksSource }>;
  /** Who answers permission asks (print mode: a refusal naming the rule; stream-json: the host). */
  approvalHandler?: ApprovalHandler;
  /** `--tools`: only these tools are offered (MCP tools stay); undefined: all. */
  /** The language the model answers in (settings.json `language`): a line of the system prompt's environment section. */
  language?: string;
  tools?: readonly string[];
  /** `--fallback-model`: models to switch to, in order, when the model is overloaded. */
  fallbackModels?: readonly string[];
  /** Told when a call switches to a fallback model. */
  onFallback?: (from: string | undefined, to: string) => void;
  /** `false` (`--no-session-persistence`): sessions live in memory only. */
  sessionPersistence?: boolean;
  /** `false` leaves out the per-session event log under `~/.tessera/logs`. */
  sessionLog?: boolean;
  /** `--plugin-dir`: bundle plugin folders loaded as they are (always enabled). */
  pluginDirs?: readonly string[];
  /**
   * `--setting-sources`: only these sources' settings files enable bundle plugins (`[]`: none,
   * only `pluginDirs` load), and only their instruction files (CLAUDE.md, …), skill folders
   * and agent folders are read; undefined: all of them.
   */
  settingSources?: ReadonlyArray<'user' | 'project' | 'local'>;
  /**
   * MCP servers: `--mcp-config` values, `--strict-mcp-config`, Claude Code's user and local
   * servers (`~/.claude.json`), the project `.mcp.json` approval keys, and who does the OAuth
   * redirect step. `false` leaves the MCP client out.
   */
  mcp?:
    | false
    | {
        configs?: readonly string[];
        strict?: boolean;
        /** `false`: the project's `.mcp.json` is not read (`--setting-sources` without `project`). */
        projectConfig?: boolean;
        userServers?: Record<string, unknown>;
        localServers?: Record<string, unknown>;
        approval?: McpProjectApprovalSettings;
        authorize?: McpAuthorize;
        /** Server stderr, failures, configuration problems. */
        log?: McpLog;
      };
  /**
   * `--agents`: inline subagents for this run. They are offered to the agent tool like
   * `.claude/agents/*.md` ones and win a name over them (and over built-ins and bundle plugins').
   */
  agents?: readonly AgentDefinition[];
  /** `false` leaves out Claude Code bundle plugins (installed and `--plugin-dir` ones). */
  bundlePlugins?: boolean;
  /** Plugins that take the place of preset members providing the same token (e.g. a test store). */
  replace?: readonly Plugin[];
  /** Plugins added after the preset's. */
  plugins?: readonly PluginInput[];
}


/**
 * The `tessera` CLI's composition, given the plugins that provide the model for a `profile`
 * choice (`cliPreset` passes them from static imports, `loadCliPreset` loads only the provider
 * packages the profile needs). Pure: it reads no file and builds nothing.
 */
export function composeCliPreset(options: CliPresetOptions, profilePlugins: readonly Plugin[]): PluginInput[] {
  const home = options.home;
  const agentDir = home === undefined ? undefined : join(home, '.tessera', 'agent');
  const rules = options.permissions ?? {};
  // `--setting-sources` for the plugins that read instruction files, skills and agents.
  const sources = options.settingSources === undefined ? {} : { settingSources: [...options.settingSources] };
  const exclude = options.tools === undefined ? [] : BUILTIN_TOOL_NAMES.filter((name) => !options.tools!.includes(name));
  const members: Plugin[] = [
    options.loadedSettings === undefined
      ? configPlugin({ cwd: options.cwd, ...(home === undefined ? {} : { home }), ...(options.settingsFile === undefined ? {} : { settingsFile: options.settingsFile }) })
      : loadedSettingsPlugin(options.loadedSettings),
    ...(options.provider.kind === 'demo' ? [demoProvider(options.provider.delayMs)] : profilePlugins),
    options.sessionPersistence === false ? inMemorySessionStore() : jsonlSessionStore(agentDir === undefined ? {} : { agentDir }),
    permissionsPlugin({
      rules: {
        allow: [...(rules.allow ?? [])],
        ask: [...(rules.ask ?? [])],
        deny: [...(rules.deny ?? [])],
        additionalDirectories: [...(rules.additionalDirectories ?? [])],
      },
      settingsRoot: options.cwd,
      ...(home === undefined ? {} : { homeDir: home }),
    }),
    hooksPlugin({
      files: [...(options.hookFiles ?? [])],
      configs: [...(options.hookConfigs ?? [])],
      projectDir: options.cwd,
      ...(options.sessionPersistence === false ? {} : { transcriptPath: (session: ISession | undefined) => sessionTranscriptPath(agentDir, session) }),
    }),
    ...builtinTools({ additionalDirectories: [...(rules.additionalDirectories ?? [])], exclude }),
    backgroundRuntime(),
    subagents({ cwd: options.cwd, ...(home === undefined ? {} : { home }), ...sources, ...(options.agents && options.agents.length > 0 ? { definitions: [...options.agents] } : {}) }),
    contextWindow(),
    compaction(),
    promptHistory(agentDir === undefined ? {} : { path: join(agentDir, 'history.db') }),
    promptFileReferences(),
    systemPrompt({ ...(home === undefined ? {} : { home }), ...sources, ...(options.language === undefined ? {} : { language: options.language }) }),
    editCheckpoints(),
    ...builtinCommands(),
    skills({ ...(home === undefined ? {} : { home }), ...sources }),
    projectMemory(),
    userLocalStorage(),
  ];
  if (options.mcp !== false) {
    const mcp = options.mcp ?? {};
    members.push(
      mcpClient({
        mcpConfigBaseDir: options.cwd,
        ...(mcp.configs && mcp.configs.length > 0 ? { mcpConfig: [...mcp.configs] } : {}),
        ...(mcp.strict ? { strictMcpConfig: true } : {}),
        ...(mcp.projectConfig === false ? { projectConfig: false } : {}),
        ...(mcp.userServers ? { userServers: mcp.userServers } : {}),
        ...(mcp.localServers ? { localServers: mcp.localServers } : {}),
        ...(mcp.approval ? { approval: mcp.approval } : {}),
        ...(mcp.log ? { log: mcp.log } : {}),
        ...(home === undefined ? {} : { oauth: { directory: join(home, '.tessera', 'mcp-oauth'), ...(mcp.authorize ? { authorize: mcp.authorize } : {}) } }),
      }),
    );
  }
  if (options.bundlePlugins !== false) {
    members.push(
      bundlePlugins({
        cwd: options.cwd,
        ...(home === undefined ? {} : { home }),
        ...(options.pluginDirs && options.pluginDirs.length > 0 ? { pluginDirs: [...options.pluginDirs] } : {}),
        ...sources,
      }),
    );
  }
  if (options.sessionLog !== false) members.push(sessionLogger(home === undefined ? {} : { dir: join(home, '.tessera', 'logs') }));
  if (options.approvalHandler) members.push(approvalHandlerPlugin(options.approvalHandler));
  if (options.tools !== undefined) members.push(onlyTools(options.tools));
  if (options.fallbackModels && options.fallbackModels.length > 0) members.push(fallbackModels(options.fallbackModels, options.onFallback));
  return [...replacePlugins(members, options.replace ?? []), ...(options.plugins ?? [])];
}

function demoProvider(delayMs = 0): Plugin {
  return scriptedProvider({ turns: demoModel(delayMs), name: 'demo', model: DEMO_MODEL_ID, recordRequests: false });
}

/** `LoadedSettings` as the CLI read them, in the config plugin's place. */
function loadedSettingsPlugin(loaded: LoadedConfig): Plugin {
  return definePlugin({
    name: 'config',
    provides: [LoadedSettings],
    register({ bind }) {
      bind(LoadedSettings).toConstantValue(loaded);
    },
  });
}

/** Binds the CLI's approver as the `ApprovalHandler` every approval chain ends with. */
export function approvalHandlerPlugin(handler: ApprovalHandler): Plugin {
  return definePlugin({
    name: 'cli-approvals',
    provides: [ApprovalHandler],
    register({ bind }) {
      bind(ApprovalHandler).toConstantValue(handler);
    },
  });
}
