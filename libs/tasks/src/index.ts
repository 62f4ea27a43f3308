// Active task files as bounded, neutral context, and the self-hosting verification planner.
// A library: it imports only @tessera/contracts and Node built-ins.
export { loadTaskContext, TASKS_DIRECTORY } from './load-task-context.js';
export type { LoadTaskContextOptions, TaskContext } from './load-task-context.js';
export { formatTaskContext, TASK_CONTEXT_HEADING } from './format-task-context.js';
export { parseTaskFile, normalizeTaskStatus } from './task-file.js';
export type { TaskFile, TaskStatus } from './task-file.js';
export { updateTaskFileStatus } from './update-task-file-status.js';
export type { UpdateTaskFileStatusOptions, UpdateTaskFileStatusResult } from './update-task-file-status.js';
export { planSelfHostingVerification } from './plan-self-hosting-verification.js';
export type {
  SelfHostingCommand,
  SelfHostingStep,
  SelfHostingStepKind,
  SelfHostingVerificationPlan,
  SelfHostingVerificationPlanInput,
} from './plan-self-hosting-verification.js';
export { SELF_HOSTING_TRANSITIONS, SelfHostingTransitionError, transitionSelfHostingLoop } from './transition-self-hosting-loop.js';
export type { SelfHostingLoopEvent, SelfHostingLoopState } from './transition-self-hosting-loop.js';
