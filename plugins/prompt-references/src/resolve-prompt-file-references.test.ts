import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PermissionVerdict } from '@tessera/contracts';
import { resolvePromptFileReferences } from './resolve-prompt-file-references.js';

let base: string;
let cwd: string;
let outside: string;

async function file(path: string, content: string): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, content);
}

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'tessera-refs-')));
  cwd = join(base, 'work');
  outside = join(base, 'outside');
  await mkdir(cwd);
  await mkdir(outside);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('resolvePromptFileReferences', () => {
  it('reads each referenced file into one block and records it without contents', async () => {
    await file(join(cwd, 'AGENTS.md'), 'agent rules\n');
    await file(join(cwd, 'docs/spec.md'), 'the spec');
    const result = await resolvePromptFileReferences('follow @AGENTS.md and @./docs/spec.md', { cwd });
    expect(result.failures).toEqual([]);
    expect(result.records).toEqual([
      { sourcePath: join(cwd, 'AGENTS.md'), relativePath: 'AGENTS.md', originalReference: '@AGENTS.md', reason: 'prompt', depth: 0, byteLength: 12 },
      { sourcePath: join(cwd, 'docs/spec.md'), relativePath: 'docs/spec.md', originalReference: '@./docs/spec.md', reason: 'prompt', depth: 0, byteLength: 8 },
    ]);
    expect(result.blocks).toHaveLength(2);
    expect(result.blocks[0]).toContain('<file path="AGENTS.md">\nagent rules\n</file>');
    expect(result.blocks[1]).toContain('<file path="docs/spec.md">\nthe spec\n</file>');
    expect(JSON.stringify(result.records)).not.toContain('agent rules');
  });

  it('includes a file referenced twice once', async () => {
    await file(join(cwd, 'a.md'), 'A');
    const result = await resolvePromptFileReferences('@a.md then @./a.md', { cwd });
    expect(result.records.map((record) => record.originalReference)).toEqual(['@a.md']);
  });

  it('follows nested references against the referencing file, with their depth', async () => {
    await file(join(cwd, 'a.md'), 'see @docs/b.md');
    await file(join(cwd, 'docs/b.md'), 'see @c.md');
    await file(join(cwd, 'docs/c.md'), 'leaf');
    const result = await resolvePromptFileReferences('@a.md', { cwd });
    expect(result.failures).toEqual([]);
    expect(result.records.map(({ relativePath, reason, depth }) => [relativePath, reason, depth])).toEqual([
      ['a.md', 'prompt', 0],
      ['docs/b.md', 'nested', 1],
      ['docs/c.md', 'nested', 2],
    ]);
    expect(result.blocks[2]).toMatch(/^docs\/b\.md references @c\.md\./);
  });

  it('fails a reference nested deeper than maxDepth', async () => {
    await file(join(cwd, 'a.md'), '@b.md');
    await file(join(cwd, 'b.md'), '@c.md');
    await file(join(cwd, 'c.md'), 'leaf');
    const result = await resolvePromptFileReferences('@a.md', { cwd, maxDepth: 1 });
    expect(result.failures).toMatchObject([{ reference: '@c.md', kind: 'max_depth', referencedFrom: 'b.md' }]);
    expect(result.failures[0]?.message).toContain('maxDepth');
  });

  it('fails a cycle, including a file that references itself', async () => {
    await file(join(cwd, 'a.md'), '@b.md');
    await file(join(cwd, 'b.md'), '@a.md');
    await file(join(cwd, 'self.md'), 'me: @self.md');
    const result = await resolvePromptFileReferences('@a.md @self.md', { cwd });
    expect(result.failures.map(({ reference, kind }) => [reference, kind])).toEqual([
      ['@a.md', 'circular'],
      ['@self.md', 'circular'],
    ]);
    expect(result.failures[0]?.message).toContain('a.md → b.md → a.md');
  });

  it('does not treat a file reached twice through different parents as a cycle', async () => {
    await file(join(cwd, 'a.md'), '@shared.md');
    await file(join(cwd, 'b.md'), '@shared.md');
    await file(join(cwd, 'shared.md'), 'shared');
    const result = await resolvePromptFileReferences('@a.md @b.md', { cwd });
    expect(result.failures).toEqual([]);
    expect(result.records.map((record) => record.relativePath)).toEqual(['a.md', 'shared.md', 'b.md']);
  });

  it('refuses paths outside the roots, and symbolic links that lead out', async () => {
    await file(join(outside, 'secret.txt'), 'secret');
    await symlink(join(outside, 'secret.txt'), join(cwd, 'link.txt'));
    await symlink(join(outside, 'secret.txt'), join(cwd, 'bare'));
    const result = await resolvePromptFileReferences(`@../outside/secret.txt @link.txt @bare @${join(outside, 'secret.txt')}`, { cwd });
    expect(result.failures.map(({ reference, kind }) => [reference, kind])).toEqual([
      ['@../outside/secret.txt', 'outside_root'],
      ['@link.txt', 'outside_root'],
      ['@bare', 'outside_root'],
      [`@${join(outside, 'secret.txt')}`, 'outside_root'],
    ]);
    expect(result.failures[1]?.message).toContain('symbolic link');
    expect(result.blocks).toEqual([]);
  });

  it('accepts files in extra roots and symbolic links that stay inside', async () => {
    await file(join(outside, 'shared.md'), 'shared');
    await file(join(cwd, 'real.md'), 'real');
    await symlink(join(cwd, 'real.md'), join(cwd, 'alias.md'));
    const result = await resolvePromptFileReferences('@../outside/shared.md @alias.md', { cwd, roots: ['../outside'] });
    expect(result.failures).toEqual([]);
    expect(result.records.map(({ sourcePath, relativePath }) => [sourcePath, relativePath])).toEqual([
      [join(outside, 'shared.md'), 'shared.md'],
      [join(cwd, 'real.md'), 'real.md'],
    ]);
    expect(result.blocks[0]).toContain(`root="${outside}"`);
  });

  it('fails missing files and directories', async () => {
    await mkdir(join(cwd, 'src'));
    const result = await resolvePromptFileReferences('@missing.md @src/ @"no such file.md"', { cwd });
    expect(result.failures.map(({ reference, kind }) => [reference, kind])).toEqual([
      ['@missing.md', 'missing'],
      ['@src/', 'directory'],
      ['@"no such file.md"', 'missing'],
    ]);
  });

  it('leaves package names alone (no extension, first folder absent) but still fails a missing file under a folder that exists', async () => {
    await mkdir(join(cwd, 'docs'));
    const prose = await resolvePromptFileReferences('upgrade @types/node and @tessera/kernel, then ask @babel/core', { cwd });
    expect(prose).toMatchObject({ records: [], failures: [], blocks: [] });
    const typo = await resolvePromptFileReferences('see @docs/gone and @./gone and @gone.md', { cwd });
    expect(typo.failures.map(({ reference, kind }) => [reference, kind])).toEqual([
      ['@docs/gone', 'missing'],
      ['@./gone', 'missing'],
      ['@gone.md', 'missing'],
    ]);
  });

  it('follows references inside Markdown and text files only: an @ in source code is code', async () => {
    await file(join(cwd, 'notes.md'), 'Read @details.md too.');
    await file(join(cwd, 'details.md'), 'details');
    await file(join(cwd, 'index.ts'), "import { x } from '@tessera/contracts';\n// see @details.md\n@decorator() class A {}\n");
    await file(join(cwd, 'package.json'), '{ "dependencies": { "@types/node": "1" }, "files": ["@missing.md"] }');
    const result = await resolvePromptFileReferences('@index.ts @package.json @notes.md', { cwd });
    expect(result.failures).toEqual([]);
    expect(result.records.map(({ relativePath, reason }) => [relativePath, reason])).toEqual([
      ['index.ts', 'prompt'],
      ['package.json', 'prompt'],
      ['notes.md', 'prompt'],
      ['details.md', 'nested'],
    ]);
  });

  it('leaves a bare @word alone unless a file by that name exists', async () => {
    await file(join(cwd, 'Makefile'), 'all:');
    await mkdir(join(cwd, 'docs'));
    const result = await resolvePromptFileReferences('thanks @alice, see @Makefile and @docs', { cwd });
    expect(result.failures).toEqual([]);
    expect(result.records.map((record) => record.relativePath)).toEqual(['Makefile']);
  });

  it('enforces the per-file and total byte limits', async () => {
    await file(join(cwd, 'big.txt'), 'x'.repeat(101));
    await file(join(cwd, 'a.txt'), 'a'.repeat(60));
    await file(join(cwd, 'b.txt'), 'b'.repeat(60));
    const result = await resolvePromptFileReferences('@big.txt @a.txt @b.txt', { cwd, maxFileBytes: 100, maxTotalBytes: 100 });
    expect(result.failures.map(({ reference, kind }) => [reference, kind])).toEqual([
      ['@big.txt', 'size_limit'],
      ['@b.txt', 'size_limit'],
    ]);
    expect(result.failures[0]?.message).toContain('maxFileBytes');
    expect(result.failures[1]?.message).toContain('maxTotalBytes');
    expect(result.records.map((record) => record.relativePath)).toEqual(['a.txt']);
  });

  describe('with checkRead', () => {
    /** Judges the files named in `verdicts` (by base name), recording every path asked about. */
    function judge(verdicts: Record<string, PermissionVerdict>, asked: string[] = []) {
      return (path: string): PermissionVerdict => {
        asked.push(path);
        return verdicts[path.slice(path.lastIndexOf('/') + 1)] ?? { decision: 'auto' };
      };
    }

    it('fails a denied reference, at any depth, naming the rule, and includes nothing of it', async () => {
      await file(join(cwd, '.env'), 'TOKEN=hunter2');
      await file(join(cwd, 'a.md'), 'see @.env');
      const checkRead = judge({ '.env': { decision: 'deny', rule: 'Read(./.env)' } });
      for (const prompt of ['@.env', '@a.md']) {
        const result = await resolvePromptFileReferences(prompt, { cwd, checkRead });
        expect(result.failures).toEqual([expect.objectContaining({ reference: '@.env', kind: 'denied', path: join(cwd, '.env') })]);
        expect(result.failures[0]?.message).toContain('the permission rule Read(./.env) denies it');
        expect(JSON.stringify(result)).not.toContain('hunter2');
      }
    });

    it('judges a symbolic link both as written and by its real path', async () => {
      await file(join(cwd, 'secrets/key.txt'), 'key');
      await symlink(join(cwd, 'secrets/key.txt'), join(cwd, 'alias.txt'));
      const asked: string[] = [];
      const result = await resolvePromptFileReferences('@alias.txt', { cwd, checkRead: judge({ 'key.txt': { decision: 'deny' } }, asked) });
      expect(asked).toEqual([join(cwd, 'alias.txt'), join(cwd, 'secrets/key.txt')]);
      expect(result.failures.map(({ kind }) => kind)).toEqual(['denied']);
      expect(result.failures[0]?.message).toContain('the permission policy denies it');
    });

    it('includes a file needing approval when the prompt names it, not when only a file does', async () => {
      await file(join(cwd, 'notes.txt'), 'private notes');
      await file(join(cwd, 'a.md'), 'see @notes.txt');
      const checkRead = judge({ 'notes.txt': { decision: 'approve', rule: 'Read(./notes.txt)' } });
      const named = await resolvePromptFileReferences('@notes.txt', { cwd, checkRead });
      expect(named.failures).toEqual([]);
      expect(named.records.map((record) => record.relativePath)).toEqual(['notes.txt']);
      const nested = await resolvePromptFileReferences('@a.md', { cwd, checkRead });
      expect(nested.failures).toEqual([expect.objectContaining({ reference: '@notes.txt', kind: 'denied', referencedFrom: 'a.md' })]);
      expect(nested.failures[0]?.message).toContain('needs approval');
      // Named in the prompt too: the user asked for it, even though a.md reaches it first.
      const both = await resolvePromptFileReferences('@a.md @notes.txt', { cwd, checkRead });
      expect(both.failures).toEqual([]);
    });

    it('fails the reference when the check itself fails', async () => {
      await file(join(cwd, 'a.txt'), 'A');
      const result = await resolvePromptFileReferences('@a.txt', { cwd, checkRead: () => Promise.reject(new Error('policy offline')) });
      expect(result.failures).toEqual([expect.objectContaining({ kind: 'denied', message: expect.stringContaining('policy offline') })]);
    });
  });
});
