import type { ISession } from '@tessera/contracts';
import type {
  IBackgroundTaskManager,
  IBackgroundTaskListFilter,
  IBackgroundTaskLogCursor,
  IBackgroundTaskLogPage,
  IBackgroundTaskState,
  IBackgroundTaskWatchdogOptions,
  TBackgroundTaskMetadata,
  TBackgroundTaskMode,
  TBackgroundTaskRunnerEvent,
  TBackgroundTaskStatus,
} from '@tessera/plugin-background';

export type TSubagentJobMode = TBackgroundTaskMode;
export type TSubagentJobStatus = TBackgroundTaskStatus;

export interface ISubagentSpawnRequest extends IBackgroundTaskWatchdogOptions {
  /** Agent definition name: `general-purpose`, `Explore`, `Plan` or a custom agent. */
  type: string;
  prompt: string;
  cwd: string;
  parentSessionId: string;
  /**
   * The session that asks (or anything with its `services`): the job runs with its scope (see
   * `SubagentLaunchRequest.parentSession`), found by identity, not by `parentSessionId`. Kept in
   * this process: a job sent to remote workers does not carry it.
   */
  parentSession?: Pick<ISession, 'services'>;
  label?: string;
  mode?: TSubagentJobMode;
  /** 1 for a subagent of a top-level session. */
  depth?: number;
  /** Overrides the definition's model. */
  model?: string;
  /** Narrows the tools further, after the definition's lists (a forked skill's `allowed-tools`). */
  allowedTools?: readonly string[];
  /** A forked skill's run (`context: fork`): the fork worker suffix (answer within 500 words) ends its system prompt. */
  forkWorker?: boolean;
  isolation?: 'worktree';
  /** Set by `WorktreeSubagentRunner` for the runner it wraps. */
  worktreePath?: string;
  branchName?: string;
  metadata?: TBackgroundTaskMetadata;
}

export interface ISubagentJobResult {
  output: string;
  metadata?: TBackgroundTaskMetadata;
}

export interface ISubagentJobStart {
  jobId: string;
  request: ISubagentSpawnRequest;
  emit?: (event: TBackgroundTaskRunnerEvent) => void;
}

export interface ISubagentJobHandle {
  readonly jobId: string;
  readonly pid?: number;
  readonly logPath?: string;
  readonly transcriptPath?: string;
  result: Promise<ISubagentJobResult>;
  cancel(reason?: string): Promise<void>;
  send?(prompt: string): Promise<void>;
  readLog?(cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage>;
}

/** Executes one subagent job. `start` must not block. */
export interface ISubagentRunner {
  start(job: ISubagentJobStart): ISubagentJobHandle;
}

/** A background task snapshot of kind `agent`, with the agent type as `type`. */
export interface ISubagentJobState extends IBackgroundTaskState {
  type: string;
}

export type ISubagentListFilter = Omit<IBackgroundTaskListFilter, 'kind'>;

export interface ISubagentManager {
  spawn(request: ISubagentSpawnRequest): Promise<ISubagentJobState>;
  wait(jobId: string): Promise<ISubagentJobState>;
  list(filter?: ISubagentListFilter): ISubagentJobState[];
  get(jobId: string): ISubagentJobState | undefined;
  cancel(jobId: string, reason?: string): Promise<ISubagentJobState>;
  close(jobId: string): ISubagentJobState;
  send(jobId: string, prompt: string): Promise<void>;
  readLog(jobId: string, cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage>;
  getBackgroundTaskManager(): IBackgroundTaskManager;
}
