import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { noSessionServices, type SettingSource } from '@tessera/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DefaultSystemPromptBuilder, systemPrompt } from './index.js';

let root: string;
let cwd: string;
let home: string;
const write = (path: string, text: string): void => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tessera-prompt-sources-'));
  cwd = join(root, 'repo');
  home = join(root, 'home');
  write(join(home, '.claude', 'CLAUDE.md'), 'USER-MARKER\n');
  write(join(cwd, 'CLAUDE.md'), 'PROJECT-MARKER\n@notes.md\n\n## Compact Instructions\nKeep PROJECT-COMPACT.\n');
  write(join(cwd, 'notes.md'), 'IMPORTED-MARKER\n');
  write(join(cwd, '.claude', 'CLAUDE.md'), 'DOT-CLAUDE-MARKER\n');
  write(join(cwd, 'AGENTS.md'), 'AGENTS-MARKER\n');
  write(join(cwd, 'CLAUDE.local.md'), 'LOCAL-MARKER\n');
  write(join(cwd, '.tessera', 'memory', 'MEMORY.md'), '- MEMORY-MARKER\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function build(settingSources?: SettingSource[]) {
  const builder = new DefaultSystemPromptBuilder({ home, git: false, now: () => 0, platform: 'linux', ...(settingSources === undefined ? {} : { settingSources }) });
  return builder.build({ cwd, model: 'm', services: noSessionServices });
}

const ALL = ['USER-MARKER', 'PROJECT-MARKER', 'IMPORTED-MARKER', 'DOT-CLAUDE-MARKER', 'AGENTS-MARKER', 'LOCAL-MARKER', 'MEMORY-MARKER'];
const present = (prompt: string) => ALL.filter((marker) => prompt.includes(marker));

describe('systemPrompt({ settingSources })', () => {
  it('reads every source by default', async () => {
    const result = await build();
    expect(present(result.prompt)).toEqual(ALL);
    expect(result.compactInstructions).toContain('PROJECT-COMPACT');
  });

  it('user: only the user files', async () => {
    const result = await build(['user']);
    expect(present(result.prompt)).toEqual(['USER-MARKER']);
    expect(result.contextFiles.map((file) => file.path)).toEqual([join(home, '.claude', 'CLAUDE.md')]);
    expect(result.compactInstructions).toBeUndefined();
  });

  it('project: the project files, their imports and the memory index; CLAUDE.local.md needs local', async () => {
    expect(present((await build(['project'])).prompt)).toEqual(['PROJECT-MARKER', 'IMPORTED-MARKER', 'DOT-CLAUDE-MARKER', 'AGENTS-MARKER', 'MEMORY-MARKER']);
    expect(present((await build(['local'])).prompt)).toEqual(['LOCAL-MARKER']);
    expect(present((await build([])).prompt)).toEqual([]);
  });

  it('refuses a source Claude Code does not have', () => {
    expect(() => systemPrompt({ settingSources: ['user', 'policy' as never] })).toThrow(/settingSources/);
  });
});
