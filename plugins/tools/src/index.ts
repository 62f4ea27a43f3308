export { bashTool, DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS, bashInputSchema } from './bash-tool.js';
export type { BashInput, BashToolData, BashToolOptions } from './bash-tool.js';
export { bashOutputTool, bashOutputInputSchema, killShellTool, killShellInputSchema } from './background-shell-tools.js';
export type { BackgroundShellToolOptions, BackgroundTasksSource, BashOutputInput, BashOutputToolData, KillShellInput, KillShellToolData } from './background-shell-tools.js';
export { readTool, readInputSchema } from './read-tool.js';
export type { ReadInput, ReadToolData, ReadToolOptions } from './read-tool.js';
export { writeTool, writeInputSchema } from './write-tool.js';
export type { WriteInput, WriteToolData, WriteToolOptions } from './write-tool.js';
export { editTool, editInputSchema } from './edit-tool.js';
export type { EditInput, EditToolData, EditToolOptions } from './edit-tool.js';
export { globTool, globInputSchema } from './glob-tool.js';
export type { GlobInput, GlobToolData, GlobToolOptions } from './glob-tool.js';
export { stopStatWorker } from './stat-worker.js';
export { grepTool, grepInputSchema } from './grep-tool.js';
export type { GrepInput, GrepToolData, GrepToolOptions } from './grep-tool.js';
export { webFetchTool, webFetchInputSchema } from './web-fetch-tool.js';
export type { UrlCheck, WebFetchInput, WebFetchToolData, WebFetchToolOptions } from './web-fetch-tool.js';
export type { AddressPolicy, HostResolver } from './url-policy.js';
export { webSearchTool, webSearchInputSchema } from './web-search-tool.js';
export { todoWriteTool, todoWriteInputSchema } from './todo-write-tool.js';
export type { TodoItem, TodoStatus, TodoWriteInput, TodoWriteToolData } from './todo-write-tool.js';
export type { WebSearchInput, WebSearchToolData, WebSearchToolOptions } from './web-search-tool.js';
export { BraveSearchBackend, queryWithSites, SearchBackendError, SearxngSearchBackend } from './search-backends.js';
export type { BraveSearchBackendOptions, SearchBackend, SearchRequest, SearchResult, SearxngSearchBackendOptions } from './search-backends.js';
export { htmlToMarkdown } from './html-to-markdown.js';
export type { DiffHunk } from './diff.js';
export { structuredPatch } from './diff.js';
export { DEFAULT_EXCLUDED_DIRECTORIES } from './ignore-rules.js';
export type { SearchFilterOptions } from './ignore-rules.js';
export { ToolSessionState, ToolSessionStateToken } from './session-state.js';
export type { FileReadRecord, SessionToolState, ToolSessionStateOptions } from './session-state.js';
export { WorkspaceRoots } from './workspace.js';
export type { PathResolution, WorkspaceOptions } from './workspace.js';
export type { FileToolOptions, SandboxOptions, ToolSessionStateSource } from './common-options.js';
export type { BuiltinToolErrorCode } from './result.js';
export type { ISandboxClient, ISandboxFileStat, ISandboxRunOptions, ISandboxRunResult } from './sandbox/sandbox-client.js';
export { InMemorySandboxClient } from './sandbox/in-memory-sandbox-client.js';
export { DEFAULT_E2B_COMMAND_TIMEOUT_MS, E2B_KILLED_EXIT_CODE, E2BSandboxClient } from './sandbox/e2b-sandbox-client.js';
export type {
  E2BCommandHandleLike,
  E2BCommandResultLike,
  E2BCommandStartOptionsLike,
  E2BEntryInfoLike,
  E2BFileRequestOptionsLike,
  E2BSandboxClientOptions,
  E2BSandboxLike,
} from './sandbox/e2b-sandbox-client.js';
export type { InMemoryCommandHandler, InMemorySandboxClientOptions } from './sandbox/in-memory-sandbox-client.js';
export { applyWorkspaceManifest, validateWorkspaceManifest, WorkspaceManifestError } from './sandbox/workspace-manifest.js';
export type {
  ApplyWorkspaceManifestOptions,
  ApplyWorkspaceManifestResult,
  IWorkspaceManifest,
  IWorkspaceManifestEntry,
} from './sandbox/workspace-manifest.js';
export {
  bashOutputToolPlugin,
  bashToolPlugin,
  builtinTools,
  editToolPlugin,
  globToolPlugin,
  grepToolPlugin,
  killShellToolPlugin,
  readToolPlugin,
  sandboxPathsPlugin,
  toolSessionStatePlugin,
  webFetchToolPlugin,
  webSearchToolPlugin,
  todoWriteToolPlugin,
  writeToolPlugin,
  BUILTIN_TOOL_NAMES,
} from './plugins.js';
export type { BuiltinToolName, BuiltinToolsOptions, ToolSessionStatePluginOptions, WebFetchPluginOptions } from './plugins.js';
export { SANDBOX_TOOL_NAMES, sandboxToolFactoryPlugin } from './sandbox-tool-factory.js';
export type { SandboxToolFactoryOptions, SandboxToolName } from './sandbox-tool-factory.js';
