import type { Diagnostic } from './diagnostics.js';
import { createToken } from './token.js';

/** A local MCP server started as a child process (Claude Code's `.mcp.json` stdio entry). */
export interface McpStdioServerSpec {
  type: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** A remote MCP server: Streamable HTTP (`http`), the older HTTP+SSE transport (`sse`) or WebSocket (`ws`). */
export interface McpRemoteServerSpec {
  type: 'http' | 'sse' | 'ws';
  url: string;
  headers: Record<string, string>;
  /** A command whose stdout (a JSON object) adds headers at connect time. */
  headersHelper?: string;
}

/** How to reach an MCP server: a local process or a remote URL. */
export type McpServerSpec = McpStdioServerSpec | McpRemoteServerSpec;

/** Where a server was declared; decides precedence (local > project > user) and approval. */
export type McpServerScope = 'local' | 'project' | 'user' | 'cli' | 'plugin' | 'sdk';

/** One configured MCP server, as a source declares it. `${VAR}` references are still unexpanded. */
export interface McpServerDeclaration {
  /** The server's name as written (tool names sanitise it). */
  name: string;
  spec: McpServerSpec;
  scope: McpServerScope;
  /** The bundle plugin that ships it (`scope: 'plugin'`); its tools are named `mcp__plugin_<plugin>_<server>__<tool>`. */
  plugin?: string;
  /** The file it was read from, for messages. */
  file?: string;
}

/**
 * MCP servers that are found rather than composed: `.mcp.json`, settings, `--mcp-config`,
 * bundle plugins. Asked per session; a source that can change says so through `onChange`, and
 * the MCP client connects or drops servers before the next model call.
 */
export interface McpServerSource {
  readonly name: string;
  /** The servers this source declares for the session now. */
  servers(session: { readonly sessionId: string; readonly cwd: string }): readonly McpServerDeclaration[] | Promise<readonly McpServerDeclaration[]>;
  /** Problems the source found reading its files (reported once per change). */
  diagnostics?(): readonly Diagnostic[];
  /** Calls `listener` whenever the answer of `servers()` may have changed; returns an unsubscribe. */
  onChange?(listener: () => void): () => void;
}

/** Contribution point: every MCP server source bound here feeds the MCP client. */
export const McpServerSourceContribution = createToken<McpServerSource>('McpServerSource');
