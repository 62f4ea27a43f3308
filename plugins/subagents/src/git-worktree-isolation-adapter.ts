import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describeError } from '@tessera/contracts';
import { assertSafeTaskId, BackgroundTaskError } from '@tessera/plugin-background';
import type { IPreparedSubagentWorktree, ISubagentWorktreeAdapter } from './worktree-subagent-runner.js';

export interface GitWorktreeIsolationAdapterOptions {
  /** Where worktrees go (default `<git common dir>/tessera-worktrees`, outside the working tree's status). */
  baseDir?: string;
  /** Branch name prefix (default `tessera/agent-`). */
  branchPrefix?: string;
  /** The git executable (default `git`). */
  git?: string;
}

interface GitFailure {
  stderr: string;
  code: string | undefined;
}

/**
 * `ISubagentWorktreeAdapter` over the git CLI. Synchronous (`execFileSync`), so the worktree
 * runner can start the inner runner, and expose its log paths, straight from `start()`.
 */
export class GitWorktreeIsolationAdapter implements ISubagentWorktreeAdapter {
  private readonly roots = new Map<string, string>();

  constructor(private readonly options: GitWorktreeIsolationAdapterOptions = {}) {}

  prepare({ jobId, cwd }: { jobId: string; cwd: string }): IPreparedSubagentWorktree {
    assertSafeTaskId(jobId, 'subagent job id');
    const root = this.findRoot(cwd);
    const baseRevision = this.requireHead(root);
    const changed = this.git(root, ['status', '--porcelain']).split('\n').filter(Boolean).length;
    const parentStatus = changed === 0 ? 'clean' : `dirty: ${changed} changed path(s) not in the worktree`;
    const commonDir = resolve(root, this.git(root, ['rev-parse', '--git-common-dir']));
    const worktreePath = join(this.options.baseDir ?? join(commonDir, 'tessera-worktrees'), jobId);
    const branchName = `${this.options.branchPrefix ?? 'tessera/agent-'}${jobId}`;
    if (existsSync(worktreePath)) {
      throw this.error(`Worktree path ${worktreePath} already exists; remove it (git worktree remove --force ${worktreePath}) or use a new job id.`, 'worktree_exists', { worktreePath });
    }
    this.git(root, ['worktree', 'add', '-b', branchName, worktreePath, baseRevision]);
    this.roots.set(worktreePath, root);
    return { worktreePath, branchName, baseRevision, parentStatus };
  }

  isClean(worktree: IPreparedSubagentWorktree): boolean {
    if (this.git(worktree.worktreePath, ['status', '--porcelain']).trim() !== '') return false;
    return worktree.baseRevision === undefined || this.git(worktree.worktreePath, ['rev-parse', 'HEAD']) === worktree.baseRevision;
  }

  getStatus(worktree: IPreparedSubagentWorktree): string {
    const changed = this.git(worktree.worktreePath, ['status', '--porcelain']).split('\n').filter(Boolean).length;
    const commits = worktree.baseRevision
      ? Number(this.git(worktree.worktreePath, ['rev-list', '--count', `${worktree.baseRevision}..HEAD`]))
      : 0;
    return `dirty: ${changed} uncommitted change(s), ${commits} new commit(s) on ${worktree.branchName}`;
  }

  remove(worktree: IPreparedSubagentWorktree): void {
    const root = this.roots.get(worktree.worktreePath) ?? this.findRoot(resolve(worktree.worktreePath, '..'));
    this.git(root, ['worktree', 'remove', worktree.worktreePath]);
    this.git(root, ['branch', '-D', worktree.branchName]);
    this.roots.delete(worktree.worktreePath);
  }

  private findRoot(cwd: string): string {
    try {
      return this.git(cwd, ['rev-parse', '--show-toplevel']);
    } catch (error) {
      if (error instanceof BackgroundTaskError && error.code === 'worktree_git_missing') throw error;
      throw this.error(
        `Worktree isolation needs a Git repository, but ${cwd} is not inside one. Run \`git init\` there and commit once, or spawn the subagent without isolation: 'worktree'.`,
        'worktree_not_a_git_repository',
        { cwd },
      );
    }
  }

  private requireHead(root: string): string {
    try {
      return this.git(root, ['rev-parse', '--verify', 'HEAD']);
    } catch {
      throw this.error(`The Git repository at ${root} has no commits yet, so there is nothing to branch a worktree from; commit once, then retry.`, 'worktree_no_commits', { cwd: root });
    }
  }

  private git(cwd: string, args: string[]): string {
    const git = this.options.git ?? 'git';
    try {
      return execFileSync(git, ['-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch (raw) {
      const failure = raw as GitFailure & Error;
      if (failure.code === 'ENOENT') {
        throw this.error(`Cannot run "${git}": it is not installed or not on PATH. Install Git to use worktree isolation.`, 'worktree_git_missing', {});
      }
      throw new BackgroundTaskError('runner', `git ${args.join(' ')} failed in ${cwd}: ${String(failure.stderr ?? '').trim() || describeError(raw)}`, {
        code: 'worktree_git_failed',
        details: { cwd, args: args.join(' ') },
      });
    }
  }

  private error(message: string, code: string, details: Record<string, unknown>): BackgroundTaskError {
    return new BackgroundTaskError('validation', message, { code, details });
  }
}

export function createGitWorktreeIsolationAdapter(options?: GitWorktreeIsolationAdapterOptions): GitWorktreeIsolationAdapter {
  return new GitWorktreeIsolationAdapter(options);
}
