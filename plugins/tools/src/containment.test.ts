import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editTool } from './edit-tool.js';
import { globTool } from './glob-tool.js';
import { grepTool } from './grep-tool.js';
import { readTool } from './read-tool.js';
import { ToolSessionState } from './session-state.js';
import { tempDir, text, toolContext } from './test-support.js';
import { WorkspaceRoots } from './workspace.js';
import { writeTool } from './write-tool.js';

let base: string;
let cleanup: () => Promise<void>;
let workspace: string;
let extra: string;
let outside: string;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir());
  workspace = join(base, 'ws');
  extra = join(base, 'extra');
  outside = join(base, 'outside');
  for (const folder of [workspace, extra, outside]) await mkdir(folder);
  await writeFile(join(outside, 'secret.txt'), 'top secret');
  await writeFile(join(extra, 'shared.txt'), 'shared');
  await writeFile(join(workspace, 'inside.txt'), 'fine');
  await mkdir(join(workspace, 'sub', 'deeper'), { recursive: true });
  await writeFile(join(workspace, 'sub', 'deeper', 'kept.txt'), 'kept');
  await symlink(join(workspace, 'sub'), join(workspace, 'linked-in'));
  await symlink(extra, join(workspace, 'linked-extra'));
  await mkdir(join(outside, 'nested'));
  await writeFile(join(outside, 'nested', 'deep-secret.txt'), 'deep');
  await symlink(outside, join(workspace, 'escape-dir'));
  await symlink(join(outside, 'secret.txt'), join(workspace, 'escape-file'));
  await symlink(join(outside, 'created-by-attack.txt'), join(workspace, 'dangling'));
  await symlink(join(workspace, 'loop-b'), join(workspace, 'loop-a'));
  await symlink(join(workspace, 'loop-a'), join(workspace, 'loop-b'));
});
afterAll(async () => cleanup());

/** Every one of these must be refused by every file tool. */
const attacks: Array<[string, () => string, 'outside_workspace' | 'invalid_path']> = [
  ['parent traversal', () => join(workspace, '..', 'outside', 'secret.txt'), 'outside_workspace'],
  ['deep traversal', () => `${workspace}/a/b/../../../outside/secret.txt`, 'outside_workspace'],
  ['absolute path elsewhere', () => join(outside, 'secret.txt'), 'outside_workspace'],
  ['system file', () => '/etc/passwd', 'outside_workspace'],
  ['symlinked directory pointing out', () => join(workspace, 'escape-dir', 'secret.txt'), 'outside_workspace'],
  ['symlinked file pointing out', () => join(workspace, 'escape-file'), 'outside_workspace'],
  ['new file under a symlinked directory', () => join(workspace, 'escape-dir', 'planted.txt'), 'outside_workspace'],
  ['dangling symlink to the outside', () => join(workspace, 'dangling'), 'invalid_path'],
  ['symlink loop', () => join(workspace, 'loop-a'), 'invalid_path'],
  ['case-changed root', () => join(base, 'WS', 'inside.txt'), 'outside_workspace'],
  ['case-changed sibling', () => join(base, 'Outside', 'secret.txt'), 'outside_workspace'],
  ['relative path', () => '../outside/secret.txt', 'invalid_path'],
  ['NUL byte', () => `${workspace}/inside.txt\0/etc/passwd`, 'invalid_path'],
];

describe('workspace containment', () => {
  const state = new ToolSessionState();
  const options = { state, additionalDirectories: [] as string[] };

  describe.each(attacks)('%s', (_name, path, code) => {
    it('is refused by Read, Write and Edit', async () => {
      const context = toolContext(workspace);
      for (const result of [
        await readTool(options).execute({ file_path: path() }, context),
        await writeTool(options).execute({ file_path: path(), content: 'pwned' }, context),
        await editTool(options).execute({ file_path: path(), old_string: '', new_string: 'pwned' }, context),
        await editTool(options).execute({ file_path: path(), old_string: 'top', new_string: 'pwned' }, context),
      ]) {
        expect(result.success).toBe(false);
        expect(result.errorCode).toBe(code);
        if (code === 'outside_workspace') expect(text(result)).toContain(`Allowed roots: ${workspace}`);
      }
      expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
      await expect(stat(join(outside, 'planted.txt'))).rejects.toThrow();
      await expect(stat(join(outside, 'created-by-attack.txt'))).rejects.toThrow();
    });
  });

  it('refuses Glob and Grep search paths outside the workspace', async () => {
    const context = toolContext(workspace);
    for (const path of ['..', outside, join(workspace, 'escape-dir'), '/']) {
      const glob = await globTool(options).execute({ pattern: '**/*', path }, context);
      const grep = await grepTool(options).execute({ pattern: 'secret', path }, context);
      expect(glob.errorCode).toBe('outside_workspace');
      expect(grep.errorCode).toBe('outside_workspace');
    }
  });

  it('does not follow symlinks out of the workspace while searching', async () => {
    const grep = await grepTool(options).execute({ pattern: 'top secret', output_mode: 'content' }, toolContext(workspace));
    expect(text(grep)).not.toContain('top secret');
  });

  // fast-glob opens each base a brace group expands to (`escape-dir` here) through links.
  it.each([
    '{escape-dir,x}/*',
    '{escape-dir,x}/**',
    '{escape-dir,x}/secret.txt',
    '{escape-dir,sub}/**/*.txt',
    '{sub/..,x}/escape-dir/*',
    './escape-dir/*',
    'sub/{../escape-dir,x}/**',
  ])('Glob does not list the outside through a linked directory the pattern %s expands to', async (pattern) => {
    const result = await globTool(options).execute({ pattern }, toolContext(workspace));
    expect(result.success).toBe(true);
    expect(text(result)).not.toMatch(/secret/);
  });

  it('Glob names the directories it did not search and still lists the rest of a brace group', async () => {
    const result = await globTool(options).execute({ pattern: '{escape-dir,sub}/**' }, toolContext(workspace));
    expect(result.data?.filenames).toEqual([join(workspace, 'sub', 'deeper', 'kept.txt')]);
    expect(text(result)).toContain(`(Not searched: escape-dir — outside the workspace (${workspace})`);
  });

  it('Glob lists through links that stay inside the workspace roots', async () => {
    const result = await globTool(options).execute({ pattern: '{linked-in,x}/**/*.txt' }, toolContext(workspace));
    expect(result.data?.filenames).toEqual([join(workspace, 'linked-in', 'deeper', 'kept.txt')]);
    const withExtra = { state, additionalDirectories: [extra] };
    const extraResult = await globTool(withExtra).execute({ pattern: '{linked-extra,x}/*' }, toolContext(workspace));
    expect(extraResult.data?.filenames).toEqual([join(workspace, 'linked-extra', 'shared.txt')]);
  });

  it('allows configured additional directories and names them in refusals', async () => {
    const withExtra = { state, additionalDirectories: [extra] };
    const read = await readTool(withExtra).execute({ file_path: join(extra, 'shared.txt') }, toolContext(workspace));
    expect(text(read)).toContain('shared');
    const refused = await readTool(withExtra).execute({ file_path: join(outside, 'secret.txt') }, toolContext(workspace));
    expect(text(refused)).toContain(`Allowed roots: ${workspace}, ${extra}`);
  });

  it('resolves relative additional directories against the session cwd', async () => {
    const roots = new WorkspaceRoots({ additionalDirectories: ['../extra'] });
    expect(await roots.resolve(join(extra, 'shared.txt'), workspace)).toEqual({ ok: true, path: join(extra, 'shared.txt') });
  });
});
