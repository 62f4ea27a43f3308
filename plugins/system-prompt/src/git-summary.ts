import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface GitSummary {
  /** The branch, `detached HEAD` when none is checked out. */
  branch: string;
  /** Tracked files with changes (staged or not). */
  changed: number;
  untracked: number;
}

/**
 * Branch and dirty state of the work tree `cwd` lies in, from one `git status --porcelain
 * --branch`; undefined outside a repository, without git, or when git takes longer than
 * `timeoutMs`. Read-only: `GIT_OPTIONAL_LOCKS=0` keeps git from refreshing the index.
 */
export function readGitSummary(cwd: string, timeoutMs: number): Promise<GitSummary | undefined> {
  // Outside a repository there is nothing to report: a few stat calls spare a git process.
  if (!insideRepository(cwd)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    execFile(
      'git',
      ['status', '--porcelain=v1', '--branch', '--untracked-files=normal'],
      { cwd, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, windowsHide: true, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' } },
      (error, stdout) => resolve(error ? undefined : parseGitStatus(String(stdout))),
    );
  });
}

/** Parses `git status --porcelain=v1 --branch` output. */
export function parseGitStatus(output: string): GitSummary | undefined {
  const lines = output.split('\n').filter((line) => line !== '');
  const header = lines[0]?.startsWith('## ') ? lines.shift()!.slice(3) : undefined;
  if (header === undefined) return undefined;
  let branch: string;
  const unborn = /^(?:No commits yet on|Initial commit on) (.+)$/.exec(header);
  if (unborn) branch = unborn[1]!;
  else if (header.startsWith('HEAD (no branch)')) branch = 'detached HEAD';
  else branch = header.replace(/\.\.\..*$/, '').replace(/ \[.*\]$/, '');
  const untracked = lines.filter((line) => line.startsWith('??')).length;
  const ignored = lines.filter((line) => line.startsWith('!!')).length;
  return { branch, changed: lines.length - untracked - ignored, untracked };
}

/** `clean`, or `3 changed, 1 untracked`. */
export function describeGitState(summary: GitSummary): string {
  const parts: string[] = [];
  if (summary.changed > 0) parts.push(`${summary.changed} changed`);
  if (summary.untracked > 0) parts.push(`${summary.untracked} untracked`);
  return parts.length === 0 ? 'clean' : parts.join(', ');
}

/** Whether `cwd` or a folder above it holds `.git` (or git is pointed elsewhere by `GIT_DIR`). */
function insideRepository(cwd: string): boolean {
  if (process.env.GIT_DIR) return true;
  for (let folder = cwd; ; folder = dirname(folder)) {
    try {
      statSync(join(folder, '.git'));
      return true;
    } catch {
      // not here; look above
    }
    if (dirname(folder) === folder) return false;
  }
}
