import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A real git repository for the tests: one commit tagged v1.0, then three more (a feature, a
// fix with a breaking-change body, a docs change). Dates and names are fixed; no user or system
// git configuration is read.
export const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Ada Example',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada Example',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
};

export function makeRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'relnotes-repo-'));
  let day = 1;
  const git = (...args: string[]): void => {
    const date = `2025-03-0${day}T12:00:00Z`;
    execFileSync('git', args, { cwd: dir, env: { ...process.env, ...GIT_ENV, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }, stdio: 'ignore' });
  };
  const commit = (file: string, content: string, message: string): void => {
    writeFileSync(join(dir, file), content);
    git('add', file);
    git('commit', '--quiet', '--no-gpg-sign', '-m', message);
    day += 1;
  };
  git('init', '--quiet', '--initial-branch=main');
  commit('README.md', '# Demo\n', 'Initial import');
  git('tag', 'v1.0');
  commit('cli.js', 'export const json = true;\n', 'feat: add --json output');
  commit('range.js', 'export const empty = [];\n', 'fix!: reject empty ranges\n\nBREAKING CHANGE: an empty range is now an error instead of an empty list.');
  commit('README.md', '# Demo\n\nUsage.\n', 'docs: explain usage');
  return dir;
}
