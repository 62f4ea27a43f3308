// `@tessera/plugin-mcp/plugin`: the plugin factory and its token without the connection code.
// The MCP SDK loads only when a server is configured, so a host may compose this always.
export { mcpClient, McpClients, type McpClientPluginOptions } from './mcp-plugin.js';
export type { McpClientPool } from './mcp-client-pool.js';
export type { McpAuthorize, McpLog, McpProjectApproval, McpProjectApprovalSettings, McpServerState, McpServerStatus } from './mcp-types.js';
