import { describe, expect, it } from 'vitest';
import { matchesPermissionRule } from './index.js';

const anchors = { cwd: '/ws', homeDir: '/home/me' };
const write = (file_path: string) => ({ file_path, content: '' });

describe('matchesPermissionRule', () => {
  it('matches absolute file paths against relative rule patterns, anchored at cwd', () => {
    expect(matchesPermissionRule('Write(src/**)', 'Write', write('/ws/src/a.ts'), anchors)).toBe(true);
    expect(matchesPermissionRule('Write(src/**)', 'Write', write('/ws/lib/a.ts'), anchors)).toBe(false);
    expect(matchesPermissionRule('Write(src/**)', 'Write', write('/other/src/a.ts'), anchors)).toBe(false);
    expect(matchesPermissionRule('Edit(./src/*.ts)', 'Edit', { file_path: '/ws/src/a.ts' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Edit(./src/*.ts)', 'Edit', { file_path: '/ws/src/deep/a.ts' }, anchors)).toBe(false);
    expect(matchesPermissionRule('Edit(src/a.ts)', 'Edit', { file_path: 'src/a.ts' }, anchors)).toBe(true);
  });

  it('reads /x at the settings root, ~/x at home and //x as absolute', () => {
    expect(matchesPermissionRule('Read(/conf/*.json)', 'Read', { file_path: '/proj/conf/a.json' }, { ...anchors, settingsRoot: '/proj' })).toBe(true);
    expect(matchesPermissionRule('Read(/conf/*.json)', 'Read', { file_path: '/conf/a.json' }, { ...anchors, settingsRoot: '/proj' })).toBe(false);
    expect(matchesPermissionRule('Read(~/.ssh/**)', 'Read', { file_path: '/home/me/.ssh/id' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Read(//etc/**)', 'Read', { file_path: '/etc/passwd' }, anchors)).toBe(true);
  });

  it('lets Edit rules cover Write, MultiEdit and NotebookEdit, but a Write rule only as a path rule', () => {
    for (const tool of ['Write', 'MultiEdit', 'NotebookEdit']) {
      expect(matchesPermissionRule('Edit(src/**)', tool, { file_path: '/ws/src/a', notebook_path: '/ws/src/a' }, anchors), tool).toBe(true);
    }
    expect(matchesPermissionRule('Edit', 'Write', write('/anywhere'), anchors)).toBe(true);
    expect(matchesPermissionRule('Write', 'Edit', { file_path: '/ws/a' }, anchors)).toBe(false);
    expect(matchesPermissionRule('Edit(src/**)', 'Read', { file_path: '/ws/src/a' }, anchors)).toBe(false);
  });

  it('checks every word of a Bash brace range against Read rules, not only its ends', () => {
    expect(matchesPermissionRule('Read(./key2)', 'Bash', { command: 'cat key{1..3}' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Read(./key09)', 'Bash', { command: 'cat key{08..10}' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Read(./key3)', 'Bash', { command: 'cat key{5..1..2}' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Read(./key2)', 'Bash', { command: 'cat key{1..5..2}' }, anchors)).toBe(false);
  });

  it('matches a bare tool name, Bash commands per subcommand, and WebFetch domains', () => {
    expect(matchesPermissionRule('Read', 'Read', { file_path: '/x' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Read', 'Write', write('/x'), anchors)).toBe(false);
    expect(matchesPermissionRule('Bash(git *)', 'Bash', { command: 'git push origin' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Bash(git *)', 'Bash', { command: 'ls && FOO=1 git push' }, anchors)).toBe(true);
    expect(matchesPermissionRule('Bash(git *)', 'Bash', { command: 'gitk' }, anchors)).toBe(false);
    expect(matchesPermissionRule('WebFetch(domain:x.com)', 'WebFetch', { url: 'https://x.com/a' }, anchors)).toBe(true);
    expect(matchesPermissionRule('WebFetch(domain:x.com)', 'WebFetch', { url: 'https://y.com/a' }, anchors)).toBe(false);
  });
});
