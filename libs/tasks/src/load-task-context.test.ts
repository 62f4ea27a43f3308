import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatTaskContext, loadTaskContext, normalizeTaskStatus, parseTaskFile } from './index.js';

let cwd: string;
const write = (name: string, text: string): void => {
  const path = join(cwd, '.agents/tasks', name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
};
const task = (title: string, fields: Record<string, string>, items: string[] = []): string =>
  [`# ${title}`, '', ...Object.entries(fields).map(([key, value]) => `- **${key}**: ${value}`), '', ...items.map((item) => `- [ ] ${item}`), ''].join('\n');

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'tessera-tasks-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

describe('parseTaskFile', () => {
  it('reads title, fields in several styles and unchecked items, skipping code fences', () => {
    const parsed = parseTaskFile(
      [
        '# CLI-017: Context injection',
        '',
        '* **Status:** In-Progress',
        '- Branch: `feat/context`',
        '- **Scope**: libs/tasks',
        '- **Goal**: inject tasks',
        '- **Status**: todo',
        '',
        '```md',
        '- [ ] not an item',
        '# not a title',
        '```',
        '- [ ] write tests',
        '  - [ ] nested item',
        '- [x] done item',
      ].join('\n'),
      '.agents/tasks/cli.md',
    );
    expect(parsed).toEqual({
      path: '.agents/tasks/cli.md',
      title: 'CLI-017: Context injection',
      status: 'in_progress',
      statusText: 'In-Progress',
      branch: 'feat/context',
      scope: 'libs/tasks',
      objective: 'inject tasks',
      uncheckedItems: ['write tests', 'nested item'],
    });
  });

  it('falls back to the file name and unknown status', () => {
    expect(parseTaskFile('no heading here', '.agents/tasks/plain-notes.md')).toMatchObject({ title: 'plain-notes', status: 'unknown' });
  });

  it('normalises common status words', () => {
    expect(['WIP', 'in progress', 'Active'].map(normalizeTaskStatus)).toEqual(['in_progress', 'in_progress', 'in_progress']);
    expect(['TODO', 'pending', 'Not started'].map(normalizeTaskStatus)).toEqual(['todo', 'todo', 'todo']);
    expect(['done ✅', 'Completed (2024-01-01)'].map(normalizeTaskStatus)).toEqual(['completed', 'completed']);
    expect(normalizeTaskStatus('blocked')).toBe('unknown');
  });
});

describe('loadTaskContext', () => {
  it('selects branch match, then in progress, todo, unknown; excludes completed, README and completed/', () => {
    write('a-unknown.md', task('Unknown', { Status: 'blocked' }));
    write('b-todo.md', task('Todo', { Status: 'todo' }));
    write('c-progress.md', task('Progress', { Status: 'in progress' }));
    write('d-branch.md', task('On branch', { Status: 'todo', Branch: 'feat/x' }));
    write('e-done.md', task('Done', { Status: 'completed', Branch: 'feat/x' }));
    write('README.md', task('Readme', { Status: 'in progress' }));
    write('completed/f.md', task('Archived', { Status: 'in progress' }));
    write('notes.txt', 'not markdown');

    const all = loadTaskContext(cwd, { currentBranch: 'feat/x', maxTasks: 10 });
    expect(all.tasks.map((t) => t.title)).toEqual(['On branch', 'Progress', 'Todo', 'Unknown']);
    expect(all.available).toBe(4);

    const bounded = loadTaskContext(cwd, { currentBranch: 'feat/x' });
    expect(bounded.tasks.map((t) => t.path)).toEqual(['.agents/tasks/d-branch.md', '.agents/tasks/c-progress.md', '.agents/tasks/b-todo.md']);

    expect(loadTaskContext(cwd).tasks.map((t) => t.title)).toEqual(['Progress', 'Todo', 'On branch']);
  });

  it('gives an empty context when there is no tasks folder', () => {
    expect(loadTaskContext(cwd)).toEqual({ tasks: [], formatted: '', available: 0 });
  });

  it('caps unchecked items per task and says how many were left out', () => {
    write('many.md', task('Many', { Status: 'todo' }, ['one', 'two', 'three']));
    const [only] = loadTaskContext(cwd, { maxUncheckedItems: 2 }).tasks;
    expect(only).toMatchObject({ uncheckedItems: ['one', 'two'], omittedUncheckedItems: 1 });
  });
});

describe('formatTaskContext', () => {
  it('renders neutral metadata only', () => {
    write('x.md', task('Ship tasks', { Status: 'in-progress', Branch: 'feat/tasks', Scope: 'libs/tasks', Objective: 'bounded context' }, ['docs', 'tests']));
    write('y.md', '# Bare\n');
    const { formatted } = loadTaskContext(cwd);
    expect(formatted).toBe(
      [
        '## Active Task Context',
        '',
        '### Ship tasks',
        '',
        '- Path: .agents/tasks/x.md',
        '- Status: in-progress',
        '- Branch: feat/tasks',
        '- Scope: libs/tasks',
        '- Objective: bounded context',
        '- Unchecked items:',
        '  - [ ] docs',
        '  - [ ] tests',
        '',
        '### Bare',
        '',
        '- Path: .agents/tasks/y.md',
        '- Status: unknown',
        '',
      ].join('\n'),
    );
    expect(formatTaskContext([])).toBe('');
  });
});
