export { TesseraTui, rewindConversation, type TesseraTuiOptions } from './app.js';
export { TerminalApprovals, type PendingApproval } from './approvals.js';
export { AssistantText, ClampedContainer, TaskRow, TextBlock, ThinkingRow, ToolRow } from './components.js';
export { describeCall, PermissionPrompt, type PermissionChoice } from './permission-prompt.js';
export { StatusLineRunner, type StatusLineCommand, type StatusLineInput } from './status-line.js';
export { processTerminal, RecordingTerminal, type Terminal } from './terminal.js';
export { highlightCode } from './theme.js';
export { listWorkspaceFiles, WorkspaceCompletion } from './mention-completion.js';
