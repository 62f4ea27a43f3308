import { describe, expect, it } from 'vitest';
import { matchesIfCondition } from './if-condition.js';

describe('matchesIfCondition (permission-rule meaning)', () => {
  const cwd = '/ws';
  it.each([
    ['Write(src/**)', 'Write', { file_path: '/ws/src/a.ts' }, true],
    ['Write(./src/**)', 'Write', { file_path: '/ws/src/deep/b.ts' }, true],
    ['Write(src/**)', 'Write', { file_path: '/other/src/a.ts' }, false],
    ['Write(src/*.ts)', 'Write', { file_path: '/ws/src/a.ts' }, true],
    ['Write(*.ts)', 'Write', { file_path: '/ws/src/a.ts' }, true],
    ['Write(//etc/**)', 'Write', { file_path: '/etc/hosts' }, true],
    ['Edit(src/**)', 'Write', { file_path: '/ws/src/a.ts' }, true],
    ['Edit(src/**)', 'Read', { file_path: '/ws/src/a.ts' }, false],
    ['Bash(git push:*)', 'Bash', { command: 'git status && git push origin main' }, true],
    ['Bash(git push:*)', 'Bash', { command: 'git pull' }, false],
    ['Bash', 'Bash', { command: 'anything' }, true],
    ['WebFetch(domain:example.com)', 'WebFetch', { url: 'https://example.com/x', prompt: 'p' }, true],
    ['WebFetch(domain:example.com)', 'WebFetch', { url: 'https://other.org/x', prompt: 'p' }, false],
  ] as const)('%s on %s %j: %s', (rule, tool, input, expected) => {
    expect(matchesIfCondition(rule, tool, input, cwd)).toBe(expected);
  });

  it('anchors relative patterns at the cwd it is given (the runner passes the session cwd)', () => {
    expect(matchesIfCondition('Write(lib/**)', 'Write', { file_path: '/ws/pkg/lib/a.ts' }, '/ws/pkg')).toBe(true);
    expect(matchesIfCondition('Write(lib/**)', 'Write', { file_path: '/ws/pkg/lib/a.ts' }, '/ws')).toBe(false);
  });

  it('judges a tool that declares a permission family by that family (an MCP editor under Edit rules)', () => {
    const editor = { family: 'edit' as const, subject: 'path' };
    expect(matchesIfCondition('Edit(src/**)', 'mcp__fs__write_file', { path: '/ws/src/a.ts' }, '/ws', editor)).toBe(true);
    expect(matchesIfCondition('Edit(src/**)', 'mcp__fs__write_file', { path: '/ws/docs/a.md' }, '/ws', editor)).toBe(false);
    // Without the metadata the unknown tool is not an editor.
    expect(matchesIfCondition('Edit(src/**)', 'mcp__fs__write_file', { path: '/ws/src/a.ts' }, '/ws')).toBe(false);
    expect(matchesIfCondition('Bash(rm:*)', 'mcp__shell__run', { command: 'ls && rm -rf build' }, '/ws', { family: 'execute', subject: 'command' })).toBe(true);
  });
});
