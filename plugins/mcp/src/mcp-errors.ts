import { TesseraError, type ErrorCategory } from '@tessera/contracts';

/** Stable codes of the failures this package reports. */
export type McpErrorCode =
  | 'mcp_config'
  | 'mcp_env_missing'
  | 'mcp_connect_failed'
  | 'mcp_auth_required'
  | 'mcp_server_unavailable'
  | 'mcp_tool_timeout'
  | 'mcp_tool_aborted'
  | 'mcp_protocol'
  | 'mcp_closed';

const CATEGORY: Record<McpErrorCode, ErrorCategory> = {
  mcp_config: 'configuration',
  mcp_env_missing: 'configuration',
  mcp_connect_failed: 'io',
  mcp_auth_required: 'permission',
  mcp_server_unavailable: 'state',
  mcp_tool_timeout: 'timeout',
  mcp_tool_aborted: 'aborted',
  mcp_protocol: 'tool',
  mcp_closed: 'state',
};

/**
 * An MCP failure that names its server (and file or field when there is one). Messages end with
 * what to do next; `recoverable` is true when retrying later can succeed.
 */
export class McpError extends TesseraError {
  readonly server: string;

  constructor(code: McpErrorCode, server: string, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super(message, {
      code,
      category: CATEGORY[code],
      recoverable: code !== 'mcp_config' && code !== 'mcp_env_missing' && code !== 'mcp_closed',
      details: { server, ...details },
      ...(cause === undefined ? {} : { cause }),
    });
    this.server = server;
  }
}

/** An error's message on one line, bounded (for status lines and diagnostics). */
export function describe(error: unknown): string {
  if (error instanceof Error) return error.message.replace(/\s+/g, ' ').trim().slice(0, 500) || error.name;
  return String(error).slice(0, 500);
}
