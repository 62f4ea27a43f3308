import type { TBackgroundTaskErrorCategory } from './background-task-error.js';

/** Lifecycle status of one background task. `sleeping` = a scheduled task between fires. */
export type TBackgroundTaskStatus =
  | 'queued'
  | 'running'
  | 'waiting_permission'
  | 'sleeping'
  | 'completed'
  | 'failed'
  | 'cancelled';

export type TBackgroundTaskKind = 'agent' | 'process' | 'scheduled';
export type TBackgroundTaskMode = 'foreground' | 'background';
export type TBackgroundTaskTimeoutReason = 'idle' | 'max_runtime' | 'output_limit' | 'repetition' | 'stale_worker';

/** Opaque provenance data: cloned into state, never interpreted by the runtime. */
export type TBackgroundTaskMetadataValue = string | number | boolean | null;
export type TBackgroundTaskMetadata = Record<string, TBackgroundTaskMetadataValue>;

interface IBackgroundTaskRequestBase {
  /** Working directory of the task. */
  cwd: string;
  mode?: TBackgroundTaskMode;
  /** Nesting depth: 1 for work started by a top-level session. */
  depth?: number;
  label?: string;
  description?: string;
  parentSessionId?: string;
  metadata?: TBackgroundTaskMetadata;
}

/** Watchdog settings for agent tasks (all optional; manager defaults apply). */
export interface IBackgroundTaskWatchdogOptions {
  /** No runner progress for this long fails the task (0 = off). */
  idleTimeoutMs?: number;
  /** Wall-clock cap (0 = none, the default). */
  maxRuntimeMs?: number;
  /** UTF-8 bytes of streamed text before the task is stopped (0 = off). */
  outputLimitBytes?: number;
  /** Number of text deltas before the task is stopped (0 = off). */
  maxTextDeltas?: number;
  /** Characters of recent output searched for repeats. */
  repetitionWindow?: number;
  /** Repeats of one delta or sentence inside the window that count as a loop (0 = off). */
  repetitionThreshold?: number;
  /** How often a runner-reported `pid` is checked for liveness (0 = off). */
  staleWorkerCheckMs?: number;
}

export interface IBackgroundAgentTaskRequest extends IBackgroundTaskRequestBase, IBackgroundTaskWatchdogOptions {
  kind: 'agent';
  /** Agent definition name (`general-purpose`, `Explore`, a custom agent…). */
  agentType: string;
  prompt: string;
  model?: string;
  isolation?: 'worktree';
  /** Set by the worktree runner for the inner runner. */
  worktreePath?: string;
  branchName?: string;
  /** Only these tools, after the agent definition's own lists (a forked skill's `allowed-tools`). */
  allowedTools?: readonly string[];
  /** A forked skill's run: its system prompt ends with the fork worker suffix instead of the subagent one. */
  forkWorker?: boolean;
  /** Legacy alias of `idleTimeoutMs`. */
  timeoutMs?: number;
}

export interface IBackgroundProcessTaskRequest extends IBackgroundTaskRequestBase {
  kind: 'process';
  command: string;
  /** Runner-owned wall-clock limit of the process (0/undefined = none). */
  timeoutMs?: number;
  env?: Record<string, string>;
}

export interface IBackgroundScheduledTaskRequest extends IBackgroundTaskRequestBase {
  kind: 'scheduled';
  /** Cron pattern (5 or 6 fields) or an ISO date for one fire. */
  schedule: string;
  timezone?: string;
  /** Stop after this many fires. */
  maxRuns?: number;
  /** What each fire runs. */
  task: IBackgroundProcessTaskRequest | IBackgroundAgentTaskRequest;
}

export type IBackgroundTaskRequest =
  | IBackgroundAgentTaskRequest
  | IBackgroundProcessTaskRequest
  | IBackgroundScheduledTaskRequest;

export interface IBackgroundTaskResult {
  output: string;
  exitCode?: number | null;
  signal?: string | null;
  metadata?: TBackgroundTaskMetadata;
}

/** Error projected into state: plain data, never a vendor error object. */
export interface IBackgroundTaskErrorState {
  code: string;
  category: TBackgroundTaskErrorCategory;
  recoverable: boolean;
  message: string;
}

/** Worktree handoff fields projected from result metadata. */
export interface IBackgroundTaskWorktreeState {
  worktreePath?: string;
  branchName?: string;
  worktreeStatus?: string;
  worktreeNextAction?: string;
  worktreeBaseRevision?: string;
  parentWorktreeStatus?: string;
}

export interface IBackgroundTaskState extends IBackgroundTaskWorktreeState {
  id: string;
  kind: TBackgroundTaskKind;
  mode: TBackgroundTaskMode;
  status: TBackgroundTaskStatus;
  depth: number;
  cwd: string;
  label?: string;
  description?: string;
  parentSessionId?: string;
  agentType?: string;
  command?: string;
  createdAt: number;
  updatedAt: number;
  startedAt?: number;
  completedAt?: number;
  lastActivityAt?: number;
  /** Tool in progress (from tool_start), or the failed action after a failing tool_end. */
  currentAction?: string;
  /** Permission requests the runner has asked and not yet had answered. */
  pendingPermissions: number;
  /** Scheduled tasks: when the next fire is due (epoch ms), while sleeping. */
  nextRunAt?: number;
  /** Why the task was cancelled (`cancel(id, reason)`, shutdown). */
  cancelReason?: string;
  pid?: number;
  logPath?: string;
  transcriptPath?: string;
  output?: string;
  exitCode?: number | null;
  signal?: string | null;
  error?: IBackgroundTaskErrorState;
  timeoutReason?: TBackgroundTaskTimeoutReason;
  /** A background-mode task finished and nobody has looked yet. */
  unread?: boolean;
  metadata: TBackgroundTaskMetadata;
  resultMetadata?: TBackgroundTaskMetadata;
}

export interface IBackgroundTaskLogCursor {
  /** Absolute line number to read from (0 = first line ever written). */
  offset: number;
}

export interface IBackgroundTaskLogPage {
  lines: string[];
  cursor: IBackgroundTaskLogCursor;
  nextCursor: IBackgroundTaskLogCursor;
  /** More lines already exist after this page. */
  hasMore: boolean;
  /** Lines before `cursor` were dropped from memory and cannot be read any more. */
  truncated: boolean;
  totalLines: number;
}

/** Progress a runner reports; the manager stamps the task id on and forwards it. */
export type TBackgroundTaskRunnerEvent =
  | { type: 'text_delta'; delta: string }
  | { type: 'tool_start'; toolName: string; toolCallId?: string; action?: string }
  | { type: 'tool_end'; toolName: string; toolCallId?: string; success: boolean; error?: string }
  | { type: 'permission_request'; requestId: string; toolName: string; description?: string }
  | { type: 'permission_decision'; requestId: string; allowed: boolean }
  /** A scheduled runner is waiting for its next fire; the task gives up its slot. */
  | { type: 'sleep'; nextRunAt?: number }
  /** A scheduled runner fired; the task is running again. */
  | { type: 'wake' }
  /** Liveness signal; refreshes the idle watchdog. */
  | { type: 'heartbeat' }
  /** The runner lost its worker (process gone, IPC closed). */
  | { type: 'worker_stale'; reason?: string };

export interface IBackgroundTaskStart<R extends IBackgroundTaskRequest = IBackgroundTaskRequest> {
  taskId: string;
  request: R;
  emit: (event: TBackgroundTaskRunnerEvent) => void;
}

export interface IBackgroundTaskHandle {
  readonly taskId: string;
  readonly pid?: number;
  readonly logPath?: string;
  readonly transcriptPath?: string;
  /** Settles once: resolves with the output, rejects with the failure. */
  readonly result: Promise<IBackgroundTaskResult>;
  /** Stops the work; resolves once it has stopped. */
  cancel(reason?: string): Promise<void>;
  send?(input: string): Promise<void>;
  readLog?(cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage>;
}

/** Executes one task kind. `start` must not block; the work runs behind the handle. */
export interface IBackgroundTaskRunner<R extends IBackgroundTaskRequest = IBackgroundTaskRequest> {
  readonly kind: TBackgroundTaskKind;
  start(start: IBackgroundTaskStart<R>): IBackgroundTaskHandle;
}

export type TBackgroundTaskIdFactory = (request: IBackgroundTaskRequest, sequence: number) => string;

type TTaskSnapshotEventType =
  | 'background_task_created'
  | 'background_task_started'
  | 'background_task_updated'
  | 'background_task_completed'
  | 'background_task_failed'
  | 'background_task_cancelled'
  | 'background_task_closed';

/** Everything the manager reports. Snapshots in events are frozen clones. */
export type TBackgroundTaskEvent =
  | { type: TTaskSnapshotEventType; taskId: string; task: Readonly<IBackgroundTaskState> }
  | { type: 'background_task_text_delta'; taskId: string; delta: string }
  | { type: 'background_task_tool_start'; taskId: string; toolName: string; toolCallId?: string; action: string }
  | {
      type: 'background_task_tool_end';
      taskId: string;
      toolName: string;
      toolCallId?: string;
      success: boolean;
      error?: string;
    }
  | {
      type: 'background_task_permission_request';
      taskId: string;
      requestId: string;
      toolName: string;
      description?: string;
      task: Readonly<IBackgroundTaskState>;
    };

/** Must not throw; a throwing listener is reported and skipped. */
export type TBackgroundTaskEventListener = (event: TBackgroundTaskEvent) => void;

export interface IBackgroundTaskListFilter {
  status?: TBackgroundTaskStatus | readonly TBackgroundTaskStatus[];
  kind?: TBackgroundTaskKind;
  mode?: TBackgroundTaskMode;
  parentSessionId?: string;
}

export interface IBackgroundTaskManager {
  spawn(request: IBackgroundTaskRequest): Promise<IBackgroundTaskState>;
  /** Resolves with the terminal snapshot (completed, failed or cancelled). */
  wait(taskId: string): Promise<IBackgroundTaskState>;
  list(filter?: IBackgroundTaskListFilter): IBackgroundTaskState[];
  get(taskId: string): IBackgroundTaskState | undefined;
  cancel(taskId: string, reason?: string): Promise<IBackgroundTaskState>;
  /** Removes a terminal task from the registry. */
  close(taskId: string): IBackgroundTaskState;
  shutdown(reason?: string): Promise<void>;
  send(taskId: string, input: string): Promise<void>;
  readLog(taskId: string, cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage>;
  subscribe(listener: TBackgroundTaskEventListener): () => void;
}
