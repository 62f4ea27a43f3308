import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PermissionMode, ToolPermission } from '@tessera/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePermission, explainPermission, type PermissionRules } from './index.js';
import { matchesPermissionRule } from './rule-match.js';
import { judgedTool } from './tool-family.js';

let root: string;
let cwd: string;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'tessera-family-')));
  cwd = join(root, 'project');
  await mkdir(join(cwd, 'src'), { recursive: true });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const writeFile: ToolPermission = { family: 'edit', subject: 'path' };
const readFile: ToolPermission = { family: 'read', subject: 'path' };
const runCommand: ToolPermission = { family: 'execute', subject: 'command' };
const fetchUrl: ToolPermission = { family: 'fetch', subject: 'url' };

function judge(toolName: string, permission: ToolPermission | undefined, input: unknown, rules: PermissionRules, mode: PermissionMode = 'default') {
  return evaluatePermission(toolName, input, mode, rules, { cwd, homeDir: join(root, 'home'), ...(permission ? { permission } : {}) });
}

describe('judgedTool', () => {
  it('keeps built-in names in their own family whatever they declare', () => {
    expect(judgedTool('Read', runCommand)).toMatchObject({ family: 'Read', declared: false });
    expect(judgedTool('Task', writeFile)).toMatchObject({ name: 'Agent', family: undefined, declared: false });
  });

  it('puts an unknown name in its declared family, and an unknown family nowhere', () => {
    expect(judgedTool('mcp__fs__write_file', writeFile)).toEqual({ name: 'mcp__fs__write_file', family: 'Edit', declared: true, subjectField: 'path' });
    expect(judgedTool('mcp__web__get', { family: 'fetch' })).toMatchObject({ family: 'WebFetch', subjectField: undefined });
    expect(judgedTool('odd', { family: 'constructor' } as unknown as ToolPermission)).toMatchObject({ family: undefined, declared: false });
  });
});

describe('an edit-family tool', () => {
  const tool = 'mcp__fs__write_file';

  it('is denied by an Edit deny rule on its subject path', () => {
    expect(judge(tool, writeFile, { path: '/etc/passwd', content: '' }, { deny: ['Edit(//etc/**)'] })).toBe('deny');
    // `/x` is anchored at the settings root, as for Edit itself.
    const rules = { deny: ['Edit(/etc/**)'] };
    expect(evaluatePermission(tool, { path: '/etc/passwd' }, 'bypassPermissions', rules, { cwd, settingsRoot: '/', permission: writeFile })).toBe('deny');
    expect(judge(tool, writeFile, { path: join(cwd, 'src/a.ts') }, { deny: ['Edit(//etc/**)'] }, 'acceptEdits')).toBe('auto');
  });

  it('runs in acceptEdits inside the working directory only, and never on protected paths', () => {
    expect(judge(tool, writeFile, { path: join(cwd, 'src/a.ts') }, {}, 'acceptEdits')).toBe('auto');
    expect(judge(tool, writeFile, { path: 'src/a.ts' }, {}, 'acceptEdits')).toBe('auto');
    expect(judge(tool, writeFile, { path: join(root, 'elsewhere.txt') }, {}, 'acceptEdits')).toBe('approve');
    expect(judge(tool, writeFile, { path: join(cwd, '.git/config') }, {}, 'acceptEdits')).toBe('approve');
    expect(judge(tool, writeFile, { path: join(cwd, 'src/a.ts') }, {}, 'default')).toBe('approve');
    expect(judge(tool, writeFile, { path: join(cwd, 'src/a.ts') }, {}, 'plan')).toBe('deny');
  });

  it('is allowed by Edit allow rules and by its own rules read as path patterns', () => {
    expect(judge(tool, writeFile, { path: join(cwd, 'src/a.ts') }, { allow: ['Edit(./src/**)'] })).toBe('auto');
    expect(judge(tool, writeFile, { path: join(cwd, 'src/a.ts') }, { allow: [`${tool}(./src/**)`] })).toBe('auto');
    expect(judge(tool, writeFile, { path: join(cwd, 'b.ts') }, { allow: [`${tool}(./src/**)`] })).toBe('approve');
    // Only the declared field is judged: a path elsewhere in the input is not the subject.
    expect(judge(tool, writeFile, { file_path: join(cwd, 'src/a.ts') }, { allow: ['Edit(./src/**)'] })).toBe('approve');
  });

  it('keeps its own deny rules matching as written, so reading them as paths never loosens them', () => {
    expect(judge(tool, writeFile, { path: '/etc/passwd' }, { deny: [`${tool}(/etc/*)`] })).toBe('deny');
    expect(judge(tool, writeFile, { path: '/etc/passwd' }, { deny: [tool] })).toBe('deny');
    expect(judge(tool, writeFile, { path: '/etc/passwd' }, { deny: ['Edit'] })).toBe('deny');
  });

  it('suggests the exact Edit rule for "allow for session"', () => {
    const verdict = explainPermission(tool, { path: join(cwd, 'src/a.ts') }, 'default', {}, { cwd, permission: writeFile });
    expect(verdict.suggestions.map((rule) => rule.text)).toEqual([`Edit(/${join(cwd, 'src/a.ts')})`]);
    const again = evaluatePermission(tool, { path: join(cwd, 'src/a.ts') }, 'default', {}, { cwd, permission: writeFile, sessionRules: verdict.suggestions });
    expect(again).toBe('auto');
  });
});

describe('a read-family tool', () => {
  it('runs in every mode unless a Read rule denies its path', () => {
    const tool = 'mcp__fs__read_file';
    expect(judge(tool, readFile, { path: join(cwd, 'src/a.ts') }, {}, 'plan')).toBe('auto');
    expect(judge(tool, readFile, { path: join(cwd, '.env') }, { deny: ['Read(./.env)'] })).toBe('deny');
    expect(judge(tool, readFile, { path: '/etc/passwd' }, { deny: [`${tool}(//etc/**)`] })).toBe('deny');
    expect(judge(tool, readFile, { path: join(cwd, '.env') }, { deny: ['Edit(./.env)'] })).toBe('auto');
  });
});

describe('an execute-family tool', () => {
  const tool = 'mcp__shell__run';

  it('is denied by a Bash rule on any subcommand of a compound command', () => {
    expect(judge(tool, runCommand, { command: 'ls && rm -rf /' }, { deny: ['Bash(rm:*)'] })).toBe('deny');
    expect(judge(tool, runCommand, { command: 'echo $(rm -rf x)' }, { deny: ['Bash(rm:*)'] }, 'bypassPermissions')).toBe('deny');
    expect(judge(tool, runCommand, { command: 'ls -la' }, { deny: ['Bash(rm:*)'] }, 'bypassPermissions')).toBe('auto');
  });

  it('needs every subcommand allowed, by Bash rules or by its own rules read as command patterns', () => {
    expect(judge(tool, runCommand, { command: 'ls -la' }, { allow: ['Bash(ls:*)'] })).toBe('auto');
    expect(judge(tool, runCommand, { command: 'ls && npm test' }, { allow: ['Bash(ls:*)'] })).toBe('approve');
    expect(judge(tool, runCommand, { command: 'git status && ls' }, { allow: [`${tool}(git *)`, 'Bash(ls *)'] })).toBe('auto');
    const verdict = explainPermission(tool, { command: 'ls && npm test' }, 'default', { allow: ['Bash(ls:*)'] }, { cwd, permission: runCommand });
    expect(verdict.suggestions.map((rule) => rule.text)).toEqual(['Bash(npm test)']);
  });

  it('has the defaults of Bash in each mode', () => {
    expect(judge(tool, runCommand, { command: 'npm test' }, {}, 'plan')).toBe('deny');
    expect(judge(tool, runCommand, { command: 'mkdir src/new' }, {}, 'acceptEdits')).toBe('auto');
    expect(judge(tool, runCommand, { command: 'npm test' }, {}, 'acceptEdits')).toBe('approve');
    expect(judge(tool, runCommand, { command: 'rm -rf /' }, {}, 'bypassPermissions')).toBe('approve');
    expect(judge(tool, runCommand, { command: 'cat secrets/key' }, { deny: ['Read(./secrets/**)'] }, 'bypassPermissions')).toBe('deny');
  });
});

describe('a fetch-family tool', () => {
  const tool = 'mcp__web__get';

  it('is judged by WebFetch domain rules on its URL', () => {
    expect(judge(tool, fetchUrl, { url: 'https://example.com/a' }, { deny: ['WebFetch(domain:example.com)'] })).toBe('deny');
    expect(judge(tool, fetchUrl, { url: 'https://example.com/a' }, { allow: ['WebFetch(domain:example.com)'] })).toBe('auto');
    expect(judge(tool, fetchUrl, { url: 'https://other.org/' }, { allow: ['WebFetch(domain:example.com)'] })).toBe('approve');
    expect(judge(tool, fetchUrl, { url: 'https://example.com/a' }, { allow: [`${tool}(domain:example.com)`] })).toBe('auto');
    expect(judge(tool, fetchUrl, { url: 'https://other.org/' }, {}, 'plan')).toBe('approve');
  });
});

describe('a tool without metadata and with an unknown name', () => {
  it('is judged exactly as before: by its own name, never by a family', () => {
    const input = { path: '/etc/passwd', command: 'rm -rf /' };
    const rules = { deny: ['Edit(//etc/**)', 'Bash(rm:*)', 'WebFetch'] };
    for (const mode of ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const) {
      expect(judge('mcp__x__y', undefined, input, rules, mode)).toBe({ default: 'approve', acceptEdits: 'approve', plan: 'deny', bypassPermissions: 'auto', dontAsk: 'deny' }[mode]);
    }
    expect(judge('mcp__x__y', undefined, input, { deny: ['mcp__x__y(/etc/*)'] }, 'bypassPermissions')).toBe('deny');
    expect(judge('mcp__x__y', undefined, input, { allow: ['mcp__x__y(/etc/*)'] })).toBe('approve');
  });
});

describe('matchesPermissionRule with a declared family', () => {
  it('matches family rules only when the permission is given', () => {
    const anchors = { cwd: '/ws', homeDir: '/home/me' };
    const input = { target: '/etc/passwd' };
    expect(matchesPermissionRule('Edit(//etc/**)', 'mcp__fs__write', input, anchors)).toBe(false);
    expect(matchesPermissionRule('Edit(//etc/**)', 'mcp__fs__write', input, { ...anchors, permission: { family: 'edit', subject: 'target' } })).toBe(true);
    expect(matchesPermissionRule('Bash(rm *)', 'mcp__sh', { command: 'ls; rm x' }, { ...anchors, permission: runCommand })).toBe(true);
  });
});
