import type { ToolResult } from '@tessera/contracts';

/**
 * Error codes the built-in tools add to the runtime's own (`unknown_tool`, `denied`…).
 * Hooks and UIs branch on these, never on message text.
 */
export type BuiltinToolErrorCode =
  | 'outside_workspace'
  | 'invalid_path'
  | 'not_found'
  | 'is_directory'
  | 'binary_file'
  | 'not_regular_file'
  | 'unsupported_encoding'
  | 'permission_denied'
  | 'too_large'
  | 'not_read'
  | 'stale_read'
  | 'no_change'
  | 'no_match'
  | 'ambiguous_match'
  | 'exit_code'
  | 'timeout'
  | 'aborted'
  | 'unavailable'
  | 'invalid_pattern'
  | 'fetch_failed'
  | 'url_denied'
  | 'search_failed'
  | 'io_error';

export function succeed<TData>(output: ToolResult['output'], data?: TData, metadata?: Record<string, unknown>): ToolResult<TData> {
  return { success: true, output, ...(data === undefined ? {} : { data }), ...(metadata ? { metadata } : {}) };
}

export function fail<TData = never>(message: string, errorCode: BuiltinToolErrorCode, data?: TData): ToolResult<TData> {
  return { success: false, output: message, error: message, errorCode, ...(data === undefined ? {} : { data }) };
}

/** Message of an unknown thrown value, with the Node error code when there is one. */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
