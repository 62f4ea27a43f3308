import { execFile } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { McpRemoteServerSpec, McpServerSpec } from '@tessera/contracts';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from './mcp-errors.js';

export interface TransportRequest {
  server: string;
  /** Already expanded. */
  spec: McpServerSpec;
  /** Where a stdio server runs when its spec names no `cwd` (the session's directory). */
  cwd: string;
  /** The environment `headersHelper` runs in; the shell expands its variables from it. */
  env: NodeJS.ProcessEnv;
  /** Receives each line a stdio server writes to stderr. */
  onStderr(line: string): void;
  authProvider?: OAuthClientProvider;
  /** How long `headersHelper` may run. */
  helperTimeoutMs: number;
  /** Remote transports use this instead of the global fetch (tests). */
  fetch?: typeof fetch;
}

/** A transport to open, with what is needed to try the next kind when the server refuses it. */
export interface TransportPlan {
  transport: Transport;
  /** `http` for Streamable HTTP: an SSE transport to try when connecting answers with a 4xx. */
  fallback?: () => Transport;
  /** The child's process id (stdio), for diagnostics. */
  pid?(): number | null;
}

/** Builds the transport a spec asks for. Stdio servers get a piped stderr: it must never reach the terminal. */
export async function createTransport(request: TransportRequest): Promise<TransportPlan> {
  const { spec, server } = request;
  if (spec.type === 'stdio') {
    const transport = new StdioClientTransport({
      command: spec.command,
      args: spec.args,
      // The SDK's safe allowlist (HOME, PATH, …) plus what the declaration sets; not the whole parent environment.
      env: { ...getDefaultEnvironment(), ...spec.env },
      cwd: spec.cwd ?? request.cwd,
      stderr: 'pipe',
    });
    const stderr = transport.stderr as Readable | null;
    if (stderr) pipeLines(stderr, request.onStderr);
    return { transport, pid: () => transport.pid };
  }
  const headers = { ...spec.headers, ...(await helperHeaders(spec, server, request.env, request.helperTimeoutMs)) };
  const url = parseUrl(spec.url, server);
  const base = {
    requestInit: { headers },
    ...(request.authProvider ? { authProvider: request.authProvider } : {}),
    ...(request.fetch ? { fetch: request.fetch } : {}),
  };
  if (spec.type === 'sse') return { transport: new SSEClientTransport(url, base) };
  if (spec.type === 'ws') {
    if (typeof (globalThis as { WebSocket?: unknown }).WebSocket !== 'function') {
      throw new McpError('mcp_config', server, `MCP server "${server}" uses type "ws", but this Node.js has no WebSocket client (Node 22 or later has one). Use type "http" if the server offers it.`, { field: 'type' });
    }
    const { WebSocketClientTransport } = await import('@modelcontextprotocol/sdk/client/websocket.js');
    return { transport: new WebSocketClientTransport(url) };
  }
  return { transport: new StreamableHTTPClientTransport(url, base), fallback: () => new SSEClientTransport(url, base) };
}

function parseUrl(text: string, server: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new McpError('mcp_config', server, `MCP server "${server}": url ${JSON.stringify(text)} is not a valid URL. Write an absolute http(s) address.`, { field: 'url' });
  }
}

/** True when a connect failure is an HTTP 4xx other than 401 (which means: authorise). */
export function isFallbackWorthy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number') return code >= 400 && code < 500 && code !== 401;
  const message = error instanceof Error ? error.message : String(error);
  return /\b(?:HTTP )?4(?:0[02-9]|[1-9]\d)\b/.test(message) && !/\b401\b/.test(message);
}

/**
 * Runs `headersHelper` through the shell and reads a JSON object of string values from its
 * stdout. Any failure names the server and the field, and the connection attempt fails. The
 * message quotes the command as written (variables unexpanded), never the expanded one.
 */
async function helperHeaders(spec: McpRemoteServerSpec, server: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Record<string, string>> {
  if (spec.headersHelper === undefined || spec.headersHelper.trim() === '') return {};
  const fail = (problem: string): never => {
    throw new McpError('mcp_config', server, `MCP server "${server}": headersHelper ${problem}. It must print a JSON object of header names to string values.`, { field: 'headersHelper' });
  };
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.platform === 'win32' ? 'cmd.exe' : '/bin/sh', process.platform === 'win32' ? ['/c', spec.headersHelper!] : ['-c', spec.headersHelper!], { env, timeout: timeoutMs, maxBuffer: 1 << 20 }, (error, out, err) => {
      if (!error) return resolve(String(out));
      const how = error.killed ? `killed after ${timeoutMs} ms` : typeof error.code === 'number' ? `exit code ${error.code}` : error.signal ? `signal ${error.signal}` : String(error.code ?? 'did not run');
      const said = String(err).trim().slice(0, 200);
      reject(new McpError('mcp_config', server, `MCP server "${server}": headersHelper ${JSON.stringify(spec.headersHelper)} failed (${how})${said ? `: ${said}` : ''}.`, { field: 'headersHelper' }));
    });
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return fail('printed something that is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return fail('printed JSON that is not an object');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof value !== 'string') fail(`gave header ${JSON.stringify(name)} a ${typeof value} value`);
    headers[name] = value as string;
  }
  return headers;
}

function pipeLines(stream: Readable, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') safe(onLine, line);
    // A server that never ends its line must not grow memory without bound.
    if (pending.length > 64_000) {
      safe(onLine, pending);
      pending = '';
    }
  });
  stream.on('end', () => {
    if (pending.trim() !== '') safe(onLine, pending);
    pending = '';
  });
  stream.on('error', () => undefined);
}

function safe(callback: (line: string) => void, line: string): void {
  try {
    callback(line);
  } catch {
    // A logging callback that throws must not take the stream down.
  }
}
