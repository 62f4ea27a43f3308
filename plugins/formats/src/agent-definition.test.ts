import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAgentDefinition } from './agent-definition.js';
import { compatRoot, tempTree } from './corpus.test-helper.js';

const agentsDir = join(compatRoot, 'claude', 'agents');
const agentFiles = readdirSync(agentsDir).filter((name) => name.endsWith('.md'));

describe('readAgentDefinition over the corpus', () => {
  it('finds the corpus', () => {
    expect(agentFiles.length).toBeGreaterThanOrEqual(40);
  });

  it.each(agentFiles)('%s reads with no error diagnostics', (name) => {
    const file = join(agentsDir, name);
    const { value, diagnostics } = readAgentDefinition(file);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(value.name).toMatch(/^[a-z0-9][a-z0-9-]*$/);
    expect(value.description.length).toBeGreaterThan(0);
    expect(value.systemPrompt.length).toBeGreaterThan(0);
    expect(value.systemPrompt.startsWith('---')).toBe(false);
    expect(value.file).toBe(file);
    expect(value.source).toBe('file');
    if (value.tools !== undefined) {
      expect(value.tools.length).toBeGreaterThan(0);
      for (const tool of value.tools) expect(tool).toBe(tool.trim());
    }
  });

  it('splits comma tool strings and keeps model shortcuts', () => {
    const file = join(agentsDir, agentFiles.find((name) => name.includes('kubernetes-architect'))!);
    const { value } = readAgentDefinition(file, { source: 'plugin:cicd' });
    expect(value.source).toBe('plugin:cicd');
    expect(value.name).toMatch(/kubernetes-architect$/);
    expect(value.model).toBeDefined();
  });

  it('reads a file whose frontmatter is not valid YAML with a warning, not an error', () => {
    const file = join(agentsDir, agentFiles.find((name) => name.includes('silent-failure-hunter'))!);
    const { value, diagnostics } = readAgentDefinition(file);
    expect(value.name).toBe('silent-failure-hunter');
    expect(value.model).toBe('inherit');
    expect(value.color).toBe('yellow');
    expect(diagnostics.map((d) => d.severity)).toEqual(['warning']);
  });
});

describe('readAgentDefinition fields', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  function read(content: string, fileName = 'agent.md') {
    const tree = tempTree({ [fileName]: content });
    cleanup = tree.cleanup;
    return readAgentDefinition(join(tree.root, fileName), 'project');
  }

  it('reads every documented field', () => {
    const { value, diagnostics } = read(
      [
        '---',
        'name: reviewer',
        'description: Reviews code',
        'tools: Read, Grep, Agent(explore, plan), Bash(git diff:*)',
        'disallowedTools: [Write, Edit]',
        'model: opus',
        'maxTurns: 12',
        'permissionMode: acceptEdits',
        'skills: tdd, debugging',
        'isolation: worktree',
        'color: cyan',
        '---',
        '',
        'You review code.',
        '',
      ].join('\n'),
    );
    expect(diagnostics).toEqual([]);
    expect(value).toMatchObject({
      name: 'reviewer',
      description: 'Reviews code',
      systemPrompt: 'You review code.',
      tools: ['Read', 'Grep', 'Agent(explore, plan)', 'Bash(git diff:*)'],
      disallowedTools: ['Write', 'Edit'],
      model: 'opus',
      maxTurns: 12,
      permissionMode: 'acceptEdits',
      skills: ['tdd', 'debugging'],
      isolation: 'worktree',
      color: 'cyan',
      source: 'project',
    });
  });

  it('maps the `manual` alias to default and reports unsupported modes', () => {
    expect(read('---\nname: a\ndescription: d\npermissionMode: manual\n---\nx').value.permissionMode).toBe('default');
    const bad = read('---\nname: a\ndescription: d\npermissionMode: ignore\n---\nx');
    expect(bad.value.permissionMode).toBeUndefined();
    expect(bad.diagnostics).toMatchObject([{ severity: 'error', path: 'permissionMode', line: 4 }]);
  });

  it('reports a missing name without throwing and names the value after the file', () => {
    const { value, diagnostics } = read('---\ndescription: d\n---\nbody', 'helper.md');
    expect(value.name).toBe('helper');
    expect(diagnostics).toMatchObject([{ severity: 'error', path: 'name' }]);
    expect(diagnostics[0]!.message).toContain('name: helper');
  });

  it.each(['Bad_Name', '-lead', 'plugin:agent', 'UPPER'])('reports the invalid name %s', (name) => {
    const { diagnostics } = read(`---\nname: "${name}"\ndescription: d\n---\nbody`);
    expect(diagnostics).toMatchObject([{ severity: 'error', path: 'name', line: 2 }]);
  });

  it('reports a missing description and missing frontmatter', () => {
    expect(read('---\nname: a\n---\nbody').diagnostics).toMatchObject([{ severity: 'error', path: 'description' }]);
    expect(read('just a prompt').diagnostics).toMatchObject([{ severity: 'error', line: 1 }]);
  });

  it('validates maxTurns and isolation', () => {
    const { value, diagnostics } = read('---\nname: a\ndescription: d\nmaxTurns: -1\nisolation: docker\n---\nx');
    expect(value.maxTurns).toBeUndefined();
    expect(value.isolation).toBeUndefined();
    expect(diagnostics.map((d) => d.path)).toEqual(['maxTurns', 'isolation']);
    expect(read('---\nname: a\ndescription: d\nmaxTurns: "5"\n---\nx').value.maxTurns).toBe(5);
  });

  it('reports unknown keys as warnings and documented-but-unapplied keys as info', () => {
    const { diagnostics } = read('---\nname: a\ndescription: d\nmemory: user\nflavour: spicy\n---\nx');
    expect(diagnostics).toMatchObject([
      { severity: 'info', path: 'memory', line: 4 },
      { severity: 'warning', path: 'flavour', line: 5 },
    ]);
  });

  it('reports an unreadable file as an error diagnostic', () => {
    const tree = tempTree({});
    cleanup = tree.cleanup;
    const { value, diagnostics } = readAgentDefinition(join(tree.root, 'missing.md'));
    expect(value.name).toBe('missing');
    expect(diagnostics).toMatchObject([{ severity: 'error' }]);
    expect(diagnostics[0]!.message).toContain('file not found');
  });

  it('reports unclosed frontmatter', () => {
    expect(read('---\nname: a\n').diagnostics[0]).toMatchObject({ severity: 'error', line: 1 });
  });
});
