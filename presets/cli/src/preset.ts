import { join } from 'node:path';
import { ApprovalHandler, type HooksConfig, type HooksSource, type ProviderProfile } from '@tessera/contracts';
import { definePlugin, replacePlugins, type Plugin, type PluginInput } from '@tessera/kernel';
import { inMemorySessionStore } from '@tessera/kernel/testing';
import { backgroundRuntime } from '@tessera/plugin-background';
import { editCheckpoints } from '@tessera/plugin-checkpoints';
import { builtinCommands } from '@tessera/plugin-commands';
import { compaction } from '@tessera/plugin-compaction';
import { configPlugin } from '@tessera/plugin-config';
import { contextWindow } from '@tessera/plugin-context-window';
import { hooksPlugin } from '@tessera/plugin-hooks';
import { projectMemory, userLocalStorage } from '@tessera/plugin-memory';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { promptHistory } from '@tessera/plugin-prompt-history';
import { promptFileReferences } from '@tessera/plugin-prompt-references';
import { anthropicProviderFactory } from '@tessera/plugin-provider-anthropic';
import { openaiProviderFactory, providerFromProfile } from '@tessera/plugin-provider-openai';
import { scriptedProvider } from '@tessera/plugin-provider-scripted';
import { sessionLogger } from '@tessera/plugin-session-logger';
import { jsonlSessionStore } from '@tessera/plugin-session-store-jsonl';
import { skills } from '@tessera/plugin-skills';
import { subagents } from '@tessera/plugin-subagents';
import { systemPrompt } from '@tessera/plugin-system-prompt';
import { builtinTools, type BuiltinToolName } from '@tessera/plugin-tools';
import { DEMO_MODEL_ID, demoModel } from './demo-model.js';

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
  /** `--tools`: only these built-in tools (undefined: all). */
  tools?: readonly string[];
  /** `false` (`--no-session-persistence`): sessions live in memory only. */
  sessionPersistence?: boolean;
  /** `false` leaves out the per-session event log under `~/.tessera/logs`. */
  sessionLog?: boolean;
  /** Plugins that take the place of preset members providing the same token (e.g. a test store). */
  replace?: readonly Plugin[];
  /** Plugins added after the preset's. */
  plugins?: readonly PluginInput[];
}

const BUILTIN_TOOL_NAMES: readonly BuiltinToolName[] = ['Bash', 'BashOutput', 'KillShell', 'Read', 'Write', 'Edit', 'Glob', 'Grep', 'WebFetch', 'WebSearch'];

/**
 * The `tessera` CLI's composition: every first-party capability as a plugin. Pure: it reads no
 * file and builds nothing — each plugin does its own work when the kernel first needs it.
 */
export function cliPreset(options: CliPresetOptions): PluginInput[] {
  const home = options.home;
  const agentDir = home === undefined ? undefined : join(home, '.tessera', 'agent');
  const rules = options.permissions ?? {};
  const exclude = options.tools === undefined ? [] : BUILTIN_TOOL_NAMES.filter((name) => !options.tools!.includes(name));
  const members: Plugin[] = [
    configPlugin({ cwd: options.cwd, ...(home === undefined ? {} : { home }), ...(options.settingsFile === undefined ? {} : { settingsFile: options.settingsFile }) }),
    ...providerPlugins(options.provider),
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
    hooksPlugin({ files: [...(options.hookFiles ?? [])], configs: [...(options.hookConfigs ?? [])], projectDir: options.cwd }),
    ...builtinTools({ additionalDirectories: [...(rules.additionalDirectories ?? [])], exclude }),
    backgroundRuntime(),
    subagents({ cwd: options.cwd, ...(home === undefined ? {} : { home }) }),
    contextWindow(),
    compaction(),
    promptHistory(agentDir === undefined ? {} : { path: join(agentDir, 'history.db') }),
    promptFileReferences(),
    systemPrompt(home === undefined ? {} : { home }),
    editCheckpoints(),
    ...builtinCommands(),
    skills(home === undefined ? {} : { home }),
    projectMemory(),
    userLocalStorage(),
  ];
  if (options.sessionLog !== false) members.push(sessionLogger(home === undefined ? {} : { dir: join(home, '.tessera', 'logs') }));
  if (options.approvalHandler) members.push(approvalHandlerPlugin(options.approvalHandler));
  return [...replacePlugins(members, options.replace ?? []), ...(options.plugins ?? [])];
}

function providerPlugins(choice: CliPresetOptions['provider']): Plugin[] {
  if (choice.kind === 'demo') return [scriptedProvider({ turns: demoModel(choice.delayMs ?? 0), name: 'demo', model: DEMO_MODEL_ID, recordRequests: false })];
  // Both factories are contributed, so the profile's `type` picks one; the profile builds the provider.
  return [anthropicProviderFactory(), openaiProviderFactory(), providerFromProfile(choice.profile, choice.name === undefined ? {} : { profileName: choice.name })];
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
