import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCommandFile } from './command-file.js';
import { tempTree } from './corpus.test-helper.js';
import { readSkillFile } from './skill-file.js';

let cleanup = () => {};
afterEach(() => cleanup());

function tree(files: Record<string, string>) {
  const created = tempTree(files);
  cleanup = created.cleanup;
  return created.root;
}

describe('readSkillFile', () => {
  it('takes the id from the directory and reads every documented field', () => {
    const root = tree({
      'review/SKILL.md': [
        '---',
        'name: review',
        'description: Reviews a change',
        'when_to_use: after edits',
        'argument-hint: [file]',
        'arguments: [file, mode]',
        'allowed-tools: Read Grep Bash(git diff:*)',
        'disallowed-tools: [Write]',
        'disable-model-invocation: yes',
        'user-invocable: off',
        'model: inherit',
        'effort: high',
        'context: fork',
        'agent: Explore',
        'paths: "src/**, test/**"',
        'shell: bash',
        'hooks: { Stop: [] }',
        'license: MIT',
        '---',
        'Body line',
      ].join('\n'),
    });
    const { value, diagnostics } = readSkillFile(join(root, 'review', 'SKILL.md'));
    expect(diagnostics).toEqual([]);
    expect(value).toMatchObject({
      id: 'review',
      name: 'review',
      description: 'Reviews a change',
      whenToUse: 'after edits',
      argumentHint: '[file]',
      argumentNames: ['file', 'mode'],
      allowedTools: ['Read', 'Grep', 'Bash(git diff:*)'],
      disallowedTools: ['Write'],
      disableModelInvocation: true,
      userInvocable: false,
      model: 'inherit',
      effort: 'high',
      context: 'fork',
      agent: 'Explore',
      paths: ['src/**', 'test/**'],
      shell: 'bash',
      hooks: { Stop: [] },
      extra: { license: 'MIT' },
      body: 'Body line',
      bodyLine: 20,
      dir: join(root, 'review'),
    });
  });

  it.each([
    ['a comma string', 'allowed-tools: Read, Bash(git add:*), Bash(git commit:*)', ['Read', 'Bash(git add:*)', 'Bash(git commit:*)']],
    ['a YAML flow list', 'allowed-tools: [Read, Glob]', ['Read', 'Glob']],
    ['a quoted JSON list', `allowed-tools: '["Read", "Bash(ls *)"]'`, ['Read', 'Bash(ls *)']],
    ['a block list', 'allowed-tools:\n  - Read\n  - Bash(ls *)', ['Read', 'Bash(ls *)']],
    ['a flow list with a trailing comma', 'allowed-tools: [\n  Read,\n  Write,\n]', ['Read', 'Write']],
  ])('reads allowed-tools as %s', (_label, line, expected) => {
    const root = tree({ 's/SKILL.md': `---\ndescription: d\n${line}\n---\nx` });
    const { value, diagnostics } = readSkillFile(join(root, 's', 'SKILL.md'));
    expect(diagnostics).toEqual([]);
    expect(value.allowedTools).toEqual(expected);
  });

  it('reads `argument-hint: [a] [b]` (invalid YAML) with a located warning', () => {
    const root = tree({ 's/SKILL.md': '---\ndescription: d\nargument-hint: [a] [b]\n---\nx' });
    const { value, diagnostics } = readSkillFile(join(root, 's', 'SKILL.md'));
    expect(value.argumentHint).toBe('[a] [b]');
    expect(value.description).toBe('d');
    expect(diagnostics).toMatchObject([{ severity: 'warning', line: 3 }]);
  });

  it.each([
    ['true', true], ['no', false], ['ON', true], ['0', false], ['"yes"', true],
  ])('reads the boolean %s', (word, expected) => {
    const root = tree({ 's/SKILL.md': `---\ndescription: d\ndisable-model-invocation: ${word}\n---\nx` });
    expect(readSkillFile(join(root, 's', 'SKILL.md')).value.disableModelInvocation).toBe(expected);
  });

  it('warns about wrong types with the key and its line, and keeps going', () => {
    const root = tree({ 's/SKILL.md': '---\ndescription: d\nuser-invocable: maybe\ncontext: spoon\n---\nx' });
    const { value, diagnostics } = readSkillFile(join(root, 's', 'SKILL.md'));
    expect(value.userInvocable).toBe(true);
    expect(diagnostics).toMatchObject([
      { severity: 'warning', path: 'user-invocable', line: 3 },
      { severity: 'warning', path: 'context', line: 4 },
    ]);
  });

  it('falls back to the first paragraph for the description and notes a mismatched name', () => {
    const root = tree({ 'dir-name/SKILL.md': '---\nname: other\n---\n\n# Title\nfirst para\n\nsecond' });
    const { value, diagnostics } = readSkillFile(join(root, 'dir-name', 'SKILL.md'));
    expect(value.id).toBe('dir-name');
    expect(value.name).toBe('other');
    expect(value.description).toBe('Title first para');
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([['info', 'name'], ['info', 'description']]);
  });

  it('reports `version` and other common undocumented keys as info and keeps them', () => {
    const root = tree({ 's/SKILL.md': '---\ndescription: d\nversion: 1.0.0\ntags: [a]\n---\nx' });
    const { value, diagnostics } = readSkillFile(join(root, 's', 'SKILL.md'));
    expect(value.extra).toEqual({ version: '1.0.0', tags: ['a'] });
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([['info', 'version'], ['info', 'tags']]);
  });

  it('warns (not errors) on agent without context fork and on unknown keys', () => {
    const root = tree({ 's/SKILL.md': '---\ndescription: d\nagent: Plan\ncolour: red\n---\nx' });
    expect(readSkillFile(join(root, 's', 'SKILL.md')).diagnostics.map((d) => [d.severity, d.path])).toEqual([
      ['warning', 'agent'],
      ['warning', 'colour'],
    ]);
  });
});

describe('readCommandFile', () => {
  it('accepts files without frontmatter and takes the description from the first line', () => {
    const root = tree({ 'commands/deploy.md': '\n# Deploy the app\n\nRun $ARGUMENTS' });
    const { value, diagnostics } = readCommandFile(join(root, 'commands', 'deploy.md'));
    expect(diagnostics).toEqual([]);
    expect(value).toMatchObject({ name: 'deploy', description: 'Deploy the app', body: '\n# Deploy the app\n\nRun $ARGUMENTS' });
  });

  it('turns a YAML-array argument-hint back into text and ignores name/paths', () => {
    const root = tree({ 'c.md': '---\nargument-hint: [project-name]\nname: x\npaths: a\n---\nBody' });
    const { value, diagnostics } = readCommandFile(join(root, 'c.md'));
    expect(value.argumentHint).toBe('[project-name]');
    expect(value.name).toBe('c');
    expect(value.description).toBe('Body');
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([['info', 'name'], ['info', 'paths']]);
  });

  it('reports an unreadable file', () => {
    const root = tree({});
    expect(readCommandFile(join(root, 'nope.md')).diagnostics).toMatchObject([{ severity: 'error' }]);
  });
});
