import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverAgentDefinitions } from './agent-definition-discovery.js';
import { subagents } from './subagents-plugin.js';

let dir: string;
let cwd: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tessera-agent-sources-'));
  cwd = join(dir, 'project');
  home = join(dir, 'home');
  const put = (path: string, name: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `---\nname: ${name}\ndescription: ${name} agent\n---\nYou are ${name}.\n`);
  };
  put(join(cwd, '.claude', 'agents', 'project-claude.md'), 'project-claude');
  put(join(cwd, '.tessera', 'agents', 'project-tessera.md'), 'project-tessera');
  put(join(home, '.claude', 'agents', 'user-claude.md'), 'user-claude');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const custom = (sources?: ReadonlyArray<'project' | 'user'>) =>
  discoverAgentDefinitions({ cwd, home, builtins: [], ...(sources === undefined ? {} : { sources }) })
    .definitions.map((definition) => definition.name)
    .sort();

describe('agent sources', () => {
  it('discovers only the directories of the sources named', () => {
    expect(custom()).toEqual(['project-claude', 'project-tessera', 'user-claude']);
    expect(custom(['user'])).toEqual(['user-claude']);
    expect(custom(['project'])).toEqual(['project-claude', 'project-tessera']);
    expect(custom([])).toEqual([]);
  });

  it('subagents() refuses a source Claude Code does not have', () => {
    expect(() => subagents({ settingSources: ['team' as never] })).toThrow(/settingSources/);
    expect(() => subagents({ settingSources: ['user'] })).not.toThrow();
  });
});
