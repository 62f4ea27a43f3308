import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCommandFile } from './command-file.js';
import { readSkillFile } from './skill-file.js';

// Synthetic skills and commands with the quirks of published ones; none may fail to load.
const dir = mkdtempSync(join(tmpdir(), 'tessera-skill-leniency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function skill(id: string, text: string) {
  mkdirSync(join(dir, 'skills', id), { recursive: true });
  const file = join(dir, 'skills', id, 'SKILL.md');
  writeFileSync(file, text);
  return readSkillFile(file);
}
let commands = 0;
function command(text: string) {
  commands += 1;
  mkdirSync(join(dir, 'commands'), { recursive: true });
  const file = join(dir, 'commands', `command-${commands}.md`);
  writeFileSync(file, text);
  return readCommandFile(file);
}
const severities = (diagnostics: Array<{ severity: string; path?: string }>) => diagnostics.map((d) => [d.severity, d.path]);
const errorsOf = (diagnostics: Array<{ severity: string }>) => diagnostics.filter((d) => d.severity === 'error');

describe('skills', () => {
  it('keeps `version` in `extra` with an info', () => {
    const { value, diagnostics } = skill('versioned', '---\nname: versioned\ndescription: d\nversion: 2.1.0\n---\nBody');
    expect(value.extra).toEqual({ version: '2.1.0' });
    expect(severities(diagnostics)).toEqual([['info', 'version']]);
  });

  it.each([
    ['a comma string', 'allowed-tools: Read, Grep, Bash(git log:*)'],
    ['a YAML list', 'allowed-tools:\n  - Read\n  - Grep\n  - Bash(git log:*)'],
    ['a JSON list', `allowed-tools: '["Read", "Grep", "Bash(git log:*)"]'`],
  ])('reads allowed-tools written as %s', (_label, line) => {
    const { value, diagnostics } = skill('tools', `---\nname: tools\ndescription: d\nversion: 1.0.0\n${line}\n---\nBody`);
    expect(value.allowedTools).toEqual(['Read', 'Grep', 'Bash(git log:*)']);
    expect(errorsOf(diagnostics)).toEqual([]);
  });

  it('keeps `tools` (an agent key) in `extra` and points at `allowed-tools`', () => {
    const { value, diagnostics } = skill('agent-style', '---\nname: agent-style\ndescription: d\ntools: Read, Grep\n---\nBody');
    expect(value.allowedTools).toBeUndefined();
    expect(value.extra).toEqual({ tools: 'Read, Grep' });
    expect(diagnostics).toMatchObject([{ severity: 'warning', path: 'tools' }]);
    expect(diagnostics[0]!.message).toContain('`allowed-tools`');
  });

  it.each(['powershell-5.1-helper', 'my_skill'])('loads the name %s without a warning (an info: uploads refuse it)', (name) => {
    const { value, diagnostics } = skill(name, `---\nname: ${name}\ndescription: d\n---\nBody`);
    expect(value).toMatchObject({ id: name, name });
    expect(severities(diagnostics)).toEqual([['info', 'name']]);
  });

  it('loads an uppercase name as written, with a warning', () => {
    const { value, diagnostics } = skill('pdf', '---\nname: PDF\ndescription: d\n---\nBody');
    expect(value).toMatchObject({ id: 'pdf', name: 'PDF' });
    expect(diagnostics.map((d) => d.severity)).toContain('warning');
    expect(errorsOf(diagnostics)).toEqual([]);
  });

  it('notes a description over the upload limit, and warns only past what Claude Code lists', () => {
    const long = (length: number) => skill('long', `---\nname: long\ndescription: ${'a'.repeat(length)}\n---\nBody`).diagnostics;
    expect(severities(long(1100))).toEqual([['info', 'description']]);
    expect(severities(long(1600))).toEqual([['warning', 'description']]);
  });

  it('reads a file whose frontmatter is never closed as having none, with a warning', () => {
    const { value, diagnostics } = skill('unclosed', '---\nname: unclosed\n\nExplains the build.');
    expect(value.id).toBe('unclosed');
    expect(value.body).toContain('Explains the build.');
    expect(diagnostics).toMatchObject([{ severity: 'warning', line: 1 }, { severity: 'info', path: 'description' }]);
  });
});

describe('commands', () => {
  it('turns `argument-hint: [x]` (a YAML array) back into the text', () => {
    const { value, diagnostics } = command('---\ndescription: Deploys\nargument-hint: [environment]\n---\nDeploy to $ARGUMENTS');
    expect(value.argumentHint).toBe('[environment]');
    expect(diagnostics).toEqual([]);
    expect(command('---\nargument-hint: [file, mode]\n---\nx').value.argumentHint).toBe('[file, mode]');
  });

  it('keeps undocumented keys seen in published commands', () => {
    const { value, diagnostics } = command('---\ndescription: d\nhide-from-slash-command-tool: "true"\ntool_access: full\n---\nx');
    expect(value.extra).toEqual({ 'hide-from-slash-command-tool': 'true', tool_access: 'full' });
    expect(severities(diagnostics)).toEqual([['info', 'hide-from-slash-command-tool'], ['warning', 'tool_access']]);
  });

  it('loads a command whose frontmatter is a list, ignoring it with a warning', () => {
    const { value, diagnostics } = command('---\n- a\n- b\n---\nDo the thing.');
    expect(value.description).toBe('Do the thing.');
    expect(diagnostics).toMatchObject([{ severity: 'warning', line: 2 }]);
  });
});
