import { resolve } from 'node:path';
import type { ApprovalHandler, ICommandHostAdapters } from '@tessera/contracts';
import { createKernel, type Kernel, type Plugin } from '@tessera/kernel';
import { fairRoundsPlugin, HostSessions, hostSessionsPlugin, type SessionFactory } from '@tessera/session-hub';
import type { CliFlags } from './args.js';
import { CliUsageError } from './args.js';
import { cliCommandHostAdapters } from './host-adapters.js';
import type { CliIO } from './io.js';
import { loadCliPreset } from './load-cli-preset.js';
import { cliMcpOptions } from './mcp-setup.js';
import { runPresetOptions } from './run-preset-options.js';
import { chooseProvider, resolveModelAlias } from './provider-selection.js';
import { loadCliSettings } from './settings.js';

/** One kernel serving many sessions, for a transport host (`tessera acp`, `tessera mcp serve`, `tessera serve`). */
export interface ComposedHost {
  kernel: Kernel;
  sessions: SessionFactory;
  close(): Promise<void>;
}

/**
 * Composes the CLI preset once for a host whose clients open sessions: settings and the provider
 * as for a run, permission asks to `approvals` (a router that sends each to its session's
 * client). Diagnostics go to stderr: stdout may be the protocol channel. `replace` swaps preset
 * members for plugins providing the same tokens (`tessera serve --redis`: the Redis session store).
 */
export async function composeHost(options: {
  flags: CliFlags;
  io: CliIO;
  approvals: ApprovalHandler;
  allowBypassPermissions?: boolean;
  replace?: readonly Plugin[];
  plugins?: readonly Plugin[];
  /**
   * The sessions' clients are remote (`tessera serve`): commands get no host-wide adapters (the
   * bundle-plugin manager), so no client can change what every other client's sessions run.
   * Local hosts (ACP, MCP over stdio) act for the user at the terminal and keep them.
   */
  remoteClients?: boolean;
}): Promise<ComposedHost> {
  const { flags, io, approvals } = options;
  const cwd = resolve(io.cwd, flags.cwd ?? '.');
  const settings = loadCliSettings({ cwd, home: io.home, env: io.env, flags });
  for (const warning of settings.warnings) io.stderr(`${warning}\n`);
  const choice = chooseProvider(flags.provider, settings.providerSettings, io.env);
  if (choice.kind === 'none') throw new CliUsageError(choice.message);
  const mcpSetup = cliMcpOptions({ flags, home: io.home, cwd, settings: settings.loaded.config as Record<string, unknown>, settingSources: settings.settingSources, show: (message) => io.stderr(`${message}\n`) });
  for (const warning of mcpSetup.warnings) io.stderr(`${warning}\n`);
  const runOptions = runPresetOptions({ flags, io, cwd, settings, choice, approvalHandler: approvals, mcp: mcpSetup.mcp });
  // Many clients' sessions share this event loop: after each model reply a session waits its turn (fairRoundsPlugin).
  const permissionMode = settings.permissionMode === 'bypassPermissions' && options.allowBypassPermissions !== true ? undefined : settings.permissionMode;
  // Every session of this host (and of the transports composed into it) gets these defaults.
  const sessionDefaults = hostSessionsPlugin((kernel) => ({
    ...(flags.model === undefined ? {} : { model: resolveModelAlias(flags.model)! }),
    ...(permissionMode === undefined ? {} : { permissionMode }),
    ...(flags.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: flags.appendSystemPrompt }),
    commandHostAdapters: options.remoteClients ? sessionScopedAdapters(cliCommandHostAdapters(kernel)) : cliCommandHostAdapters(kernel),
  }));
  const presetOptions = { ...runOptions, plugins: [...(runOptions.plugins ?? []), fairRoundsPlugin(), sessionDefaults, ...(options.plugins ?? [])] };
  const kernel = await createKernel({ plugins: await loadCliPreset(options.replace ? { ...presetOptions, replace: options.replace } : presetOptions) });
  return { kernel, sessions: kernel.get(HostSessions), close: () => kernel.shutdown() };
}

/** The adapters a remote client's commands may use: all but the host-wide plugin manager (`/mcp` only reads server status). */
function sessionScopedAdapters(adapters: ICommandHostAdapters): ICommandHostAdapters {
  const { plugins: _hostWide, ...scoped } = adapters;
  return scoped;
}
