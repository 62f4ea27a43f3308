import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverAgentDefinitions } from './agent-definition-discovery.js';
import { AgentDefinitionRegistry } from './agent-definitions.js';

// Agents Claude Code loads must be discoverable and launchable by the same name.
let dir: string;
let cwd: string;
let home: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-agents-leniency-'));
  cwd = join(dir, 'project');
  home = join(dir, 'home');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function put(path: string, text: string) {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}
const agent = (name: string, extra = '') => `---\nname: ${name}\ndescription: Knows ${name}.\n${extra}---\nYou are ${name}.\n`;

describe('discovering agents Claude Code loads', () => {
  it('registers names with dots and underscores, and an uppercase one with its warning', async () => {
    await put(join(cwd, '.claude', 'agents', 'powershell-5.1-expert.md'), agent('powershell-5.1-expert', 'tools: Read, Bash\n'));
    await put(join(cwd, '.claude', 'agents', 'lang', 'dotnet-framework-4.8-expert.md'), agent('dotnet-framework-4.8-expert'));
    await put(join(home, '.claude', 'agents', 'my_agent.md'), agent('my_agent', 'memory: user\n'));
    await put(join(home, '.claude', 'agents', 'Reviewer.md'), agent('Reviewer'));
    const found = discoverAgentDefinitions({ cwd, home });
    const registry = new AgentDefinitionRegistry(found.definitions);
    expect(registry.require('powershell-5.1-expert')).toMatchObject({ source: 'project', tools: ['Read', 'Bash'] });
    expect(registry.require('dotnet-framework-4.8-expert').systemPrompt).toBe('You are dotnet-framework-4.8-expert.');
    expect(registry.require('my_agent')).toMatchObject({ source: 'user', extra: { memory: 'user' } });
    expect(registry.require('Reviewer').source).toBe('user');
    expect(found.diagnostics.map((d) => [d.severity, d.path])).toEqual([['info', 'memory'], ['warning', 'name']]);
  });

  it('still skips what Claude Code skips, and reports it', async () => {
    await put(join(cwd, '.claude', 'agents', 'namespaced.md'), agent('plugin:agent'));
    await put(join(cwd, '.claude', 'agents', 'ok.md'), agent('ok'));
    const found = discoverAgentDefinitions({ cwd, home });
    expect(found.definitions.map((d) => d.name)).toEqual(['general-purpose', 'Explore', 'Plan', 'ok']);
    expect(found.diagnostics).toMatchObject([{ severity: 'error', path: 'name', file: join(cwd, '.claude', 'agents', 'namespaced.md') }]);
  });
});
