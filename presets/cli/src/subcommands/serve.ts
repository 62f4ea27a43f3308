import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { describeError } from '@tessera/contracts';
import { hashToken, httpTransport, type HttpTransport, type TokenEntry } from '@tessera/plugin-transport-http';
import { mcpHttpMount } from '@tessera/plugin-transport-mcp';
import { ApprovalRouter, SessionCluster, startTransports, type StartedTransports } from '@tessera/session-hub';
import { z } from 'zod';
import { defaultFlags } from '../args.js';
import { composeHost } from '../host-sessions.js';
import type { Subcommand } from '../io.js';
import { parseCommandFlags, untilStopped } from './shared.js';
import { redisBackgroundPlugin, redisLocation, redisReplicaPlugin } from '../serve-replicas.js';

const USAGE = `Usage: tessera serve [--port <n>] [--host <addr>] [--root <dir>]... [--config <file>] [--provider <profile>] [--redis <url>]
       tessera serve --hash-token <token>

Serves sessions over HTTP: REST (create, list, rename, delete, resume), turns streamed in the
AI SDK UI message stream protocol (SSE), WebSocket, OpenAPI at /openapi.json. Every /v1 route
needs a bearer token; each token sees only its own sessions.

Tokens and limits come from --config (default ~/.tessera/server.json):
  { "tokens": [{ "id": "alice", "sha256": "<tessera serve --hash-token …>" }],
    "allowedRoots": ["/srv/projects"], "port": 8787, "hostname": "127.0.0.1",
    "corsOrigins": [], "allowBypassPermissions": false, "permissionTimeoutMs": 60000,
    "rateLimitPerMinute": 600, "maxBodyBytes": 1048576, "abortOnDisconnect": true,
    "redis": { "url": "redis://127.0.0.1:6379", "prefix": "tessera" } }
TESSERA_SERVER_TOKEN=<token> adds one token (owner "default") without a file.

Replicas: with "redis" (or --redis <url>, which wins) sessions are stored in Redis and any
number of servers sharing it (and the allowed roots) serve the same sessions: one turn at a
time per session across them, and a turn is streamed from whichever server a client asks.
With "redis": { …, "background": true } (or { "queue": "q", "agents": true }) background tasks
go through the same Redis too and run on tessera worker processes; every replica sees them.
`;

const serverConfig = z.strictObject({
  tokens: z.array(z.strictObject({ id: z.string().min(1).max(100), sha256: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex characters') })).optional(),
  allowedRoots: z.array(z.string().min(1)).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  hostname: z.string().min(1).optional(),
  corsOrigins: z.array(z.string().url()).optional(),
  allowBypassPermissions: z.boolean().optional(),
  permissionTimeoutMs: z.number().int().positive().optional(),
  rateLimitPerMinute: z.number().int().min(0).optional(),
  maxBodyBytes: z.number().int().positive().optional(),
  maxSessionsPerOwner: z.number().int().positive().optional(),
  maxConcurrentTurnsPerOwner: z.number().int().positive().optional(),
  abortOnDisconnect: z.boolean().optional(),
  redis: z
    .strictObject({
      url: z.string().regex(/^rediss?:\/\//, 'url must start with redis:// or rediss://'),
      prefix: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/, 'prefix must be 1–64 letters, digits, ".", "_", "-" or ":"').optional(),
      lockTtlMs: z.number().int().min(100).optional(),
      background: z
        .union([
          z.boolean(),
          z.strictObject({
            queue: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'queue must be 1–64 letters, digits, ".", "_" or "-"').optional(),
            agents: z.boolean().optional(),
          }),
        ])
        .optional(),
    })
    .optional(),
});
type ServerConfig = z.infer<typeof serverConfig>;

function readConfig(file: string, explicit: boolean): ServerConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !explicit) return {};
    throw new Error(`cannot read the server config ${file}: ${describeError(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${describeError(error)}); fix it and start again.`);
  }
  const parsed = serverConfig.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys?.join(', ') : issue.path.join('.');
    throw new Error(`${file}: ${field ? `${field}: ` : ''}${issue.message}`);
  }
  return parsed.data;
}

/** `tessera serve`: the HTTP server over one composed kernel; SIGINT / SIGTERM end it, saving every session. */
export const runServeCommand: Subcommand = async (argv, io) => {
  const args = parseCommandFlags(
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      root: { type: 'string', multiple: true },
      config: { type: 'string' },
      provider: { type: 'string' },
      model: { type: 'string' },
      'hash-token': { type: 'string' },
      redis: { type: 'string' },
    },
    USAGE,
    io,
  );
  if (typeof args === 'number') return args;
  if (typeof args['hash-token'] === 'string') {
    io.stdout(`${hashToken(args['hash-token'])}\n`);
    return 0;
  }
  let config: ServerConfig;
  try {
    const file = typeof args.config === 'string' ? resolve(io.cwd, args.config) : join(io.home, '.tessera', 'server.json');
    config = readConfig(file, typeof args.config === 'string');
  } catch (error) {
    io.stderr(`${describeError(error)}\n`);
    return 1;
  }
  const tokens: TokenEntry[] = [...(config.tokens ?? [])];
  if (io.env.TESSERA_SERVER_TOKEN) tokens.push({ id: 'default', sha256: hashToken(io.env.TESSERA_SERVER_TOKEN) });
  if (tokens.length === 0) {
    io.stderr('No tokens: every request would be refused. Add tokens to ~/.tessera/server.json ({ "tokens": [{ "id": "me", "sha256": "…" }] }, hash with tessera serve --hash-token <token>) or set TESSERA_SERVER_TOKEN.\n');
    return 1;
  }
  const roots = ((args.root as string[] | undefined) ?? config.allowedRoots ?? [io.cwd]).map((root) => (isAbsolute(root) ? root : resolve(io.cwd, root)));
  const port = typeof args.port === 'string' ? Number(args.port) : (config.port ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    io.stderr(`--port must be a port number (0–65535), got ${String(args.port)}\n`);
    return 2;
  }
  const approvals = new ApprovalRouter();
  const flags = { ...defaultFlags(), ...(typeof args.provider === 'string' ? { provider: args.provider } : {}), ...(typeof args.model === 'string' ? { model: args.model } : {}) };
  const redis = typeof args.redis === 'string' ? { ...config.redis, url: args.redis } : config.redis;
  const hostname = typeof args.host === 'string' ? args.host : (config.hostname ?? '127.0.0.1');
  // The HTTP API as a transport plugin (TransportContribution), with MCP over Streamable HTTP at
  // /mcp behind the same tokens: another agent can use this one as a tool. MCP turns count
  // against the same per-token turn limit, and MCP clients' permission asks time out like the
  // HTTP clients' (permissionTimeoutMs). With Redis the hub takes the kernel's SessionCluster.
  const http = httpTransport(
    {
      tokens,
      allowedRoots: roots,
      port,
      hostname,
      ...pick(config, ['allowBypassPermissions', 'permissionTimeoutMs', 'maxSessionsPerOwner', 'maxConcurrentTurnsPerOwner', 'corsOrigins', 'rateLimitPerMinute', 'maxBodyBytes', 'abortOnDisconnect']),
      mcp: mcpHttpMount(
        { cwd: roots[0]!, ...(config.permissionTimeoutMs === undefined ? {} : { approvalTimeoutMs: config.permissionTimeoutMs }) },
        { ...(['127.0.0.1', 'localhost', '::1'].includes(hostname) ? {} : { allowedHosts: ['*'] }), ...(config.corsOrigins ? { allowedOrigins: config.corsOrigins } : {}) },
      ),
    },
    approvals,
  );
  let host;
  let cluster: SessionCluster | undefined;
  try {
    const background = redis ? await redisBackgroundPlugin(redis) : undefined;
    const replace = redis ? [await redisReplicaPlugin(redis, (message) => io.stderr(`${message}\n`)), ...(background ? [background] : [])] : [];
    host = await composeHost({ flags, io: { ...io, cwd: roots[0]! }, approvals, allowBypassPermissions: config.allowBypassPermissions === true, replace, plugins: [http], remoteClients: true });
    cluster = redis ? host.kernel.get(SessionCluster) : undefined;
  } catch (error) {
    await host?.close();
    io.stderr(`Could not start: ${describeError(error)}\n`);
    return 1;
  }
  if (cluster) {
    // One read, so a server pointed at a Redis that does not answer says so now rather than at the first request.
    try {
      await cluster.head('tessera-serve-check');
    } catch (error) {
      await host.close();
      io.stderr(`Could not reach Redis at ${redisLocation(redis!.url)}: ${describeError(error)}\n`);
      return 1;
    }
  }
  // Every transport composed into the kernel starts here (the HTTP one, and any a plugin contributed).
  let transports: StartedTransports;
  try {
    transports = await startTransports(host.kernel);
  } catch (error) {
    await host.close();
    io.stderr(`Could not start the server: ${describeError(error)}\n`);
    return 1;
  }
  const server = transports.adapter<HttpTransport>('http')?.server;
  if (!server) {
    await transports.stop();
    await host.close();
    io.stderr('Could not listen: the http transport did not start.\n');
    return 1;
  }
  io.stdout(`Tessera is serving on ${server.url} (sessions under ${roots.join(', ')}; OpenAPI at ${server.url}/openapi.json)\n`);
  if (redis) io.stdout(`Replica mode: sessions shared through Redis at ${redisLocation(redis.url)} (prefix ${redis.prefix ?? 'tessera'}).\n`);
  if (redis?.background) {
    const queue = (redis.background === true ? undefined : redis.background.queue) ?? 'tessera-background';
    const agents = redis.background !== true && redis.background.agents === true;
    io.stdout(`Background tasks run on tessera worker processes (queue ${queue}${agents ? ', subagents too: start a worker with --kinds agent' : ''}): tessera worker --redis <url>${redis.prefix ? ` --prefix ${redis.prefix}` : ''}${queue === 'tessera-background' ? '' : ` --queue ${queue}`}\n`);
  }
  await untilStopped();
  await transports.stop();
  await host.close();
  io.stderr('Stopped; sessions saved.\n');
  return 0;
};

/** The fields of `source` named in `keys` that are set (an options object without `undefined` holes). */
function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) picked[key] = source[key];
  return picked;
}
