import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatCommits, GitLogError, readGitLog } from './read-git-log.js';
import { makeRepository } from './test-repository.test-helper.js';

let repository: string;
beforeAll(() => {
  repository = makeRepository();
});

describe('readGitLog', () => {
  it('lists the commits of a range, newest first, with their bodies', async () => {
    const { commits, truncated } = await readGitLog(repository, { range: 'v1.0..HEAD' });
    expect(commits.map((commit) => commit.subject)).toEqual(['docs: explain usage', 'fix!: reject empty ranges', 'feat: add --json output']);
    expect(commits[1]).toMatchObject({ author: 'Ada Example', date: '2025-03-03', body: 'BREAKING CHANGE: an empty range is now an error instead of an empty list.' });
    expect(commits[0]!.shortHash).toBe(commits[0]!.hash.slice(0, commits[0]!.shortHash.length));
    expect(truncated).toBe(false);
  });

  it('keeps to the paths given and to maxCommits, and says when it cut', async () => {
    expect((await readGitLog(repository, { range: 'v1.0..HEAD', paths: ['README.md'] })).commits.map((commit) => commit.subject)).toEqual(['docs: explain usage']);
    const cut = await readGitLog(repository, { range: 'HEAD', maxCommits: 2 });
    expect(cut.commits).toHaveLength(2);
    expect(cut.truncated).toBe(true);
    expect(formatCommits(cut, 'HEAD')).toContain('(More commits in HEAD were left out');
  });

  it('explains a range git does not know', async () => {
    const error = await readGitLog(repository, { range: 'v9.9..HEAD' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitLogError);
    expect(error).toMatchObject({ code: 'git_log_bad_range', category: 'validation', recoverable: true, details: { range: 'v9.9..HEAD' } });
    expect((error as Error).message).toMatch(/git does not know the range "v9\.9\.\.HEAD".*git tag --list/);
  });

  it('refuses option-like and shell-like ranges without running git', async () => {
    for (const range of ['--output=/tmp/x', 'HEAD; rm -rf /', '$(id)', '']) {
      await expect(readGitLog(repository, { range })).rejects.toMatchObject({ code: 'git_log_bad_range' });
    }
  });

  it('says when the directory is not a repository', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'relnotes-not-a-repo-'));
    await expect(readGitLog(outside, { range: 'HEAD' })).rejects.toMatchObject({ code: 'git_log_not_a_repository' });
  });
});
