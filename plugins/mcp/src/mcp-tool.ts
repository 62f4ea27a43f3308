import type { JsonSchema, Tool, ToolResult } from '@tessera/contracts';
import { McpError } from './mcp-errors.js';
import type { McpConnection } from './mcp-connection.js';
import type { McpToolInfo } from './mcp-types.js';
import { toToolResult, type McpToolResultData } from './tool-result.js';

const MAX_DESCRIPTION = 2_000;

/**
 * A Tessera tool that forwards to one MCP tool. It goes through the same permission checks and
 * hooks as any tool (the session runs it); it never throws: a server that is down, a timeout,
 * an abort or a protocol error all become failed results that name the server and the tool.
 */
export function createMcpTool(connection: McpConnection, info: McpToolInfo, name: string, toolTimeoutMs: () => number): Tool<Record<string, unknown>, McpToolResultData> {
  const server = connection.name;
  const description = (typeof info.description === 'string' && info.description.trim() !== '' ? info.description : (info.title ?? `Tool "${info.name}" of MCP server "${server}".`)).slice(0, MAX_DESCRIPTION);
  return {
    name,
    description,
    parameters: inputSchema(info.inputSchema),
    validate(input) {
      if (input === undefined || input === null) return { success: true, data: {} };
      if (typeof input !== 'object' || Array.isArray(input)) return { success: false, message: `${name} takes a JSON object of arguments.` };
      return { success: true, data: input as Record<string, unknown> };
    },
    async execute(input, context): Promise<ToolResult<McpToolResultData>> {
      const timeoutMs = toolTimeoutMs();
      try {
        const raw = await connection.callTool(info.name, input, {
          signal: context.signal,
          timeoutMs,
          // Asking for progress makes the server send it; only when someone listens.
          ...(context.reportProgress
            ? {
                onProgress: ({ progress, total, message }: { progress: number; total?: number; message?: string }) => {
                  context.reportProgress?.({
                    ...(message === undefined ? { message: `${progress}${total === undefined ? '' : `/${total}`}` } : { message }),
                    ...(total !== undefined && total > 0 ? { fraction: Math.min(1, Math.max(0, progress / total)) } : {}),
                    data: { progress, total },
                  });
                },
              }
            : {}),
        });
        return toToolResult(raw, server, info.name);
      } catch (error) {
        const failure = error instanceof McpError ? error : new McpError('mcp_protocol', server, `MCP tool "${info.name}" on server "${server}" failed: ${String(error)}`);
        return {
          success: false,
          output: failure.message,
          error: failure.message,
          errorCode: failure.code === 'mcp_tool_aborted' ? 'aborted' : failure.code,
          data: { server, tool: info.name },
        };
      }
    },
  };
}

/** The server's input schema when it is an object schema; otherwise one that takes any object. */
function inputSchema(schema: unknown): JsonSchema {
  if (schema !== null && typeof schema === 'object' && !Array.isArray(schema) && (schema as { type?: unknown }).type === 'object') return schema as JsonSchema;
  return { type: 'object', properties: {} };
}
