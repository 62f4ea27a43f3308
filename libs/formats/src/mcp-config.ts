import { resolve } from 'node:path';
import type { Diagnostic, McpRemoteServerSpec, McpServerSpec, McpStdioServerSpec, ParseResult } from '@tessera/contracts';
import { z } from 'zod';
import { expandPluginVariables, type PluginVariables } from './plugin-variables.js';
import { parseJsonText, readTextFile } from './read-text.js';
import { zodDiagnostics } from './zod-diagnostics.js';

/** A local MCP server started as a child process (the contracts' shape). */
export type McpStdioServer = McpStdioServerSpec;

/** A remote MCP server. */
export type McpRemoteServer = McpRemoteServerSpec;

export type McpServerConfig = McpServerSpec;

export interface McpConfig {
  servers: Record<string, McpServerConfig>;
  /** Whether the file used the documented `{ "mcpServers": … }` wrapper. */
  wrapped: boolean;
}

const stringMap = z.record(z.string(), z.string());
const stdioSchema = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  cwd: z.string().optional(),
});
const remoteSchema = z.looseObject({
  type: z.enum(['http', 'sse', 'ws']),
  url: z.string().min(1),
  headers: stringMap.optional(),
  headersHelper: z.string().optional(),
});

/**
 * Validates a server map (`{ name: cfg }`). A missing `type` means stdio. A bad entry is
 * reported and left out; the others are kept. `${VAR}` environment references are kept as
 * written: the MCP client expands them when it connects.
 */
export function parseMcpServers(
  value: unknown,
  file: string,
  prefix: string,
  variables: PluginVariables = {},
): { servers: Record<string, McpServerConfig>; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const servers: Record<string, McpServerConfig> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    diagnostics.push({ severity: 'error', file, path: prefix || '(root)', message: 'MCP servers must be an object mapping server names to their configuration.' });
    return { servers, diagnostics };
  }
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    const type = raw !== null && typeof raw === 'object' ? (raw as { type?: unknown }).type : undefined;
    if (type === undefined || type === 'stdio') {
      const parsed = stdioSchema.safeParse(raw);
      if (!parsed.success) {
        diagnostics.push(...zodDiagnostics(parsed.error, file, path, 'stdio MCP server'));
        continue;
      }
      const server: McpStdioServer = {
        type: 'stdio',
        command: expandPluginVariables(parsed.data.command, variables),
        args: (parsed.data.args ?? []).map((arg) => expandPluginVariables(arg, variables)),
        env: mapValues(parsed.data.env ?? {}, variables),
      };
      if (parsed.data.cwd !== undefined) server.cwd = expandPluginVariables(parsed.data.cwd, variables);
      servers[name] = server;
    } else if (type === 'http' || type === 'sse' || type === 'ws') {
      const parsed = remoteSchema.safeParse(raw);
      if (!parsed.success) {
        diagnostics.push(...zodDiagnostics(parsed.error, file, path, 'remote MCP server'));
        continue;
      }
      const server: McpRemoteServer = {
        type: parsed.data.type,
        url: expandPluginVariables(parsed.data.url, variables),
        headers: mapValues(parsed.data.headers ?? {}, variables),
      };
      if (parsed.data.headersHelper !== undefined) server.headersHelper = expandPluginVariables(parsed.data.headersHelper, variables);
      servers[name] = server;
    } else {
      diagnostics.push({
        severity: 'error',
        file,
        path: `${path}.type`,
        message: `MCP server \`${name}\` has type ${JSON.stringify(type)}; use stdio (or omit it), http, sse or ws.`,
      });
    }
  }
  return { servers, diagnostics };
}

function mapValues(map: Record<string, string>, variables: PluginVariables): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([key, text]) => [key, expandPluginVariables(text, variables)]));
}

/**
 * Reads `.mcp.json` in either shape: `{ "mcpServers": { … } }` (documented) or the bare
 * `{ name: cfg }` map many real plugins use.
 */
export function readMcpConfig(path: string, variables: PluginVariables = {}): ParseResult<McpConfig> {
  const file = resolve(path);
  const text = readTextFile(file);
  if (!text.ok) return { value: { servers: {}, wrapped: false }, diagnostics: [text.diagnostic] };
  const json = parseJsonText(text.value, file);
  if (!json.ok) return { value: { servers: {}, wrapped: false }, diagnostics: [json.diagnostic] };
  const root = json.value;
  const wrapped = root !== null && typeof root === 'object' && !Array.isArray(root) && 'mcpServers' in root;
  const map = wrapped ? (root as { mcpServers: unknown }).mcpServers : root;
  const { servers, diagnostics } = parseMcpServers(map, file, wrapped ? 'mcpServers' : '', variables);
  return { value: { servers, wrapped }, diagnostics };
}
