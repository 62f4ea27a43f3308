import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readAgentDefinition } from '@tessera/formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { corpora, describeRealCorpus } from '../../../test/support/compat-corpus.js';
import { agentDefinitionDirectories, discoverAgentDefinitions } from './agent-definition-discovery.js';
import { filterSubagentTools } from './agent-definitions.js';

let dir: string;
let cwd: string;
let home: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-agents-'));
  cwd = join(dir, 'project');
  home = join(dir, 'home');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const agent = (name: string, extra = '') => `---\nname: ${name}\ndescription: ${name} agent\n${extra}---\nYou are ${name}.\n`;
async function put(path: string, text: string) {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

describe('discoverAgentDefinitions', () => {
  it('returns the built-ins when nothing is on disk', () => {
    const found = discoverAgentDefinitions({ cwd, home });
    expect(found.definitions.map((d) => d.name)).toEqual(['general-purpose', 'Explore', 'Plan']);
    expect(found.searched).toEqual(agentDefinitionDirectories(cwd, home).map((d) => d.dir));
  });

  it('searches every directory recursively, in priority order, and lets custom agents replace built-ins', async () => {
    await put(join(cwd, '.claude', 'agents', 'nested', 'deep', 'reviewer.md'), agent('reviewer', 'tools: Read, Grep\nmodel: haiku\n'));
    await put(join(cwd, '.tessera', 'agents', 'reviewer.md'), agent('reviewer', 'model: opus\n'));
    await put(join(home, '.claude', 'agents', 'Explore.md'), `---\nname: explore-custom\ndescription: d\n---\nbody\n`);
    await put(join(home, '.tessera', 'agents', 'writer.md'), agent('writer'));
    await put(join(cwd, '.agents', 'agents', 'notes.txt'), 'ignored');
    const found = discoverAgentDefinitions({ cwd, home });
    const byName = new Map(found.definitions.map((d) => [d.name, d]));
    expect(byName.get('reviewer')).toMatchObject({ model: 'opus', source: 'project', file: join(cwd, '.tessera', 'agents', 'reviewer.md') });
    expect(byName.get('writer')).toMatchObject({ source: 'user', systemPrompt: 'You are writer.' });
    expect(byName.has('explore-custom')).toBe(true);
    expect(found.diagnostics).toEqual([expect.objectContaining({ severity: 'info', file: join(cwd, '.claude', 'agents', 'nested', 'deep', 'reviewer.md') })]);
  });

  it('a custom definition with a built-in name replaces the built-in', async () => {
    const reader = () => ({ value: { name: 'Explore', description: 'mine', systemPrompt: 'custom', source: 'project' }, diagnostics: [] });
    await put(join(cwd, '.claude', 'agents', 'x.md'), 'whatever');
    const found = discoverAgentDefinitions({ cwd, home, readDefinition: reader });
    expect(found.definitions.find((d) => d.name === 'Explore')?.systemPrompt).toBe('custom');
  });

  it('skips files with errors and returns their diagnostics', async () => {
    await put(join(cwd, '.claude', 'agents', 'broken.md'), '---\ndescription: no name\n---\nbody');
    await put(join(cwd, '.claude', 'agents', 'ok.md'), agent('ok'));
    const found = discoverAgentDefinitions({ cwd, home });
    expect(found.definitions.map((d) => d.name)).toContain('ok');
    expect(found.definitions).toHaveLength(4);
    expect(found.diagnostics.some((d) => d.severity === 'error' && d.file.endsWith('broken.md'))).toBe(true);
  });
});

describe.each(corpora)('the Claude Code agents in the $label', (corpus) => {
  const dir = join(corpus.root, 'claude', 'agents');
  const files = readdirSync(dir).filter((name) => name.endsWith('.md'));

  it('loads every agent through discovery, with usable tool filters', async () => {
    for (const file of files) {
      await put(join(cwd, '.claude', 'agents', file), await readFile(join(dir, file), 'utf8'));
    }
    const found = discoverAgentDefinitions({ cwd, home });
    const errors = found.diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toEqual([]);
    const custom = found.definitions.filter((d) => d.source === 'project');
    const names = new Set(files.map((file) => readAgentDefinition(join(dir, file)).value.name));
    expect(custom.length).toBe(names.size);
    for (const definition of custom) {
      expect(definition.systemPrompt.length).toBeGreaterThan(0);
      filterSubagentTools([], definition);
    }
  });
});

describeRealCorpus('the Claude Code agent corpus', (corpus) => {
  it('has the files the corpus README counts', () => {
    expect(readdirSync(join(corpus.root, 'claude', 'agents')).filter((name) => name.endsWith('.md')).length).toBeGreaterThanOrEqual(40);
  });
});

describe('agents whose names Claude Code accepts', () => {
  it('discovers names with dots and underscores', async () => {
    for (const name of ['powershell-5.1-expert', 'dotnet-framework-4.8-expert', 'data_pipeline_helper']) {
      await put(join(cwd, '.claude', 'agents', `${name}.md`), agent(name));
    }
    const found = discoverAgentDefinitions({ cwd, home });
    expect(found.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(found.definitions.filter((d) => d.source === 'project').map((d) => d.name).sort()).toEqual(['data_pipeline_helper', 'dotnet-framework-4.8-expert', 'powershell-5.1-expert']);
  });
});
