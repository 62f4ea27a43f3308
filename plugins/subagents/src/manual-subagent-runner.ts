import { createBackgroundTaskLogPage } from '@tessera/plugin-background';
import type { ISubagentJobHandle, ISubagentJobResult, ISubagentJobStart, ISubagentRunner } from './types.js';

/** One job of a `ManualSubagentRunner`, settled by the test. */
export interface ManualSubagentJob {
  readonly start: ISubagentJobStart;
  readonly handle: ISubagentJobHandle;
  readonly cancelCalls: string[];
  readonly log: string[];
  resolve(result?: Partial<ISubagentJobResult>): void;
  reject(error: unknown): void;
}

export interface ManualSubagentRunnerOptions {
  logPath?: string;
  transcriptPath?: string;
  /** Thrown from `start()`. */
  startError?: unknown;
  /** Called by `cancel()`; default rejects the result with an AbortError. */
  onCancel?: (job: ManualSubagentJob) => void | Promise<void>;
}

/** An `ISubagentRunner` whose jobs settle only when the test says so. Public test double. */
export class ManualSubagentRunner implements ISubagentRunner {
  readonly jobs: ManualSubagentJob[] = [];

  constructor(private readonly options: ManualSubagentRunnerOptions = {}) {}

  job(jobId: string): ManualSubagentJob {
    const job = this.jobs.find((candidate) => candidate.start.jobId === jobId);
    if (!job) throw new Error(`ManualSubagentRunner: job ${jobId} was never started.`);
    return job;
  }

  start(start: ISubagentJobStart): ISubagentJobHandle {
    if (this.options.startError !== undefined) throw this.options.startError;
    let resolve!: (result: ISubagentJobResult) => void;
    let reject!: (error: unknown) => void;
    const result = new Promise<ISubagentJobResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    result.catch(() => undefined);
    const job: ManualSubagentJob = {
      start,
      cancelCalls: [],
      log: [],
      resolve: (partial = {}) => resolve({ output: '', ...partial }),
      reject,
      handle: undefined as unknown as ISubagentJobHandle,
    };
    const handle: ISubagentJobHandle = {
      jobId: start.jobId,
      ...(this.options.logPath ? { logPath: this.options.logPath } : {}),
      ...(this.options.transcriptPath ? { transcriptPath: this.options.transcriptPath } : {}),
      result,
      cancel: async (reason) => {
        job.cancelCalls.push(reason ?? '');
        if (this.options.onCancel) await this.options.onCancel(job);
        else reject(Object.assign(new Error('cancelled'), { name: 'AbortError' }));
      },
      readLog: async (cursor) => createBackgroundTaskLogPage(job.log, cursor),
    };
    (job as { handle: ISubagentJobHandle }).handle = handle;
    this.jobs.push(job);
    return handle;
  }
}
