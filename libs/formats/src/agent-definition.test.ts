import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { corpora, describeRealCorpus, fixtureCorpus } from '../../../test/support/compat-corpus.js';
import { readAgentDefinition } from './agent-definition.js';
import { tempTree } from './corpus.test-helper.js';

const agentFilesIn = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.md'));

describe.each(corpora)('readAgentDefinition over the $label', (corpus) => {
  const agentsDir = join(corpus.root, 'claude', 'agents');
  const agentFiles = agentFilesIn(agentsDir);

  it('finds the agents', () => {
    expect(agentFiles.length).toBeGreaterThanOrEqual(10);
  });

  it.each(agentFiles)('%s reads with no error diagnostics', (name) => {
    const file = join(agentsDir, name);
    const { value, diagnostics } = readAgentDefinition(file);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(value.name).toMatch(/^[a-z0-9][a-z0-9._-]*$/);
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
});

describeRealCorpus('readAgentDefinition on known files', (corpus) => {
  const agentsDir = join(corpus.root, 'claude', 'agents');
  const agentFiles = agentFilesIn(agentsDir);

  it('holds at least the 42 agents the corpus README counts', () => {
    expect(agentFiles.length).toBeGreaterThanOrEqual(40);
  });

  it('keeps the source it is given', () => {
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

describe('readAgentDefinition on the fixture files', () => {
  const agentsDir = join(fixtureCorpus.root, 'claude', 'agents');
  const read = (name: string) => readAgentDefinition(join(agentsDir, name));

  it('reads a description that breaks YAML (colons inside a plain scalar) with one warning', () => {
    const { value, diagnostics } = read('invalid-yaml-description.md');
    expect(value.name).toBe('invalid-yaml-description');
    expect(value.description).toContain('<example>');
    expect(value.model).toBe('inherit');
    expect(value.color).toBe('yellow');
    expect(diagnostics.map((d) => d.severity)).toEqual(['warning']);
  });

  it('reads names with dots and underscores as Claude Code does', () => {
    expect(read('powershell-5.1-expert.md').value.name).toBe('powershell-5.1-expert');
    expect(read('dotnet-framework-4.8-expert.md').value.name).toBe('dotnet-framework-4.8-expert');
    expect(read('data_pipeline_helper.md').value.name).toBe('data_pipeline_helper');
  });

  it('reads tools as a comma string, a YAML list and a JSON list alike', () => {
    expect(read('code-reviewer.md').value.tools).toEqual(['Read', 'Grep', 'Glob']);
    expect(read('yaml-list-tools.md').value.tools).toEqual(['Read', 'Grep']);
    expect(read('json-list-tools.md').value.tools).toEqual(['Read', 'Bash(git status:*)']);
  });

  it('reads CRLF and BOM files like LF files', () => {
    const crlf = read('crlf-agent.md');
    expect(crlf.value).toMatchObject({ name: 'crlf-agent', tools: ['Read'] });
    expect(crlf.value.systemPrompt.split(/\r?\n/)).toEqual(['Saved with CRLF line endings.', 'Still one system prompt.']);
    const bom = read('bom-agent.md');
    expect(bom.value).toMatchObject({ name: 'bom-agent', model: 'opus' });
    expect(bom.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
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

  it('maps the `manual` alias to default and warns about unsupported modes (the agent still loads)', () => {
    expect(read('---\nname: a\ndescription: d\npermissionMode: manual\n---\nx').value.permissionMode).toBe('default');
    const bad = read('---\nname: a\ndescription: d\npermissionMode: ignore\n---\nx');
    expect(bad.value.permissionMode).toBeUndefined();
    expect(bad.diagnostics).toMatchObject([{ severity: 'warning', path: 'permissionMode', line: 4 }]);
  });

  it('reports a missing name without throwing and names the value after the file', () => {
    const { value, diagnostics } = read('---\ndescription: d\n---\nbody', 'helper.md');
    expect(value.name).toBe('helper');
    expect(diagnostics).toMatchObject([{ severity: 'error', path: 'name' }]);
    expect(diagnostics[0]!.message).toContain('name: helper');
  });

  it.each(['-lead', 'plugin:agent', '  '])('refuses the name %j, as Claude Code does', (name) => {
    const { diagnostics } = read(`---\nname: "${name}"\ndescription: d\n---\nbody`);
    expect(diagnostics).toMatchObject([{ severity: 'error', path: 'name', line: 2 }]);
  });

  it.each(['powershell-5.1-expert', 'dotnet-framework-4.8-expert', 'my_agent', 'v2.0'])('loads the name %s without comment', (name) => {
    const { value, diagnostics } = read(`---\nname: "${name}"\ndescription: d\n---\nbody`);
    expect(value.name).toBe(name);
    expect(diagnostics).toEqual([]);
  });

  it.each(['Bad_Name', 'UPPER', 'with space'])('loads the undocumented name %s with a warning', (name) => {
    const { value, diagnostics } = read(`---\nname: "${name}"\ndescription: d\n---\nbody`);
    expect(value.name).toBe(name);
    expect(diagnostics).toMatchObject([{ severity: 'warning', path: 'name', line: 2 }]);
  });

  it('warns about fields with bad values and keeps the agent', () => {
    const { value, diagnostics } = read('---\nname: a\ndescription: d\nmaxTurns: lots\nisolation: container\ntools: {Read: true}\ncolor: [1, {x: 2}]\n---\nbody');
    expect(value).toMatchObject({ name: 'a', description: 'd', systemPrompt: 'body' });
    expect(value.maxTurns).toBeUndefined();
    expect(value.tools).toBeUndefined();
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([
      ['warning', 'tools'],
      ['warning', 'maxTurns'],
      ['warning', 'isolation'],
      ['warning', 'color'],
    ]);
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
