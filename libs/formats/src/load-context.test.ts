import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { extractCompactInstructions } from './compact-instructions.js';
import { tempTree } from './corpus.test-helper.js';
import { loadContext } from './load-context.js';

let cleanup = () => {};
afterEach(() => cleanup());
function tree(files: Record<string, string>) {
  const created = tempTree(files);
  cleanup = created.cleanup;
  return created.root;
}

describe('loadContext', () => {
  it('reads only the scopes given (setting sources): imports come with their file, a left-out file costs no budget', () => {
    const root = tree({
      'home/.claude/CLAUDE.md': 'user @shared.md',
      'home/.claude/shared.md': 'shared by user',
      'repo/CLAUDE.md': 'project '.repeat(20),
      'repo/CLAUDE.local.md': 'local',
    });
    const load = (scopes?: Array<'user' | 'project' | 'local'>, maxTotalChars?: number) =>
      loadContext({ cwd: join(root, 'repo'), home: join(root, 'home'), ...(scopes ? { scopes } : {}), ...(maxTotalChars ? { maxTotalChars } : {}) }).files.map((f) => [f.scope, f.content.slice(0, 14)]);
    expect(load()).toHaveLength(4);
    expect(load(['user'])).toEqual([['user', 'user @shared.m'], ['import', 'shared by user']]);
    expect(load(['project'])).toEqual([['project', 'project projec']]);
    expect(load(['local', 'user'])).toEqual([['user', 'user @shared.m'], ['import', 'shared by user'], ['local', 'local']]);
    expect(load([])).toEqual([]);
    // 160 characters of project text would leave nothing of the budget for the local file.
    expect(load(['local'], 10)).toEqual([['local', 'local']]);
  });

  it('walks from the top (below the filesystem root) down to cwd after the user-level files, through the repository root', () => {
    const root = tree({
      'home/.claude/CLAUDE.md': 'user',
      'home/.tessera/AGENTS.md': 'user agents',
      'outside/CLAUDE.md': 'above the repo: loaded too, as Claude Code does',
      'outside/repo/.git/HEAD': 'ref',
      'outside/repo/AGENTS.md': 'root agents',
      'outside/repo/CLAUDE.md': 'root claude',
      'outside/repo/pkg/CLAUDE.local.md': 'local',
      'outside/repo/pkg/.claude/CLAUDE.md': 'dot claude',
      'outside/repo/pkg/src/x.ts': '',
    });
    const { files, diagnostics } = loadContext({ cwd: join(root, 'outside/repo/pkg/src'), home: join(root, 'home') });
    expect(diagnostics).toEqual([]);
    expect(files.map((f) => [f.path.slice(root.length + 1), f.scope, f.content])).toEqual([
      ['home/.tessera/AGENTS.md', 'user', 'user agents'],
      ['home/.claude/CLAUDE.md', 'user', 'user'],
      ['outside/CLAUDE.md', 'project', 'above the repo: loaded too, as Claude Code does'],
      ['outside/repo/AGENTS.md', 'project', 'root agents'],
      ['outside/repo/CLAUDE.md', 'project', 'root claude'],
      ['outside/repo/pkg/.claude/CLAUDE.md', 'project', 'dot claude'],
      ['outside/repo/pkg/CLAUDE.local.md', 'local', 'local'],
    ]);
  });

  it('reads the parent directories outside a repository too, nearest last', () => {
    const root = tree({ 'a/CLAUDE.md': 'parent', 'a/b/CLAUDE.md': 'here' });
    const { files } = loadContext({ cwd: join(root, 'a/b'), home: join(root, 'nohome') });
    expect(files.map((f) => f.content)).toEqual(['parent', 'here']);
  });

  it('follows @imports relative to the importer and from ~, skipping code and mentions', () => {
    const root = tree({
      'home/prefs.md': 'prefs',
      'r/.git/HEAD': '',
      'r/CLAUDE.md': 'See @docs/rules.md and @~/prefs.md.\nAsk @alice. `@not/this.md`\n```\n@nor/this.md\n```\nMissing @docs/none.md',
      'r/docs/rules.md': 'rules',
    });
    const { files, diagnostics } = loadContext({ cwd: join(root, 'r'), home: join(root, 'home') });
    expect(files.map((f) => [f.path.slice(root.length + 1), f.scope, f.importedFrom?.slice(root.length + 1)])).toEqual([
      ['r/CLAUDE.md', 'project', undefined],
      ['r/docs/rules.md', 'import', 'r/CLAUDE.md'],
      ['home/prefs.md', 'import', 'r/CLAUDE.md'],
    ]);
    expect(diagnostics).toMatchObject([{ severity: 'info', line: 6, column: 9 }]);
  });

  it('detects import cycles and enforces the depth limit', () => {
    const root = tree({
      'r/.git/HEAD': '',
      'r/CLAUDE.md': '@a.md',
      'r/a.md': '@b.md',
      'r/b.md': '@CLAUDE.md @c.md',
      'r/c.md': 'deep',
    });
    const cycle = loadContext({ cwd: join(root, 'r'), home: join(root, 'h') });
    expect(cycle.files.map((f) => f.path.slice(root.length + 3))).toEqual(['CLAUDE.md', 'a.md', 'b.md', 'c.md']);
    expect(cycle.diagnostics).toMatchObject([{ severity: 'warning', file: join(root, 'r/b.md'), line: 1, column: 1 }]);
    expect(cycle.diagnostics[0]!.message).toContain('cycle');
    const shallow = loadContext({ cwd: join(root, 'r'), home: join(root, 'h'), maxImportDepth: 1 });
    expect(shallow.files.map((f) => f.path.slice(root.length + 3))).toEqual(['CLAUDE.md', 'a.md']);
    expect(shallow.diagnostics[0]!.message).toContain('depth limit');
  });

  it('truncates past the caps with a visible notice and a warning', () => {
    const root = tree({ 'r/.git/HEAD': '', 'r/AGENTS.md': 'x'.repeat(50), 'r/CLAUDE.md': 'y'.repeat(50) });
    const { files, diagnostics } = loadContext({ cwd: join(root, 'r'), home: join(root, 'h'), maxFileChars: 30, maxTotalChars: 40 });
    expect(files.map((f) => f.truncated)).toEqual([true, true]);
    expect(files[0]!.content.startsWith('x'.repeat(30) + '\n\n[Truncated:')).toBe(true);
    expect(files[1]!.content.startsWith('y'.repeat(10) + '\n\n[Truncated:')).toBe(true);
    expect(diagnostics.map((d) => d.severity)).toEqual(['warning', 'warning']);
  });

  it('collects Compact Instructions sections across files', () => {
    const root = tree({
      'r/.git/HEAD': '',
      'r/AGENTS.md': '# Project\n## Compact Instructions\nKeep test names.\n### Detail\nand ids\n## Other\nno',
      'r/CLAUDE.md': '# compact instructions\nFocus on diffs.',
    });
    expect(loadContext({ cwd: join(root, 'r'), home: join(root, 'h') }).compactInstructions).toBe(
      'Keep test names.\n### Detail\nand ids\n\nFocus on diffs.',
    );
  });
});

describe('extractCompactInstructions', () => {
  it('returns undefined when absent or empty, and ignores headings in code', () => {
    expect(extractCompactInstructions('# Title\ntext')).toBeUndefined();
    expect(extractCompactInstructions('## Compact Instructions\n\n## Next')).toBeUndefined();
    expect(extractCompactInstructions('## Compact Instructions\n```\n# not a heading\n```\nkeep')).toBe('```\n# not a heading\n```\nkeep');
  });
});
