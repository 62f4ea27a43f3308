export * from './types.js';
export { BackgroundTaskError, isBackgroundTaskError, toBackgroundTaskError } from './background-task-error.js';
export type { BackgroundTaskErrorOptions, TBackgroundTaskErrorCategory } from './background-task-error.js';
export {
  getBackgroundTaskTransitions,
  isTerminalBackgroundTaskStatus,
  transitionBackgroundTaskStatus,
} from './state-machine.js';
export type { TBackgroundTaskTransitionEvent } from './state-machine.js';
export {
  appendPrefixedLogLines,
  BackgroundTaskLogBuffer,
  createBackgroundTaskLogPage,
  createLimitedOutputCapture,
  DEFAULT_LOG_PAGE_LINES,
} from './log-pages.js';
export type { IBackgroundTaskLogPageOptions, ILimitedOutputCapture } from './log-pages.js';
export { BackgroundTaskWatchdog, DEFAULT_BACKGROUND_WATCHDOG_LIMITS, watchdogLimits } from './background-task-watchdog.js';
export type { IBackgroundTaskWatchdogConfig, IBackgroundTaskWatchdogLimits } from './background-task-watchdog.js';
export { BackgroundTaskManager } from './background-task-manager.js';
export type { BackgroundTaskManagerOptions } from './background-task-manager.js';
export { assertSafeTaskId, cloneTaskMetadata, cloneTaskState, initialTaskState, projectWorktreeFields, recordTaskFailure, SAFE_TASK_ID } from './task-state.js';
export { ManualBackgroundTaskRunner } from './manual-background-task-runner.js';
export type { ManualBackgroundTaskRun, ManualBackgroundTaskRunnerOptions } from './manual-background-task-runner.js';
export { createManagedShellProcessRunner } from './managed-shell-process-runner.js';
export type { ManagedShellProcessRunnerOptions } from './managed-shell-process-runner.js';
export { createScheduledTaskRunner, cronerScheduleFactory } from './scheduled-task-runner.js';
export type { IScheduleDriver, ScheduledTaskRunnerOptions, TScheduleFactory } from './scheduled-task-runner.js';
export { AgentTaskManagerToken, backgroundRuntime, BackgroundTaskManagerToken, createBackgroundTasksAdapter, outputRead, processTaskRequest, readOutputLines, sessionTaskList, taskListEntry, type OutputLines } from './background-runtime.js';
export type { BackgroundRuntimeOptions } from './background-runtime.js';
