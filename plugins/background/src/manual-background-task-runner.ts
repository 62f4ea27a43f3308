import type {
  IBackgroundTaskHandle,
  IBackgroundTaskLogCursor,
  IBackgroundTaskLogPage,
  IBackgroundTaskRequest,
  IBackgroundTaskResult,
  IBackgroundTaskRunner,
  IBackgroundTaskStart,
  TBackgroundTaskKind,
  TBackgroundTaskRunnerEvent,
} from './types.js';
import { createBackgroundTaskLogPage } from './log-pages.js';

/** One started task of a `ManualBackgroundTaskRunner`, driven by the test. */
export interface ManualBackgroundTaskRun {
  readonly taskId: string;
  readonly request: IBackgroundTaskRequest;
  readonly handle: IBackgroundTaskHandle;
  /** Reasons passed to `cancel()`, in order. */
  readonly cancelCalls: string[];
  readonly sent: string[];
  readonly log: string[];
  emit(event: TBackgroundTaskRunnerEvent): void;
  resolve(result?: Partial<IBackgroundTaskResult>): void;
  reject(error: unknown): void;
}

export interface ManualBackgroundTaskRunnerOptions {
  kind?: TBackgroundTaskKind;
  /** Settle at once with `{ output: '' }` (a no-op runner for benchmarks). */
  autoResolve?: boolean;
  /** What `cancel()` does; default: rejects the result with an AbortError-like error. */
  onCancel?: (run: ManualBackgroundTaskRun, reason?: string) => Promise<void> | void;
  pid?: number;
  logPath?: string;
  transcriptPath?: string;
  /** Throw from `start()` (a synchronous start failure). */
  startError?: unknown;
  /** Called inside `start()`, before the handle is returned. */
  duringStart?: (start: IBackgroundTaskStart) => void;
}

/** A runner whose tasks settle only when the test says so. Public test double. */
export class ManualBackgroundTaskRunner implements IBackgroundTaskRunner {
  readonly kind: TBackgroundTaskKind;
  readonly runs: ManualBackgroundTaskRun[] = [];

  constructor(private readonly options: ManualBackgroundTaskRunnerOptions = {}) {
    this.kind = options.kind ?? 'agent';
  }

  /** The run of `taskId`; throws when it never started. */
  run(taskId: string): ManualBackgroundTaskRun {
    const run = this.runs.find((candidate) => candidate.taskId === taskId);
    if (!run) throw new Error(`ManualBackgroundTaskRunner: task ${taskId} was never started.`);
    return run;
  }

  start(start: IBackgroundTaskStart): IBackgroundTaskHandle {
    const { options } = this;
    if (options.startError !== undefined) throw options.startError;
    options.duringStart?.(start);
    if (options.autoResolve) {
      return { taskId: start.taskId, result: Promise.resolve({ output: '' }), cancel: () => Promise.resolve() };
    }
    let resolve!: (result: IBackgroundTaskResult) => void;
    let reject!: (error: unknown) => void;
    const result = new Promise<IBackgroundTaskResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const run: ManualBackgroundTaskRun = {
      taskId: start.taskId,
      request: start.request,
      cancelCalls: [],
      sent: [],
      log: [],
      emit: start.emit,
      resolve: (partial = {}) => resolve({ output: '', ...partial }),
      reject,
      handle: undefined as unknown as IBackgroundTaskHandle,
    };
    const handle: IBackgroundTaskHandle = {
      taskId: start.taskId,
      ...(options.pid === undefined ? {} : { pid: options.pid }),
      ...(options.logPath === undefined ? {} : { logPath: options.logPath }),
      ...(options.transcriptPath === undefined ? {} : { transcriptPath: options.transcriptPath }),
      result,
      cancel: async (reason?: string) => {
        run.cancelCalls.push(reason ?? '');
        if (options.onCancel) await options.onCancel(run, reason);
        else reject(Object.assign(new Error('cancelled'), { name: 'AbortError' }));
      },
      send: async (input: string) => {
        run.sent.push(input);
      },
      readLog: async (cursor?: IBackgroundTaskLogCursor): Promise<IBackgroundTaskLogPage> =>
        createBackgroundTaskLogPage(run.log, cursor),
    };
    (run as { handle: IBackgroundTaskHandle }).handle = handle;
    // Swallow the unhandled-rejection warning: the manager always attaches its handler.
    result.catch(() => undefined);
    this.runs.push(run);
    return handle;
  }
}
