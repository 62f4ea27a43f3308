export { mcpServerTransport, McpServerTransport, type McpServerTransportOptions } from './mcp-server-transport.js';
export { McpConnection, mcpCommandToolName } from './mcp-connection.js';
export { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from './mcp-http-handler.js';
export { serveMcpStdio, type McpStdioOptions, type McpStdioServer } from './serve-mcp-stdio.js';
export { checkHostAndOrigin, LOCALHOST_NAMES, type HostValidationOptions } from './host-validation.js';
export { McpApprovals, type McpApprovalsOptions } from './mcp-approvals.js';
export { PROGRESS_EVENT_META } from './prompt-turn.js';
export { promptInput, promptOutput, abortInput, commandInput, type PromptOutput, type ToolCallSummary } from './mcp-tool-schemas.js';
export { mcpHttpMount, mcpTransport, type McpTransportOptions } from './mcp-transport-plugins.js';
