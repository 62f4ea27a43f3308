import { randomBytes } from 'node:crypto';
import {
  BackgroundTaskError,
  BackgroundTaskManager,
  type BackgroundTaskManagerOptions,
  type IBackgroundAgentTaskRequest,
  type IBackgroundTaskManager,
  type IBackgroundTaskHandle,
  type IBackgroundTaskLogCursor,
  type IBackgroundTaskLogPage,
  type IBackgroundTaskRunner,
  type IBackgroundTaskState,
} from '@tessera/plugin-background';
import type {
  ISubagentJobState,
  ISubagentListFilter,
  ISubagentManager,
  ISubagentRunner,
  ISubagentSpawnRequest,
} from './types.js';
import { copyWith } from '@tessera/contracts';

const WATCHDOG_FIELDS = ['idleTimeoutMs', 'maxRuntimeMs', 'outputLimitBytes', 'maxTextDeltas', 'repetitionWindow', 'repetitionThreshold', 'staleWorkerCheckMs'] as const;

export function toAgentTaskRequest(request: ISubagentSpawnRequest): IBackgroundAgentTaskRequest {
  const task: IBackgroundAgentTaskRequest = {
    kind: 'agent',
    agentType: request.type,
    prompt: request.prompt,
    cwd: request.cwd,
    parentSessionId: request.parentSessionId,
    mode: request.mode ?? 'foreground',
    depth: request.depth ?? 1,
    label: request.label ?? request.type,
  };
  for (const field of ['model', 'isolation', 'worktreePath', 'branchName', 'metadata', 'allowedTools', 'forkWorker', ...WATCHDOG_FIELDS] as const) {
    if (request[field] !== undefined) (task as unknown as Record<string, unknown>)[field] = request[field];
  }
  return task;
}

export function toSubagentSpawnRequest(task: IBackgroundAgentTaskRequest): ISubagentSpawnRequest {
  const request: ISubagentSpawnRequest = {
    type: task.agentType,
    prompt: task.prompt,
    cwd: task.cwd,
    parentSessionId: task.parentSessionId ?? '',
  };
  for (const field of ['label', 'mode', 'depth', 'model', 'isolation', 'worktreePath', 'branchName', 'metadata', 'allowedTools', 'forkWorker', ...WATCHDOG_FIELDS] as const) {
    if (task[field] !== undefined) (request as unknown as Record<string, unknown>)[field] = task[field];
  }
  return request;
}

/**
 * Adapts an `ISubagentRunner` to the background layer's `agent` runner port. `spawnRequest`
 * gives back the request a task was made from, when it is known (its `parentSession` is not in
 * the task); otherwise the runner gets one rebuilt from the task.
 */
export function createSubagentTaskRunner(
  runner: ISubagentRunner,
  spawnRequest?: (task: IBackgroundAgentTaskRequest) => ISubagentSpawnRequest | undefined,
): IBackgroundTaskRunner<IBackgroundAgentTaskRequest> {
  return {
    kind: 'agent',
    start({ taskId, request, emit }): IBackgroundTaskHandle {
      const handle = runner.start({ jobId: taskId, request: spawnRequest?.(request) ?? toSubagentSpawnRequest(request), emit });
      return {
        taskId,
        // Getters: a decorator may learn its paths after start() returned.
        get pid() {
          return handle.pid;
        },
        get logPath() {
          return handle.logPath;
        },
        get transcriptPath() {
          return handle.transcriptPath;
        },
        result: handle.result,
        cancel: (reason) => handle.cancel(reason),
        ...(handle.send ? { send: (input: string) => handle.send!(input) } : {}),
        ...(handle.readLog ? { readLog: (cursor?: IBackgroundTaskLogCursor) => handle.readLog!(cursor) } : {}),
      };
    },
  };
}

export interface SubagentManagerOptions
  extends Pick<BackgroundTaskManagerOptions, 'maxConcurrent' | 'maxDepth' | 'maxQueued' | 'clock' | 'eventSink' | 'watchdog' | 'onError' | 'idFactory'> {
  /** Runs the jobs; the manager builds its own `BackgroundTaskManager` around it. */
  runner?: ISubagentRunner;
  /** Or share an existing manager whose `agent` tasks something runs (a runner, or remote workers). */
  backgroundTaskManager?: IBackgroundTaskManager;
  /**
   * Called with each request before it is queued: throws to refuse it (the error is `spawn`'s).
   * May return a function, called once when that job has ended or could not be queued (to
   * release what was held for it).
   */
  admit?: (request: ISubagentSpawnRequest) => (() => void) | undefined;
}

const toJobState = (state: IBackgroundTaskState): ISubagentJobState => copyWith(state, { type: state.agentType ?? '' });

/**
 * Subagent jobs as `agent` tasks of a `BackgroundTaskManager`: the lifecycle, queue and
 * watchdogs are the background layer's; this class only maps requests and states.
 */
export class SubagentManager implements ISubagentManager {
  private readonly manager: IBackgroundTaskManager;
  private readonly admit: SubagentManagerOptions['admit'];
  /**
   * Own manager only: the request each task was spawned with, so the runner gets it with its
   * `parentSession`, which a task does not carry, and as the same object `admit` saw. Dropped
   * when the task ends, however it ends: a task kept until `close` (one cancelled while queued
   * included) does not keep its parent session's services.
   */
  private readonly spawnRequests?: WeakMap<IBackgroundAgentTaskRequest, ISubagentSpawnRequest>;

  constructor(options: SubagentManagerOptions) {
    this.admit = options.admit;
    if (options.backgroundTaskManager) {
      this.manager = options.backgroundTaskManager;
    } else if (options.runner) {
      const { runner, backgroundTaskManager: _unused, admit: _admit, ...rest } = options;
      const spawnRequests = new WeakMap<IBackgroundAgentTaskRequest, ISubagentSpawnRequest>();
      this.spawnRequests = spawnRequests;
      this.manager = new BackgroundTaskManager({
        // Unique per manager, so transcripts of two managers under one parent never collide.
        idFactory: (_request, sequence) => `agent_${sequence}_${randomBytes(3).toString('hex')}`,
        ...rest,
        runners: [createSubagentTaskRunner(runner, (task) => spawnRequests.get(task))],
      });
    } else {
      throw new BackgroundTaskError('validation', 'SubagentManager needs a runner (e.g. createInProcessSubagentRunner(...)) or a backgroundTaskManager with an agent runner.', {
        code: 'subagent_manager_misconfigured',
      });
    }
  }

  getBackgroundTaskManager(): IBackgroundTaskManager {
    return this.manager;
  }

  async spawn(request: ISubagentSpawnRequest): Promise<ISubagentJobState> {
    for (const field of ['type', 'prompt', 'cwd', 'parentSessionId'] as const) {
      if (typeof request?.[field] !== 'string' || request[field] === '') {
        throw new BackgroundTaskError('validation', `Subagent spawn request needs a non-empty ${field}.`, {
          code: 'subagent_invalid_request',
          details: { field },
        });
      }
    }
    const task = toAgentTaskRequest(request);
    // Normalised once (defaults filled in, only the listed fields: what a task carries) plus the
    // parent session, which it does not: `admit` and the runner get this one object, so a scope
    // held for it is the one the job finds, and a caller reusing its request changes no job.
    const spawned = toSubagentSpawnRequest(task);
    const normalized = request.parentSession ? copyWith(spawned, { parentSession: request.parentSession }) : spawned;
    const release = this.admit?.(normalized);
    this.spawnRequests?.set(task, normalized);
    const ended = (): void => {
      this.spawnRequests?.delete(task);
      release?.();
    };
    let state: IBackgroundTaskState;
    try {
      state = await this.manager.spawn(task);
    } catch (error) {
      ended();
      throw error;
    }
    if (release || this.spawnRequests) this.manager.wait(state.id).then(ended, ended);
    return toJobState(state);
  }

  async wait(jobId: string): Promise<ISubagentJobState> {
    return toJobState(await this.manager.wait(this.agentId(jobId)));
  }

  list(filter: ISubagentListFilter = {}): ISubagentJobState[] {
    return this.manager.list({ ...filter, kind: 'agent' }).map(toJobState);
  }

  get(jobId: string): ISubagentJobState | undefined {
    const state = this.manager.get(jobId);
    return state && state.kind === 'agent' ? toJobState(state) : undefined;
  }

  async cancel(jobId: string, reason?: string): Promise<ISubagentJobState> {
    return toJobState(await this.manager.cancel(this.agentId(jobId), reason));
  }

  close(jobId: string): ISubagentJobState {
    return toJobState(this.manager.close(this.agentId(jobId)));
  }

  send(jobId: string, prompt: string): Promise<void> {
    return this.manager.send(this.agentId(jobId), prompt);
  }

  readLog(jobId: string, cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage> {
    return this.manager.readLog(this.agentId(jobId), cursor);
  }

  /** Ids of other task kinds in a shared manager are not subagent jobs. */
  private agentId(jobId: string): string {
    const state = this.manager.get(jobId);
    if (state && state.kind !== 'agent') {
      throw new BackgroundTaskError('validation', `Task ${jobId} is a ${state.kind} task, not a subagent job.`, { code: 'subagent_not_an_agent_task', taskId: jobId });
    }
    return jobId;
  }
}
