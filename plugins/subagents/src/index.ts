export type {
  ISubagentJobHandle,
  ISubagentJobResult,
  ISubagentJobStart,
  ISubagentJobState,
  ISubagentListFilter,
  ISubagentManager,
  ISubagentRunner,
  ISubagentSpawnRequest,
  TSubagentJobMode,
  TSubagentJobStatus,
} from './types.js';
export { createSubagentTaskRunner, SubagentManager, toAgentTaskRequest, toSubagentSpawnRequest } from './subagent-manager.js';
export type { SubagentManagerOptions } from './subagent-manager.js';
export { createInProcessSubagentRunner } from './in-process-subagent-runner.js';
export { deriveSpawnRequest } from './parent-scopes.js';
export type { IInProcessSubagentRunnerDeps } from './in-process-subagent-runner.js';
export { createWorktreeSubagentRunner, WorktreeSubagentRunner } from './worktree-subagent-runner.js';
export type {
  IPreparedSubagentWorktree,
  ISubagentWorktreeAdapter,
  WorktreeHooks,
  WorktreeSubagentRunnerOptions,
} from './worktree-subagent-runner.js';
export { createGitWorktreeIsolationAdapter, GitWorktreeIsolationAdapter } from './git-worktree-isolation-adapter.js';
export type { GitWorktreeIsolationAdapterOptions } from './git-worktree-isolation-adapter.js';
export { AGENT_SPAWNING_TOOLS, AgentDefinitionRegistry, BUILTIN_AGENT_DEFINITIONS, filterSubagentTools } from './agent-definitions.js';
export { agentDefinitionDirectories, discoverAgentDefinitions } from './agent-definition-discovery.js';
export type { AgentDefinitionDiscovery, AgentDefinitionDiscoveryOptions, TAgentDefinitionReader } from './agent-definition-discovery.js';
export { createSubagentLogger, subagentTranscriptPath, SubagentTranscriptLogger } from './subagent-transcript-logger.js';
export { ManualSubagentRunner } from './manual-subagent-runner.js';
export type { ManualSubagentJob, ManualSubagentRunnerOptions } from './manual-subagent-runner.js';
export { AgentDefinitions, SubagentManagerToken, subagents } from './subagents-plugin.js';
export type { SubagentsPluginOptions } from './subagents-plugin.js';
export { SubagentApprovalRouter } from './subagent-approval-router.js';
export { createSubagentLauncher, SubagentLaunchError } from './subagent-launcher.js';
