import { describeError, parsePermissionMode, type ApprovalHandler } from '@tessera/contracts';
import type { IBackgroundTaskRunner } from '@tessera/plugin-background';
import { defaultFlags, type CliFlags } from '../args.js';
import type { CliIO, Subcommand } from '../io.js';
import { parseCommandFlags, untilStopped } from './shared.js';

const USAGE = `Usage: tessera worker [--redis <url>] [--queue <name>] [--prefix <p>] [--concurrency <n>] [--kinds process,scheduled,agent]
                      [--global-concurrency <n>] [--rate-limit <max>/<ms>] [--grace-ms <ms>] [--hand-back]
                      [--max-log-lines <n>] [--max-events <n>]
                      [--provider <profile>] [--model <id>] [--permission-mode <mode>] [--cwd <dir>]

Runs background tasks from a Redis queue (@tessera/plugin-background-bullmq): shell commands, cron
schedules and subagent jobs that processes composed with bullmqBackgroundRuntime() spawn. Start as many as you
like, on any machine that reaches Redis. SIGINT / SIGTERM stop taking jobs, let running tasks
finish for --grace-ms (default 30000), then cancel the rest (--hand-back: put them back on the
queue for another worker instead).

  --redis <url>        redis://[:password@]host:port[/db] (default TESSERA_REDIS_URL, else redis://127.0.0.1:6379)
  --queue <name>       the deployment's queue (default tessera-background)
  --prefix <p>         every Redis key starts with this (default tessera)
  --concurrency <n>    tasks at once in this worker, per kind (default 4)
  --global-concurrency <n>  tasks of each kind at once across all workers of the queue
  --rate-limit <max>/<ms>   at most <max> task starts per <ms> per kind, across all workers
                       (both apply to every kind in --kinds; for scheduled, each cron fire counts)
  --kinds <list>       process, scheduled, agent (default process,scheduled; shell and cron name the
                       first two). Agent tasks run as
                       subagent sessions of this worker's own kernel: the CLI preset composed from
                       the settings of --cwd, its provider and permission rules; a call needing
                       approval is refused with the rule to add, as in print mode.
  --grace-ms <ms>      how long running tasks may finish after SIGINT / SIGTERM (default 30000)
  --hand-back          at shutdown, put unfinished tasks back on the queue instead of cancelling them
  --max-log-lines <n>  log lines kept per task (default 10000; give the clients' maxLogLines)
  --max-events <n>     event stream entries kept, about (default 100000; give the clients' maxEvents)
  --provider <profile> agent tasks: the provider profile (as tessera --provider)
  --model <id>         agent tasks: the model
  --permission-mode <mode>  agent tasks: default, acceptEdits, plan or bypassPermissions
  --cwd <dir>          agent tasks: the folder whose settings compose the kernel (default the current one)
`;

/** Other names of the task kinds: `shell` tasks are `process` tasks, `cron` tasks `scheduled` ones. */
const KIND_ALIASES: Readonly<Record<string, string>> = { shell: 'process', cron: 'scheduled' };

/** `redis://[:password@]host:port[/db]` as ioredis options; a located error for anything else. */
export function redisOptions(url: string): { host: string; port: number; password?: string; username?: string; db?: number; tls?: Record<string, never> } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Shown without whatever stands before an "@": a mistyped URL may still carry the password.
    throw new Error(`--redis ${JSON.stringify((url.includes('@') ? `…@${url.slice(url.lastIndexOf('@') + 1)}` : url))} is not a URL; use redis://host:port`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error(`--redis must be a redis:// (or rediss:// for TLS) URL (got ${parsed.protocol}//…)`);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : undefined;
  if (db !== undefined && (!Number.isInteger(db) || db < 0)) throw new Error(`--redis: the database ${parsed.pathname.slice(1)} is not a number`);
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(db === undefined ? {} : { db }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

const KINDS = ['process', 'scheduled', 'agent'] as const;
const DEFAULT_KINDS = ['process', 'scheduled'] as const;

/**
 * The `agent` runner of a worker: subagent sessions of a kernel composed here from the CLI preset
 * (settings, provider, permission rules, agent definitions of `flags.cwd`). Nobody can answer a
 * permission ask on a worker, so asks are refused with the rule that would allow the call.
 */
async function agentRunner(flags: CliFlags, io: CliIO): Promise<{ runner: IBackgroundTaskRunner; close(): Promise<void> }> {
  const [{ composeHost }, subagentsModule] = await Promise.all([import('../host-sessions.js'), import('@tessera/plugin-subagents')]);
  const approvals: ApprovalHandler = {
    requestApproval: async (request) => ({
      behavior: 'deny',
      message: `Permission to use ${request.toolName} was denied: background agents on a worker have no one to ask. To allow it, add "${request.suggestedRule ?? request.toolName}" to permissions.allow in the worker's settings (.tessera/settings.json of --cwd, or ~/.tessera/settings.json).`,
    }),
  };
  const host = await composeHost({ flags, io, approvals });
  const { AgentDefinitions, GitWorktreeIsolationAdapter, createInProcessSubagentRunner, createSubagentTaskRunner, createWorktreeSubagentRunner } = subagentsModule;
  const mode = flags.permissionMode === undefined ? undefined : parsePermissionMode(flags.permissionMode);
  const inner = createInProcessSubagentRunner({ kernel: host.kernel, definitions: host.kernel.get(AgentDefinitions), ...(mode === undefined ? {} : { permissionMode: mode }) });
  const runner = createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: new GitWorktreeIsolationAdapter(), hooks: host.kernel.hooks });
  return { runner: createSubagentTaskRunner(runner), close: () => host.close() };
}

/** `tessera worker`: a BullMQ background worker process. */
export const runWorkerCommand: Subcommand = async (argv, io) => {
  const values = parseCommandFlags(
    argv,
    { redis: { type: 'string' }, queue: { type: 'string' }, prefix: { type: 'string' }, concurrency: { type: 'string' }, kinds: { type: 'string' }, 'grace-ms': { type: 'string' }, 'global-concurrency': { type: 'string' }, 'rate-limit': { type: 'string' }, 'hand-back': { type: 'boolean' }, 'max-log-lines': { type: 'string' }, 'max-events': { type: 'string' }, provider: { type: 'string' }, model: { type: 'string' }, 'permission-mode': { type: 'string' }, cwd: { type: 'string' } },
    USAGE,
    io,
  );
  if (typeof values === 'number') return values;
  let connection: ReturnType<typeof redisOptions>;
  const concurrency = values.concurrency === undefined ? 4 : Number(values.concurrency);
  const graceMs = values['grace-ms'] === undefined ? 30_000 : Number(values['grace-ms']);
  let globalConcurrency: number | undefined;
  let rateLimit: { max: number; durationMs: number } | undefined;
  const kinds = typeof values.kinds === 'string' ? [...new Set(values.kinds.split(',').map((kind) => kind.trim()).filter((kind) => kind !== '').map((kind) => KIND_ALIASES[kind] ?? kind))] : [...DEFAULT_KINDS];
  try {
    connection = redisOptions(typeof values.redis === 'string' ? values.redis : (io.env.TESSERA_REDIS_URL ?? 'redis://127.0.0.1:6379'));
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`--concurrency must be a whole number of at least 1 (got ${String(values.concurrency)})`);
    if (!Number.isFinite(graceMs) || graceMs < 0) throw new Error(`--grace-ms must be a number of milliseconds (got ${String(values['grace-ms'])})`);
    if (typeof values['global-concurrency'] === 'string') {
      globalConcurrency = Number(values['global-concurrency']);
      if (!Number.isInteger(globalConcurrency) || globalConcurrency < 1) throw new Error(`--global-concurrency must be a whole number of at least 1 (got ${values['global-concurrency']})`);
    }
    if (typeof values['rate-limit'] === 'string') {
      const match = /^(\d+)\/(\d+)$/.exec(values['rate-limit']);
      if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) throw new Error(`--rate-limit must look like <max>/<ms>, e.g. 10/1000 (got ${values['rate-limit']})`);
      rateLimit = { max: Number(match[1]), durationMs: Number(match[2]) };
    }
    for (const flag of ['max-log-lines', 'max-events'] as const) {
      const value = values[flag];
      if (typeof value === 'string' && (!/^\d+$/.test(value) || Number(value) < 1)) throw new Error(`--${flag} must be a whole number of at least 1 (got ${value})`);
    }
    if (typeof values['permission-mode'] === 'string' && parsePermissionMode(values['permission-mode']) === undefined) {
      throw new Error(`--permission-mode ${values['permission-mode']} is not a permission mode Tessera has (default or manual, acceptEdits, plan, bypassPermissions, dontAsk; Claude Code's auto is not supported)`);
    }
    const unknown = kinds.filter((kind) => !(KINDS as readonly string[]).includes(kind));
    if (unknown.length > 0) throw new Error(`--kinds: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not run by this command (it runs ${KINDS.join(', ')})`);
  } catch (error) {
    io.stderr(`${describeError(error)}\n`);
    return 2;
  }
  const { probeRedis, startBackgroundWorker } = await import('@tessera/plugin-background-bullmq');
  let worker;
  let agentHost: { runner: IBackgroundTaskRunner; close(): Promise<void> } | undefined;
  try {
    // One attempt first: the worker's own connections retry forever, which is right once it runs
    // but hides a wrong address at start-up.
    await probeRedis(connection, { timeoutMs: 5_000 });
    if (kinds.includes('agent')) {
      const flags = {
        ...defaultFlags(),
        ...(typeof values.cwd === 'string' ? { cwd: values.cwd } : {}),
        ...(typeof values.provider === 'string' ? { provider: values.provider } : {}),
        ...(typeof values.model === 'string' ? { model: values.model } : {}),
        ...(typeof values['permission-mode'] === 'string' ? { permissionMode: values['permission-mode'] } : {}),
      };
      agentHost = await agentRunner(flags, io);
    }
    worker = await startBackgroundWorker({
      connection,
      ...(typeof values.queue === 'string' ? { queue: values.queue } : {}),
      ...(typeof values.prefix === 'string' ? { prefix: values.prefix } : {}),
      concurrency,
      ...(globalConcurrency === undefined ? {} : { globalConcurrency: Object.fromEntries(kinds.map((kind) => [kind, globalConcurrency])) }),
      ...(rateLimit === undefined ? {} : { rateLimit: Object.fromEntries(kinds.map((kind) => [kind, rateLimit])) }),
      kinds: kinds as Array<(typeof KINDS)[number]>,
      ...(typeof values['max-log-lines'] === 'string' ? { maxLogLines: Number(values['max-log-lines']) } : {}),
      ...(typeof values['max-events'] === 'string' ? { maxEvents: Number(values['max-events']) } : {}),
      ...(agentHost ? { runners: [agentHost.runner] } : {}),
      onError: (error, context) => io.stderr(`worker: ${context.phase}${context.taskId ? ` (task ${context.taskId})` : ''}: ${describeError(error)}\n`),
    });
  } catch (error) {
    io.stderr(`Could not start the worker: ${describeError(error)}\n`);
    await agentHost?.close().catch(() => undefined);
    return 1;
  }
  io.stdout(`Tessera worker ${worker.id} is taking ${kinds.join(', ')} tasks from Redis at ${connection.host}:${connection.port}\n`);
  await untilStopped();
  await worker.shutdown({ graceMs, reason: 'the worker was stopped', unfinished: values['hand-back'] === true ? 'hand-back' : 'cancel' });
  await agentHost?.close().catch((error: unknown) => io.stderr(`worker: closing the agent kernel: ${describeError(error)}\n`));
  io.stderr('Worker stopped.\n');
  return 0;
};
