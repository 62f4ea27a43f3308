import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readAgentDefinition } from './agent-definition.js';

// Synthetic agent files, written the way real ones are, read as Claude Code reads them:
// refused only where Claude Code skips the file (see docs/leniency.md).
const dir = mkdtempSync(join(tmpdir(), 'tessera-agent-leniency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
function read(text: string) {
  count += 1;
  const file = join(dir, `agent-${count}.md`);
  writeFileSync(file, text);
  return readAgentDefinition(file, 'project');
}
const agent = (frontmatter: string, body = 'You help.') => `---\n${frontmatter}\n---\n${body}\n`;
const severities = (diagnostics: Array<{ severity: string; path?: string }>) => diagnostics.map((d) => [d.severity, d.path]);

describe('agent names Claude Code loads', () => {
  it.each(['powershell-5.1-expert', 'dotnet-framework-4.8-expert', 'my_agent'])('loads %s with no diagnostic', (name) => {
    const { value, diagnostics } = read(agent(`name: ${name}\ndescription: Helps with ${name}.`));
    expect(diagnostics).toEqual([]);
    expect(value).toMatchObject({ name, description: `Helps with ${name}.`, systemPrompt: 'You help.', source: 'project' });
  });

  it('loads an uppercase name as written, with a warning on the name line', () => {
    const { value, diagnostics } = read(agent('description: d\nname: CodeReviewer'));
    expect(value.name).toBe('CodeReviewer');
    expect(diagnostics).toMatchObject([{ severity: 'warning', path: 'name', line: 3 }]);
  });

  it.each([['plugin:agent'], ['-leading']])('still refuses %s, which Claude Code skips', (name) => {
    expect(read(agent(`name: "${name}"\ndescription: d`)).diagnostics).toMatchObject([{ severity: 'error', path: 'name' }]);
  });

  it('still refuses a file without name or description, and one whose frontmatter is never closed', () => {
    expect(read(agent('description: d')).diagnostics).toMatchObject([{ severity: 'error', path: 'name' }]);
    expect(read(agent('name: a')).diagnostics).toMatchObject([{ severity: 'error', path: 'description' }]);
    expect(read('---\nname: a\ndescription: d\nYou help.\n').diagnostics).toMatchObject([{ severity: 'error', line: 1 }]);
  });
});

describe('agent frontmatter keys', () => {
  it('keeps unknown and not-yet-applied keys in `extra`, with a warning and an info', () => {
    const { value, diagnostics } = read(agent('name: a\ndescription: d\nmemory: project\nflavour: [spicy, sweet]'));
    expect(value.extra).toEqual({ memory: 'project', flavour: ['spicy', 'sweet'] });
    expect(severities(diagnostics)).toEqual([['info', 'memory'], ['warning', 'flavour']]);
  });

  it('points `allowed-tools` in an agent at `tools`, and keeps it', () => {
    const { value, diagnostics } = read(agent('name: a\ndescription: d\nallowed-tools: Read, Grep'));
    expect(value.tools).toBeUndefined();
    expect(value.extra).toEqual({ 'allowed-tools': 'Read, Grep' });
    expect(diagnostics).toMatchObject([{ severity: 'warning', path: 'allowed-tools' }]);
    expect(diagnostics[0]!.message).toContain('`tools`');
  });

  it('reads `tools` as a comma string, a YAML list or a JSON list', () => {
    expect(read(agent('name: a\ndescription: d\ntools: Read, Bash(git diff:*)')).value.tools).toEqual(['Read', 'Bash(git diff:*)']);
    expect(read(agent('name: a\ndescription: d\ntools:\n  - Read\n  - Grep')).value.tools).toEqual(['Read', 'Grep']);
    expect(read(agent(`name: a\ndescription: d\ntools: '["Read", "Agent(a, b)"]'`)).value.tools).toEqual(['Read', 'Agent(a, b)']);
  });
});
