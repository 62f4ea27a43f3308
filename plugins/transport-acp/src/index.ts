export { AcpAgent, acpAgent, type AcpAgentOptions } from './acp-agent.js';
export { AcpSession, stopReasonOf, type AcpPeer } from './acp-session.js';
export { AcpTransport, acpTransport, acpTransportPlugin, type AcpTransportOptions } from './acp-transport.js';
export { approvalAnswer, permissionRequest, PERMISSION_OPTION } from './acp-permissions.js';
export { editDiffs, finishedContent, planFromTodos, resultContent, toolCallStart, toolKind, toolLocations, toolTitle } from './acp-updates.js';
export { historyUpdates } from './history-replay.js';
export { parseSlashCommand, promptText } from './prompt-content.js';
export { serveAcp, type AcpServer, type ServeAcpOptions } from './serve-acp.js';
