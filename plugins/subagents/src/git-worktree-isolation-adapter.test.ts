import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHooks } from '@tessera/kernel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitWorktreeIsolationAdapter } from './git-worktree-isolation-adapter.js';
import { ManualSubagentRunner } from './manual-subagent-runner.js';
import { createWorktreeSubagentRunner } from './worktree-subagent-runner.js';

let dir: string;
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' }).trim();

async function makeRepo(): Promise<string> {
  const repo = join(dir, 'repo');
  execFileSync('git', ['init', '-q', repo]);
  git(repo, 'config', 'user.name', 'Tessera Test');
  git(repo, 'config', 'user.email', 'test@example.com');
  git(repo, 'config', 'commit.gpgsign', 'false');
  await writeFile(join(repo, 'README.md'), 'hello\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  return repo;
}

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-git-')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('GitWorktreeIsolationAdapter (real git)', () => {
  it('prepares a worktree on a new branch at HEAD and removes it cleanly', async () => {
    const repo = await makeRepo();
    const adapter = new GitWorktreeIsolationAdapter();
    const worktree = adapter.prepare({ jobId: 'agent_1', cwd: repo });
    expect(worktree).toMatchObject({
      worktreePath: join(repo, '.git', 'tessera-worktrees', 'agent_1'),
      branchName: 'tessera/agent-agent_1',
      baseRevision: git(repo, 'rev-parse', 'HEAD'),
      parentStatus: 'clean',
    });
    expect(existsSync(join(worktree.worktreePath, 'README.md'))).toBe(true);
    expect(git(repo, 'status', '--porcelain')).toBe(''); // the worktree does not dirty the parent
    expect(adapter.isClean(worktree)).toBe(true);
    adapter.remove(worktree);
    expect(existsSync(worktree.worktreePath)).toBe(false);
    expect(git(repo, 'branch', '--list', worktree.branchName)).toBe('');
  });

  it('sees uncommitted changes and new commits as dirty, and reports a dirty parent', async () => {
    const repo = await makeRepo();
    await writeFile(join(repo, 'parent.txt'), 'x');
    const adapter = new GitWorktreeIsolationAdapter({ baseDir: join(dir, 'wts') });
    const worktree = adapter.prepare({ jobId: 'agent_2', cwd: repo });
    expect(worktree.parentStatus).toBe('dirty: 1 changed path(s) not in the worktree');
    await writeFile(join(worktree.worktreePath, 'new.txt'), 'y');
    expect(adapter.isClean(worktree)).toBe(false);
    git(worktree.worktreePath, 'add', '.');
    git(worktree.worktreePath, 'commit', '-q', '-m', 'work');
    expect(adapter.isClean(worktree)).toBe(false);
    expect(adapter.getStatus(worktree)).toBe('dirty: 0 uncommitted change(s), 1 new commit(s) on tessera/agent-agent_2');
  });

  it('gives a clear, actionable error outside a git repository and in an empty one', async () => {
    const adapter = new GitWorktreeIsolationAdapter();
    const plain = join(dir, 'plain');
    await rm(plain, { recursive: true, force: true });
    execFileSync('mkdir', ['-p', plain]);
    expect(() => adapter.prepare({ jobId: 'agent_1', cwd: plain })).toThrow(
      expect.objectContaining({ code: 'worktree_not_a_git_repository', message: expect.stringContaining("without isolation: 'worktree'") }),
    );
    const empty = join(dir, 'empty');
    execFileSync('git', ['init', '-q', empty]);
    expect(() => adapter.prepare({ jobId: 'agent_1', cwd: empty })).toThrow(expect.objectContaining({ code: 'worktree_no_commits' }));
    expect(() => new GitWorktreeIsolationAdapter({ git: 'no-such-git-binary' }).prepare({ jobId: 'a', cwd: dir })).toThrow(
      expect.objectContaining({ code: 'worktree_git_missing' }),
    );
  });

  it('rejects unsafe job ids before they reach a path', async () => {
    const repo = await makeRepo();
    expect(() => new GitWorktreeIsolationAdapter().prepare({ jobId: '../../escape', cwd: repo })).toThrow(/Invalid subagent job id/);
  });

  it('drives the worktree runner end to end: clean job removed, dirty job preserved', async () => {
    const repo = await makeRepo();
    const inner = new ManualSubagentRunner();
    const hooks = createHooks();
    const fired: string[] = [];
    hooks.worktreeCreate.tap('t', ({ path }) => void fired.push(`create ${path}`));
    hooks.worktreeRemove.tap('t', ({ path }) => void fired.push(`remove ${path}`));
    const runner = createWorktreeSubagentRunner({ runner: inner, worktreeAdapter: new GitWorktreeIsolationAdapter(), hooks });
    const request = { type: 'general-purpose', prompt: 'p', cwd: repo, parentSessionId: 's', isolation: 'worktree' as const };

    const clean = runner.start({ jobId: 'agent_clean', request });
    const cleanPath = inner.jobs[0]!.start.request.cwd;
    inner.jobs[0]!.resolve({ output: 'nothing changed' });
    expect((await clean.result).metadata).toEqual({ worktreeRemoved: true });
    expect(existsSync(cleanPath)).toBe(false);

    const dirty = runner.start({ jobId: 'agent_dirty', request });
    const dirtyPath = inner.jobs[1]!.start.request.cwd;
    await writeFile(join(dirtyPath, 'change.txt'), 'z');
    inner.jobs[1]!.resolve({ output: 'changed' });
    const { metadata } = await dirty.result;
    expect(metadata).toMatchObject({ worktreeRemoved: false, worktreePath: dirtyPath, branchName: 'tessera/agent-agent_dirty', parentWorktreeStatus: 'clean' });
    expect(existsSync(join(dirtyPath, 'change.txt'))).toBe(true);
    expect(fired).toEqual([`create ${cleanPath}`, `remove ${cleanPath}`, `create ${dirtyPath}`]);
  });

  it('fails a worktree job in a non-git directory with the actionable error', async () => {
    const runner = createWorktreeSubagentRunner({ runner: new ManualSubagentRunner(), worktreeAdapter: new GitWorktreeIsolationAdapter() });
    const handle = runner.start({ jobId: 'agent_1', request: { type: 'Explore', prompt: 'p', cwd: dir, parentSessionId: 's', isolation: 'worktree' } });
    await expect(handle.result).rejects.toMatchObject({ code: 'worktree_not_a_git_repository' });
  });
});
