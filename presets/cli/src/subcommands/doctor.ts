import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { resolve } from 'node:path';
import { describeError } from '@tessera/contracts';
import { loadContext } from '@tessera/formats';
import { createKernel, type KernelDescription } from '@tessera/kernel';
import type { McpServerDeclared } from '@tessera/plugin-mcp';
import { McpClients } from '@tessera/plugin-mcp/plugin';
import { readProjectMemory } from '@tessera/plugin-system-prompt';
import { CliUsageError, defaultFlags, splitToolList } from '../args.js';
import type { CliIO, Subcommand } from '../io.js';
import { cliMcpOptions } from '../mcp-setup.js';
import { cliPreset } from '../preset.js';
import { chooseProvider } from '../provider-selection.js';
import { checkSettingSources, formatDiagnostic, loadCliSettings } from '../settings.js';
import { TESSERA_VERSION } from '../version.js';
import { redisOptions } from './worker.js';

const USAGE = `Usage: tessera doctor [--json] [--no-network] [--provider <profile>] [--cwd <dir>] [--setting-sources <sources>] [--redis <url>] [--queue <name>] [--prefix <p>]

Checks the setup: Tessera's version, the settings layers and their problems, which provider
would be used (and whether its server answers), the context files (AGENTS.md, CLAUDE.md, the
project memory index, …), the MCP servers (not started), and the composed plugins with what each provides and
taps. --setting-sources user,project,local ("" for none) limits the settings layers and
context files to those sources, as it does for a run. With --redis (or TESSERA_REDIS_URL):
whether Redis answers, and the background queues' depths and workers.
`;

interface DoctorReport {
  version: string;
  node: string;
  cwd: string;
  settings: Array<{ file: string; scope: string; exists: boolean; failed: boolean }>;
  problems: string[];
  provider: { source?: string; type?: string; model?: string; baseURL?: string; reachable?: boolean | 'skipped'; detail?: string; error?: string };
  contextFiles: Array<{ path: string; scope: string; chars: number; truncated: boolean }>;
  /** As a session in `cwd` would get them (none is started): `.mcp.json`, `~/.claude.json`, bundle plugins. */
  mcpServers: McpServerDeclared[];
  plugins: KernelDescription['plugins'];
  redis?: RedisReport;
}

interface RedisReport {
  target: string;
  reachable: boolean;
  version?: string;
  pingMs?: number;
  error?: string;
  queues?: Array<{ kind: string; name: string; waiting: number; active: number; delayed: number; prioritized: number; failed: number; workers: readonly string[]; globalConcurrency?: number }>;
}

/** `tessera doctor`: a report of what the CLI would run with; exit 1 when something is broken. */
export const runDoctorCommand: Subcommand = async (argv, io) => {
  let json = false;
  let network = true;
  let providerFlag: string | undefined;
  let cwd = io.cwd;
  let redisUrl = io.env.TESSERA_REDIS_URL;
  let queue: string | undefined;
  let prefix: string | undefined;
  let settingSources: string[] | undefined;
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (arg === '-h' || arg === '--help') {
      io.stdout(USAGE);
      return 0;
    }
    if (arg === '--json') json = true;
    else if (arg === '--no-network') network = false;
    else if (arg === '--provider' && argv[index + 1] !== undefined) providerFlag = argv[++index];
    else if (arg === '--cwd' && argv[index + 1] !== undefined) cwd = resolve(io.cwd, argv[++index]!);
    else if (arg === '--redis' && argv[index + 1] !== undefined) redisUrl = argv[++index];
    else if (arg === '--queue' && argv[index + 1] !== undefined) queue = argv[++index];
    else if (arg === '--prefix' && argv[index + 1] !== undefined) prefix = argv[++index];
    // As the main command's list flag: comma-separated, `""` for none.
    else if (arg === '--setting-sources' && argv[index + 1] !== undefined) settingSources = splitToolList(argv[++index]!);
    else if (arg.startsWith('--setting-sources=')) settingSources = splitToolList(arg.slice('--setting-sources='.length));
    else {
      io.stderr(`error: unknown option '${arg}'\n${USAGE}`);
      return 2;
    }
  }
  if (settingSources !== undefined) {
    try {
      checkSettingSources(settingSources);
    } catch (error) {
      if (!(error instanceof CliUsageError)) throw error;
      io.stderr(`${error.message}\n${USAGE}`);
      return 2;
    }
  }
  const report = await diagnose(io, cwd, providerFlag, network, settingSources);
  if (redisUrl !== undefined && redisUrl !== '') report.redis = await diagnoseRedis(redisUrl, queue, prefix);
  if (json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else io.stdout(render(report));
  const broken = report.problems.some((problem) => problem.startsWith('Settings error')) || report.provider.error !== undefined || report.provider.reachable === false || report.redis?.reachable === false;
  return broken ? 1 : 0;
};

async function diagnose(io: CliIO, cwd: string, providerFlag: string | undefined, network: boolean, settingSources: string[] | undefined): Promise<DoctorReport> {
  const report: DoctorReport = {
    version: TESSERA_VERSION,
    node: process.version,
    cwd,
    settings: [],
    problems: [],
    provider: {},
    contextFiles: [],
    mcpServers: [],
    plugins: [],
  };
  const flags = { ...defaultFlags(), ...(providerFlag === undefined ? {} : { provider: providerFlag }), ...(settingSources === undefined ? {} : { settingSources }) };
  let settings;
  try {
    settings = loadCliSettings({ cwd, home: io.home, env: io.env, flags });
  } catch (error) {
    report.problems.push(`Settings error: ${describeError(error)}`);
    return report;
  }
  report.settings = settings.loaded.layers.map((layer) => ({ file: layer.file, scope: layer.scope, exists: layer.exists, failed: layer.failed }));
  report.problems.push(...settings.loaded.diagnostics.map(formatDiagnostic));

  const choice = chooseProvider(providerFlag, settings.providerSettings, io.env);
  if (choice.kind === 'none') report.provider.error = choice.message;
  else if (choice.kind === 'demo') report.provider = { source: choice.source, type: 'demo', model: 'tessera-demo-model', reachable: 'skipped', detail: 'the built-in demo model needs no server' };
  else {
    const baseURL = choice.profile.baseURL ?? (choice.profile.type === 'anthropic' ? 'https://api.anthropic.com' : 'https://api.openai.com/v1');
    report.provider = { source: choice.source, type: choice.profile.type, ...(choice.profile.model === undefined ? {} : { model: choice.profile.model }), baseURL: withoutCredentials(baseURL) };
    if (!network) report.provider.reachable = 'skipped';
    else {
      const reached = await reach(baseURL);
      report.provider.reachable = reached.ok;
      report.provider.detail = reached.detail;
    }
  }

  // The files a run's system prompt reads, with the same `--setting-sources`.
  const sources = settings.settingSources;
  const context = loadContext({ cwd, home: io.home, ...(sources === undefined ? {} : { scopes: sources }) });
  report.contextFiles = context.files.map((file) => ({ path: file.path, scope: file.scope, chars: file.content.length, truncated: file.truncated }));
  report.problems.push(...context.diagnostics.map(formatDiagnostic));
  const memory = sources === undefined || sources.includes('project') ? readProjectMemory(cwd) : undefined;
  if (memory !== undefined) report.contextFiles.push({ path: memory.path, scope: 'project', chars: memory.content.length, truncated: memory.truncated });

  // MCP servers as a run reads them (the same `--setting-sources`); problems in their files are listed.
  const mcpSetup = cliMcpOptions({ flags, home: io.home, cwd, settings: settings.loaded.config as Record<string, unknown>, settingSources: sources, show: (message) => report.problems.push(message) });
  report.problems.push(...mcpSetup.warnings);
  try {
    const kernel = await createKernel({
      plugins: cliPreset({
        cwd,
        home: io.home,
        mcp: mcpSetup.mcp,
        provider: choice.kind === 'profile' ? { kind: 'profile', name: choice.name, profile: choice.profile } : { kind: 'demo' },
        permissions: settings.permissions,
        hookFiles: settings.hookFiles,
        hookConfigs: settings.hookConfigs,
        loadedSettings: settings.loaded,
        ...(sources === undefined ? {} : { settingSources: sources }),
        sessionLog: false,
      }),
    });
    report.plugins = kernel.describe().plugins;
    report.mcpServers = (await kernel.getOptional(McpClients)?.declared({ sessionId: 'doctor', cwd })) ?? [];
    await kernel.shutdown();
  } catch (error) {
    report.problems.push(`Composition error: ${describeError(error)}`);
  }
  return report;
}

/** Redis as the BullMQ runtime and the server replicas use it: reachable, and the background queues. */
async function diagnoseRedis(url: string, queue: string | undefined, prefix: string | undefined): Promise<RedisReport> {
  const target = withoutCredentials(url);
  let connection;
  try {
    connection = redisOptions(url);
  } catch (error) {
    return { target, reachable: false, error: describeError(error) };
  }
  const { backgroundQueueStatus, probeRedis } = await import('@tessera/plugin-background-bullmq');
  try {
    const probe = await probeRedis(connection, { timeoutMs: 3_000 });
    const queues = await backgroundQueueStatus({ connection, ...(queue === undefined ? {} : { queue }), ...(prefix === undefined ? {} : { prefix }) });
    return { target, reachable: true, version: probe.version, pingMs: Math.round(probe.pingMs * 100) / 100, queues };
  } catch (error) {
    return { target, reachable: false, error: describeError(error) };
  }
}

/** A URL as it may be shown: a user name and password in it are replaced by `***`. */
function withoutCredentials(text: string): string {
  try {
    const url = new URL(text);
    if (url.username === '' && url.password === '') return text;
    url.username = url.username === '' ? '' : '***';
    url.password = url.password === '' ? '' : '***';
    return url.toString();
  } catch {
    return text.replace(/\/\/[^/@]*@/, '//***@');
  }
}

/** Any HTTP answer from the provider's base URL counts as reachable (an auth error included). */
function reach(baseURL: string): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolvePromise) => {
    let url: URL;
    try {
      url = new URL(baseURL);
    } catch {
      resolvePromise({ ok: false, detail: 'the base URL is not a URL' });
      return;
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: 'GET', timeout: 5000 }, (response) => {
      response.resume();
      resolvePromise({ ok: true, detail: `HTTP ${response.statusCode} from ${url.origin}` });
    });
    request.on('timeout', () => request.destroy(new Error('no answer within 5 s')));
    request.on('error', (error) => resolvePromise({ ok: false, detail: `${url.origin}: ${describeError(error)}` }));
    request.end();
  });
}

function render(report: DoctorReport): string {
  const lines: string[] = [];
  lines.push(`Tessera ${report.version} on Node ${report.node}`, `cwd: ${report.cwd}`, '', 'Settings layers (lowest precedence first):');
  for (const layer of report.settings) lines.push(`  ${layer.exists ? (layer.failed ? '✗' : '✓') : '·'} ${layer.scope.padEnd(7)} ${layer.file}${layer.exists ? '' : ' (not present)'}`);
  lines.push('', 'Provider:');
  if (report.provider.error) lines.push(`  ✗ ${report.provider.error.split('\n').join('\n    ')}`);
  else {
    const { source, type, model, baseURL, reachable, detail } = report.provider;
    lines.push(`  ${reachable === false ? '✗' : '✓'} ${type}${model ? ` (${model})` : ''} from ${source}${baseURL ? ` — ${baseURL}` : ''}`);
    if (detail) lines.push(`    ${reachable === 'skipped' ? 'not checked' : reachable ? 'reachable' : 'unreachable'}: ${detail}`);
  }
  lines.push('', 'Context files:');
  if (report.contextFiles.length === 0) lines.push('  none (AGENTS.md, CLAUDE.md, .tessera/TESSERA.md …)');
  for (const file of report.contextFiles) lines.push(`  ${file.scope.padEnd(7)} ${file.path} (${file.chars} chars${file.truncated ? ', truncated' : ''})`);
  lines.push('', 'MCP servers (not started here):');
  if (report.mcpServers.length === 0) lines.push('  none configured');
  for (const server of report.mcpServers) {
    const mark = server.status === 'enabled' ? '✓' : server.status === 'disabled' ? '✗' : '?';
    const from = server.plugin ? `plugin ${server.plugin}` : (server.file ?? server.scope);
    lines.push(`  ${mark} ${server.name} (${server.transport}, ${server.scope}) from ${from}${server.status === 'enabled' ? '' : `: ${server.status}`}`);
  }
  if (report.redis) {
    const redis = report.redis;
    lines.push('', 'Redis:');
    if (!redis.reachable) lines.push(`  ✗ ${redis.target}: ${redis.error ?? 'unreachable'}`);
    else {
      lines.push(`  ✓ ${redis.target} — Redis ${redis.version}, ping ${redis.pingMs} ms`);
      for (const queue of redis.queues ?? []) {
        const limit = queue.globalConcurrency === undefined ? '' : `, at most ${queue.globalConcurrency} at once`;
        lines.push(`  ${queue.name}: ${queue.waiting + queue.prioritized} waiting, ${queue.active} active, ${queue.delayed} delayed, ${queue.failed} failed${limit}; ${queue.workers.length === 0 ? 'no workers' : `workers: ${queue.workers.join(', ')}`}`);
      }
    }
  }
  lines.push('', `Plugins (${report.plugins.length}):`);
  for (const plugin of report.plugins) {
    const parts = [plugin.provides.length > 0 ? `provides ${plugin.provides.join(', ')}` : '', plugin.contributes.length > 0 ? `contributes ${plugin.contributes.join(', ')}` : '', plugin.taps.length > 0 ? `taps ${[...new Set(plugin.taps.map((tap) => tap.hook))].join(', ')}` : '']
      .filter(Boolean)
      .join('; ');
    lines.push(`  ${plugin.name}${parts ? ` — ${parts}` : ''}`);
  }
  lines.push('', report.problems.length === 0 ? 'No problems found.' : `Problems (${report.problems.length}):`);
  for (const problem of report.problems) lines.push(`  ${problem}`);
  return `${lines.join('\n')}\n`;
}
