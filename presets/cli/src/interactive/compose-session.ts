import { createKernel, InteractiveSession, type Kernel } from '@tessera/kernel';
import { PromptHistory } from '@tessera/plugin-prompt-history';
import type { ApprovalHandler } from '@tessera/contracts';
import type { IResumableSession } from '@tessera/kernel';
import type { CliFlags } from '../args.js';
import type { CliIO } from '../io.js';
import { loadCliPreset } from '../load-cli-preset.js';
import { refuseSessionIdInUse, resolveResume } from '../print/headless.js';
import { runPresetOptions } from '../run-preset-options.js';
import { resolveModelAlias, type ProviderChoice } from '../provider-selection.js';
import type { CliSettings } from '../settings.js';
import { cliCommandHostAdapters, listBundlePlugins, reloadBundlePlugins } from '../host-adapters.js';
import { cliMcpOptions } from '../mcp-setup.js';
import { McpClients } from '@tessera/plugin-mcp/plugin';
import { readSettingsForEdit, writeSettings } from '../subcommands/shared.js';
import { join } from 'node:path';

/** The kernel and the first session behind the interactive terminal, and what the app asks of them. */
export interface ComposedSession {
  kernel: Kernel;
  interactive: InteractiveSession;
  /** A new session of the same kernel: resumed (`id`) or fresh. */
  open(id: string | undefined): Promise<InteractiveSession>;
  listSessions(cwd: string): Promise<IResumableSession[]>;
  recentPrompts(): string[];
  /** `/reload-plugins`: re-reads the bundle plugins; a line for the user. */
  reloadPlugins(): Promise<string>;
  /** `/plugin` with no arguments: the installed plugins, as text. */
  listPlugins(): Promise<string>;
  /** Project `.mcp.json` servers waiting for approval (after the servers were declared). */
  mcpNeedingApproval(): Promise<string[]>;
  /** Approves them for this session and records it in `.tessera/settings.local.json` (`all`: every future one too). */
  approveMcp(names: readonly string[], all: boolean): string;
}

/**
 * Composes the CLI preset and opens the first session. Loaded after the first paint: this is
 * where the kernel, the provider SDK and the plugins' modules come in.
 */
export async function composeSession(options: {
  flags: CliFlags;
  io: CliIO;
  cwd: string;
  settings: CliSettings;
  choice: Exclude<ProviderChoice, { kind: 'none' }>;
  approvals: ApprovalHandler;
  /** Where sign-in requests for MCP servers are shown. */
  show: (message: string) => void;
}): Promise<ComposedSession> {
  const { flags, io, cwd, settings, choice, approvals, show } = options;
  const mcpSetup = cliMcpOptions({ flags, home: io.home, cwd, settings: settings.loaded.config as Record<string, unknown>, settingSources: settings.settingSources, show });
  for (const warning of mcpSetup.warnings) show(warning);
  const kernel = await createKernel({ plugins: await loadCliPreset(runPresetOptions({ flags, io, cwd, settings, choice, approvalHandler: approvals, mcp: mcpSetup.mcp })) });
  const make = (extra: Partial<ConstructorParameters<typeof InteractiveSession>[0]>): InteractiveSession =>
    new InteractiveSession({
      kernel,
      cwd,
      ...(flags.model === undefined ? {} : { model: resolveModelAlias(flags.model)! }),
      ...(settings.permissionMode === undefined ? {} : { permissionMode: settings.permissionMode }),
      ...(flags.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: flags.appendSystemPrompt }),
      ...(flags.systemPrompt === undefined ? {} : { systemPrompt: flags.systemPrompt }),
      sessionOptions: { ...(flags.maxTurns === undefined ? {} : { maxTurns: flags.maxTurns }) },
      commandHostAdapters: cliCommandHostAdapters(kernel),
      ...extra,
    });
  try {
    // As print mode: --session-id names a new session; one already stored is refused (exit 1).
    await refuseSessionIdInUse(kernel, flags);
    const resumeId = await resolveResume(kernel, flags, cwd);
    const interactive = make({
      ...(flags.sessionId === undefined ? {} : { sessionId: flags.sessionId }),
      ...(resumeId === undefined ? {} : { resumeSessionId: resumeId }),
      ...(flags.continue ? { continueMostRecent: true } : {}),
      ...(flags.forkSession ? { forkSession: true } : {}),
    });
    await interactive.whenReady();
    const pool = kernel.getOptional(McpClients);
    // Servers start now, not at the first prompt.
    const declared = pool ? pool.connect({ sessionId: interactive.getSessionId(), cwd }).catch(() => undefined) : Promise.resolve();
    return {
      kernel,
      interactive,
      async open(id) {
        const next = make(id === undefined ? {} : { resumeSessionId: id });
        await next.whenReady();
        return next;
      },
      listSessions: async (dir) => (await InteractiveSession.listResumableSessions(kernel, dir)).filter((stored) => stored.cwd === dir),
      reloadPlugins: () => reloadBundlePlugins(kernel),
      listPlugins: () => listBundlePlugins(kernel),
      async mcpNeedingApproval() {
        await declared;
        return (pool?.servers() ?? []).filter((server) => server.status === 'needs approval' && server.scope === 'project').map((server) => server.name);
      },
      approveMcp(names, all) {
        for (const name of names) pool?.approveProjectServer(name);
        const file = join(cwd, '.tessera', 'settings.local.json');
        const current = readSettingsForEdit(file);
        const enabled = Array.isArray(current.enabledMcpjsonServers) ? current.enabledMcpjsonServers.filter((name): name is string => typeof name === 'string') : [];
        writeSettings(file, all ? [{ path: ['enableAllProjectMcpServers'], value: true }] : [{ path: ['enabledMcpjsonServers'], value: [...new Set([...enabled, ...names])] }]);
        return '.tessera/settings.local.json';
      },
      recentPrompts() {
        try {
          return kernel.get(PromptHistory).getRecent(200).map((entry) => entry.prompt);
        } catch {
          return [];
        }
      },
    };
  } catch (error) {
    await kernel.shutdown().catch(() => undefined);
    throw error;
  }
}
