import type { DiagnosticsReporter, ISession, WorktreeContext } from '@tessera/contracts';
import { describeError, processWarningDiagnostics } from '@tessera/contracts';
import { BackgroundTaskError, isBackgroundTaskError, type TBackgroundTaskMetadata } from '@tessera/plugin-background';
import type { ISubagentJobHandle, ISubagentJobResult, ISubagentJobStart, ISubagentRunner } from './types.js';
import { deriveSpawnRequest } from './parent-scopes.js';

/** A worktree made for one job. */
export interface IPreparedSubagentWorktree {
  worktreePath: string;
  branchName: string;
  /** Commit the worktree started from. */
  baseRevision?: string;
  /** Status of the parent checkout when the worktree was made (e.g. `clean`, `dirty: 2 changed`). */
  parentStatus?: string;
}

/** Concrete worktree I/O. Methods may answer synchronously or with a promise. */
export interface ISubagentWorktreeAdapter {
  prepare(input: { jobId: string; cwd: string }): IPreparedSubagentWorktree | Promise<IPreparedSubagentWorktree>;
  /** True when the job left nothing behind (no changes, no new commits). */
  isClean(worktree: IPreparedSubagentWorktree): boolean | Promise<boolean>;
  /** One-line description of what the job left behind. */
  getStatus?(worktree: IPreparedSubagentWorktree): string | Promise<string>;
  remove(worktree: IPreparedSubagentWorktree): void | Promise<void>;
}

/** The two kernel hooks this runner fires (pass `kernel.hooks`). */
export interface WorktreeHooks {
  worktreeCreate: { promise(context: WorktreeContext): Promise<void> };
  worktreeRemove: { promise(context: WorktreeContext): Promise<void> };
}

export interface WorktreeSubagentRunnerOptions {
  runner: ISubagentRunner;
  worktreeAdapter: ISubagentWorktreeAdapter;
  hooks?: WorktreeHooks;
  /** The session reported in hook contexts. */
  session?: ISession;
  /** Hook failures are notifications, not job failures; they end up here. */
  onHookError?: (error: unknown, hook: 'worktreeCreate' | 'worktreeRemove') => void;
  /**
   * Where hook failures are reported (code `TESSERA_WORKTREE_HOOK`) when there is no
   * `onHookError`. Default: Node process warnings; the subagents plugin passes the kernel's
   * `Diagnostics`.
   */
  diagnostics?: DiagnosticsReporter;
}

const isPromiseLike = <T>(value: T | Promise<T>): value is Promise<T> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

/**
 * Decorates a runner with worktree isolation. Requests without `isolation: 'worktree'` pass
 * through untouched. Otherwise: prepare a worktree, fire `worktreeCreate`, run the inner
 * runner inside it, and at the end remove the worktree exactly once if it is clean, or keep
 * it and hand over its path, branch, status and next step in the result metadata.
 */
export class WorktreeSubagentRunner implements ISubagentRunner {
  constructor(private readonly options: WorktreeSubagentRunnerOptions) {}

  start(job: ISubagentJobStart): ISubagentJobHandle {
    if (job.request.isolation !== 'worktree') return this.options.runner.start(job);
    return new WorktreeJob(job, this.options).handle;
  }
}

export function createWorktreeSubagentRunner(options: WorktreeSubagentRunnerOptions): WorktreeSubagentRunner {
  return new WorktreeSubagentRunner(options);
}

class WorktreeJob {
  readonly handle: ISubagentJobHandle;
  private inner: ISubagentJobHandle | undefined;
  private worktree: IPreparedSubagentWorktree | undefined;
  private cancelReason: string | undefined;
  private finalizing: Promise<TBackgroundTaskMetadata> | undefined;
  private prepared: Promise<void>;
  private resolve!: (result: ISubagentJobResult) => void;
  private reject!: (error: unknown) => void;

  constructor(
    private readonly job: ISubagentJobStart,
    private readonly options: WorktreeSubagentRunnerOptions,
  ) {
    const result = new Promise<ISubagentJobResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    result.catch(() => undefined);
    this.prepared = this.begin();
    const self = this;
    this.handle = {
      jobId: job.jobId,
      // Getters: with an asynchronous adapter the inner handle exists only after prepare.
      get pid() {
        return self.inner?.pid;
      },
      get logPath() {
        return self.inner?.logPath;
      },
      get transcriptPath() {
        return self.inner?.transcriptPath;
      },
      result,
      cancel: (reason) => this.cancel(reason),
      send: async (prompt) => {
        if (!this.inner?.send) throw new BackgroundTaskError('runner', `Subagent ${job.jobId} does not accept follow-up prompts.`, { code: 'subagent_send_unsupported', taskId: job.jobId });
        await this.inner.send(prompt);
      },
      readLog: async (cursor) => {
        if (!this.inner?.readLog) throw new BackgroundTaskError('runner', `Subagent ${job.jobId} keeps no readable log.`, { code: 'background_log_unsupported', taskId: job.jobId });
        return this.inner.readLog(cursor);
      },
    };
  }

  private begin(): Promise<void> {
    const { jobId, request } = this.job;
    let prepared: IPreparedSubagentWorktree | Promise<IPreparedSubagentWorktree>;
    try {
      prepared = this.options.worktreeAdapter.prepare({ jobId, cwd: request.cwd });
    } catch (error) {
      this.reject(error);
      return Promise.resolve();
    }
    if (!isPromiseLike(prepared)) {
      this.launch(prepared);
      return Promise.resolve();
    }
    return prepared.then(
      (worktree) => this.launch(worktree),
      (error: unknown) => this.reject(error),
    );
  }

  private launch(worktree: IPreparedSubagentWorktree): void {
    this.worktree = worktree;
    this.fireHook('worktreeCreate', worktree);
    if (this.cancelReason !== undefined) {
      void this.end(undefined, this.cancelledError());
      return;
    }
    const { request } = this.job;
    try {
      this.inner = this.options.runner.start({
        ...this.job,
        // Derived, not copied: the scope held for the job's request at spawn follows it.
        request: deriveSpawnRequest(request, { cwd: worktree.worktreePath, worktreePath: worktree.worktreePath, branchName: worktree.branchName }),
      });
    } catch (error) {
      void this.end(undefined, error);
      return;
    }
    this.inner.result.then(
      (result) => this.end(result, undefined),
      (error: unknown) => this.end(undefined, error),
    );
  }

  private async cancel(reason = 'cancelled'): Promise<void> {
    this.cancelReason ??= reason;
    await this.prepared;
    if (this.inner) {
      // A failed cancel may leave the agent writing in the worktree: keep it then.
      await this.inner.cancel(reason);
    }
    if (this.worktree) await this.finalize(this.worktree);
  }

  private async end(result: ISubagentJobResult | undefined, error: unknown): Promise<void> {
    const worktree = this.worktree!;
    const metadata = { ...result?.metadata, ...(await this.finalize(worktree)) };
    if (result && error === undefined) {
      this.resolve({ ...result, metadata });
      return;
    }
    const category = isBackgroundTaskError(error) ? error.taskCategory : 'runner';
    this.reject(
      new BackgroundTaskError(category, describeError(error), {
        code: isBackgroundTaskError(error) ? error.code : 'subagent_failed',
        taskId: this.job.jobId,
        details: { ...(isBackgroundTaskError(error) ? error.details : {}), ...metadata },
        cause: error,
      }),
    );
  }

  /** Removes a clean worktree or describes a dirty one; runs once, whoever asks first. */
  private finalize(worktree: IPreparedSubagentWorktree): Promise<TBackgroundTaskMetadata> {
    this.finalizing ??= (async (): Promise<TBackgroundTaskMetadata> => {
      const adapter = this.options.worktreeAdapter;
      let clean = false;
      try {
        clean = await adapter.isClean(worktree);
        if (clean) {
          await adapter.remove(worktree);
          this.fireHook('worktreeRemove', worktree);
          return { worktreeRemoved: true };
        }
      } catch (error) {
        clean = false;
        return this.handoff(worktree, `unknown (${describeError(error)})`);
      }
      let status = 'dirty';
      try {
        status = (await adapter.getStatus?.(worktree)) ?? status;
      } catch (error) {
        status = `dirty (status unavailable: ${describeError(error)})`;
      }
      return this.handoff(worktree, status);
    })();
    return this.finalizing;
  }

  private handoff(worktree: IPreparedSubagentWorktree, status: string): TBackgroundTaskMetadata {
    return {
      worktreeRemoved: false,
      worktreePath: worktree.worktreePath,
      branchName: worktree.branchName,
      worktreeStatus: status,
      worktreeNextAction: `Review the changes in ${worktree.worktreePath} (branch ${worktree.branchName}); merge the branch to keep them, or run \`git worktree remove --force ${worktree.worktreePath}\` and \`git branch -D ${worktree.branchName}\` to discard them.`,
      ...(worktree.baseRevision ? { worktreeBaseRevision: worktree.baseRevision } : {}),
      ...(worktree.parentStatus ? { parentWorktreeStatus: worktree.parentStatus } : {}),
    };
  }

  private cancelledError(): BackgroundTaskError {
    return new BackgroundTaskError('runner', `Subagent ${this.job.jobId} was cancelled (${this.cancelReason}).`, { code: 'subagent_cancelled', taskId: this.job.jobId });
  }

  private fireHook(hook: 'worktreeCreate' | 'worktreeRemove', worktree: IPreparedSubagentWorktree): void {
    const hooks = this.options.hooks;
    if (!hooks) return;
    const context: WorktreeContext = {
      path: worktree.worktreePath,
      branch: worktree.branchName,
      ...(this.options.session ? { session: this.options.session } : {}),
    };
    hooks[hook].promise(context).catch((error: unknown) => {
      if (this.options.onHookError) this.options.onHookError(error, hook);
      else {
        (this.options.diagnostics ?? processWarningDiagnostics).report({
          severity: 'warning',
          code: 'TESSERA_WORKTREE_HOOK',
          source: 'subagents',
          message: `${hook} hook failed for ${worktree.worktreePath}: ${describeError(error)}`,
        });
      }
    });
  }
}
