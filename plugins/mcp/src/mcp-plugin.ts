import { homedir } from 'node:os';
import { join } from 'node:path';
import { CommandContribution, Diagnostics, McpServerSourceContribution, ToolSourceContribution, createToken, type DiagnosticsReporter, type McpServerSource } from '@tessera/contracts';
import { PluginOptionsError, Stage, definePlugin, type Plugin } from '@tessera/kernel';
import { CliMcpConfigSource, ProjectMcpJsonSource, StaticMcpServerSource } from './config-sources.js';
import { McpClientPool, type McpClientPoolOptions } from './mcp-client-pool.js';
import { promptCommandModule } from './mcp-prompt-commands.js';
import type { McpAuthorize, McpLog, McpProjectApproval, McpProjectApprovalSettings } from './mcp-types.js';

/** The kernel's MCP client pool (hosts read `/mcp` state and approve servers through it). */
export const McpClients = createToken<McpClientPool>('McpClients');

export interface McpClientPluginOptions {
  /** Read the project's `.mcp.json` (scope `project`, needs approval). Default true. */
  projectConfig?: boolean;
  /** Which `.mcp.json` servers may start: the settings keys, or a callback. Default: none until approved. */
  approval?: McpProjectApprovalSettings | McpProjectApproval;
  /** `mcpServers` from user settings (scope `user`). */
  userServers?: Record<string, unknown>;
  /** `mcpServers` from local (per-project, private) settings (scope `local`). */
  localServers?: Record<string, unknown>;
  /** Servers an SDK host composes in code (scope `sdk`, strongest). */
  servers?: Record<string, unknown>;
  /** `--mcp-config` values: file paths or inline JSON (scope `cli`). */
  mcpConfig?: readonly string[];
  /** Relative `--mcp-config` paths resolve here. Default `process.cwd()`. */
  mcpConfigBaseDir?: string;
  /** `--strict-mcp-config`: only the `mcpConfig` servers; every other source is ignored. */
  strictMcpConfig?: boolean;
  /** Default `MCP_TIMEOUT` or 5,000 ms: how long a session's first tools listing waits for servers. */
  startupTimeoutMs?: number;
  /** Default `MCP_TIMEOUT` or 30,000 ms per connection attempt (a server's start-up). */
  connectTimeoutMs?: number;
  /** Default `MCP_TOOL_TIMEOUT` or 600,000 ms per tool call. */
  toolTimeoutMs?: number;
  restart?: McpClientPoolOptions['restart'];
  /** How long the servers of a session that ended stay for it, in case the same id is opened again (default 30,000 ms; 0: released at once). */
  releaseGraceMs?: number;
  /** OAuth for remote servers. `directory` defaults to `~/.tessera/mcp-oauth`; `false` turns OAuth off. */
  oauth?: false | { directory?: string; redirectUrl?: string; authorize?: McpAuthorize };
  log?: McpLog;
  env?: NodeJS.ProcessEnv;
  clientInfo?: { name: string; version: string };
}

const NAME = 'mcp';
const FACTORY = 'mcpClient()';

/**
 * The MCP client: provides `McpClients` (the pool) and contributes a `ToolSource` with every
 * server's tools (`mcp__<server>__<tool>`) and a command module with their prompts. Servers come
 * from every bound `McpServerSourceContribution` plus the sources the options describe.
 */
export function mcpClient(options: McpClientPluginOptions = {}): Plugin {
  check(options);
  return definePlugin({
    name: NAME,
    provides: [McpClients],
    contributes: [ToolSourceContribution, CommandContribution],
    optional: [Diagnostics, McpServerSourceContribution],
    register({ bind, hooks }) {
      // Set when the pool is first resolved: a kernel that never used MCP has nothing to release.
      let pool: McpClientPool | undefined;
      bind(McpClients)
        .toResolvedValue(
          (contributed: McpServerSource[] | undefined, diagnostics: DiagnosticsReporter | undefined) => (pool = new McpClientPool(poolOptions(options, contributed ?? [], diagnostics))),
          [
            { serviceIdentifier: McpServerSourceContribution, isMultiple: true, optional: true },
            { serviceIdentifier: Diagnostics, optional: true },
          ],
        )
        .inSingletonScope();
      bind(ToolSourceContribution).toResolvedValue((pool: McpClientPool) => pool.toolSource, [McpClients]).inSingletonScope();
      bind(CommandContribution).toResolvedValue((pool: McpClientPool) => promptCommandModule(pool), [McpClients]).inSingletonScope();
      // Servers only an ended session used are closed with it, not at kernel shutdown.
      hooks.sessionEnd.tap({ name: `${NAME}:release`, stage: Stage.Observe }, ({ session }) => pool?.release(session.sessionId));
      return {
        async shutdown({ get }) {
          await get(McpClients).close();
        },
      };
    },
  });
}

function poolOptions(options: McpClientPluginOptions, contributed: readonly McpServerSource[], diagnostics: DiagnosticsReporter | undefined): McpClientPoolOptions {
  const cli = options.mcpConfig && options.mcpConfig.length > 0 ? [new CliMcpConfigSource(options.mcpConfig, options.mcpConfigBaseDir ?? process.cwd())] : [];
  const sources: McpServerSource[] = options.strictMcpConfig
    ? cli
    : [
        ...(options.servers ? [new StaticMcpServerSource('sdk servers', options.servers, 'sdk', 'mcpClient({ servers })')] : []),
        ...cli,
        ...(options.localServers ? [new StaticMcpServerSource('local settings', options.localServers, 'local', 'local settings')] : []),
        ...(options.projectConfig === false ? [] : [new ProjectMcpJsonSource()]),
        ...(options.userServers ? [new StaticMcpServerSource('user settings', options.userServers, 'user', 'user settings')] : []),
        ...contributed,
      ];
  return {
    sources,
    ...(options.approval ? { approval: options.approval } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.startupTimeoutMs ? { startupTimeoutMs: options.startupTimeoutMs } : {}),
    ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    ...(options.toolTimeoutMs ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
    ...(options.restart ? { restart: options.restart } : {}),
    ...(options.releaseGraceMs === undefined ? {} : { releaseGraceMs: options.releaseGraceMs }),
    oauth: options.oauth === false ? false : { directory: options.oauth?.directory ?? join(homedir(), '.tessera', 'mcp-oauth'), ...(options.oauth?.redirectUrl ? { redirectUrl: options.oauth.redirectUrl } : {}), ...(options.oauth?.authorize ? { authorize: options.oauth.authorize } : {}) },
    ...(options.log ? { log: options.log } : {}),
    ...(diagnostics ? { diagnostics } : {}),
    ...(options.clientInfo ? { clientInfo: options.clientInfo } : {}),
  };
}

function check(options: McpClientPluginOptions): void {
  const fail = (option: string, problem: string): never => {
    throw new PluginOptionsError(FACTORY, NAME, option, problem);
  };
  if (typeof options !== 'object' || options === null) fail('options', 'must be an object');
  for (const key of ['startupTimeoutMs', 'connectTimeoutMs', 'toolTimeoutMs'] as const) {
    const value = options[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) fail(key, `must be a positive number of milliseconds (got ${String(value)})`);
  }
  if (options.releaseGraceMs !== undefined && !(typeof options.releaseGraceMs === 'number' && Number.isFinite(options.releaseGraceMs) && options.releaseGraceMs >= 0)) {
    fail('releaseGraceMs', `must be a number of milliseconds, 0 or more (got ${String(options.releaseGraceMs)})`);
  }
  if (options.mcpConfig !== undefined && (!Array.isArray(options.mcpConfig) || options.mcpConfig.some((entry) => typeof entry !== 'string' || entry.trim() === ''))) fail('mcpConfig', 'must be a list of file paths or JSON strings');
  if (options.strictMcpConfig && (options.mcpConfig === undefined || options.mcpConfig.length === 0)) fail('strictMcpConfig', 'needs mcpConfig: strict mode uses only the --mcp-config servers');
  for (const key of ['userServers', 'localServers', 'servers'] as const) {
    const value = options[key];
    if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) fail(key, 'must be an object mapping server names to their configuration');
  }
  if (options.approval !== undefined && typeof options.approval !== 'function' && (typeof options.approval !== 'object' || options.approval === null)) fail('approval', 'must be the approval settings object or a function');
  if (options.oauth !== undefined && options.oauth !== false) {
    if (typeof options.oauth !== 'object' || options.oauth === null) fail('oauth', 'must be false or an object');
    if (options.oauth.authorize !== undefined && typeof options.oauth.authorize !== 'function') fail('oauth.authorize', 'must be a function');
  }
}
