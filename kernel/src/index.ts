export { createKernel, Kernel, KernelRef, removeToolsByName, replaceToolsByName } from './kernel.js';
export type { CreateKernelOptions, KernelDescription, KernelSessionOptions, KernelSessionScope, PluginDescription } from './kernel.js';
export { definePlugin, flattenPlugins, replacePlugins } from './plugin.js';
export type { Plugin, PluginActivation, PluginInput, PluginRegisterContext, PluginRuntimeContext } from './plugin.js';
export { createHooks, isTapped } from './hooks.js';
export type { HookName, TesseraHooks } from './hooks.js';
export { Stage } from './stage.js';
export { Session } from './session.js';
export { executeToolCall } from './tool-batch.js';
export { ContainerSessionServices, type ServiceResolver } from './session-services.js';
export type {
  CompactEvent,
  ISessionShutdownOptions,
  RunOptions,
  SessionOptions,
  TAutoCompactThreshold,
} from './session-options.js';
export { defineTool, toolsPlugin } from './define-tool.js';
export type { ToolDefinition, ZodLikeSchema } from './define-tool.js';
export {
  CompactionUnavailableError,
  KernelCompositionError,
  PluginOptionsError,
  PromptBlockedError,
  ProviderTimeoutError,
  PermissionModeNotAllowedError,
  SessionBusyError,
  SessionClosedError,
  SessionConfigurationError,
} from './errors.js';
export type { CompositionProblem } from './errors.js';
export {
  InteractiveSession,
  InteractiveSessionClosedError,
  PromptQueueFullError,
  ResumeSessionCwdMismatchError,
  ResumeSessionNotFoundError,
  SESSION_APPLIED_EFFECTS,
} from './interactive/interactive-session.js';
export type { IResumableSession, ISubmitOptions, InteractiveSandboxClient, InteractiveSessionOptions } from './interactive/interactive-session.js';
export type { InteractiveSessionEvents } from './interactive/events.js';
export { canonicalName, SystemCommandExecutor } from './interactive/command-executor.js';
export { BuiltinCommandSource, CommandRegistry, SkillCommandSource } from './interactive/command-registry.js';
export { COMMAND_TOOL_PREFIX, commandToolName, commandToolProblems, commandTools } from './interactive/command-tools.js';
export type { ICommandListing } from './interactive/command-executor.js';
export { createQuery } from './interactive/create-query.js';
export type { CreateQueryOptions, QueryMessage } from './interactive/create-query.js';
