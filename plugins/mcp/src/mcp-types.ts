import type { McpServerScope } from '@tessera/contracts';

/** A server's state as `/mcp` shows it. */
export type McpServerStatus = 'connecting' | 'connected' | 'failed' | 'needs approval' | 'disabled';

/** A tool as a server lists it (only the fields this package reads). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; title?: string };
}

export interface McpPromptInfo {
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; description?: string; required?: boolean }>;
}

export interface McpResourceInfo {
  uri: string;
  name?: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** One entry of `/mcp` (the `mcp` command host adapter's `servers()`). */
/** A server as configured for a folder, before any start (`McpClientPool.declared`). */
export interface McpServerDeclared {
  name: string;
  scope: McpServerScope;
  transport: McpServerState['transport'];
  /** Whether a session would start it: a `.mcp.json` server may wait for approval or be disabled in settings. */
  status: 'enabled' | 'needs approval' | 'disabled';
  /** The file it was read from. */
  file?: string;
  /** The bundle plugin that ships it. */
  plugin?: string;
}

export interface McpServerState {
  name: string;
  status: McpServerStatus;
  /** Number of tools the server offers (the last known list while it is down). */
  tools: number;
  error?: string;
  scope: McpServerScope;
  transport: 'stdio' | 'http' | 'sse' | 'ws';
  plugin?: string;
  file?: string;
  prompts: number;
  resources: number;
  /** Milliseconds the last successful connection took (spawn or first request to tools listed). */
  startupMs?: number;
  /** Tool names as the model sees them. */
  toolNames: string[];
}

/** Where the pool reports what happens (a server's stderr, failures, fallbacks). Must not throw. */
export type McpLog = (entry: { severity: 'info' | 'warning' | 'error'; code: string; message: string; server?: string; file?: string }) => void;

/**
 * The redirect step of OAuth: the host shows `authorizationUrl` (opens a browser), waits for the
 * redirect to `redirectUrl` and answers with the authorization code (or `{ code, state }` so the
 * state is checked). Rejecting abandons the attempt; the server is then `failed`.
 */
export type McpAuthorize = (request: { server: string; authorizationUrl: URL; redirectUrl: string }) => Promise<string | { code: string; state?: string }>;

/** Decides whether a server from the project's `.mcp.json` may start. */
export type McpProjectApproval = (server: { name: string; file?: string; cwd: string }) => 'approved' | 'denied' | 'pending';

/** The `enableAllProjectMcpServers` / `enabledMcpjsonServers` / `disabledMcpjsonServers` settings keys. */
export interface McpProjectApprovalSettings {
  enableAllProjectMcpServers?: boolean;
  enabledMcpjsonServers?: readonly string[];
  disabledMcpjsonServers?: readonly string[];
}
