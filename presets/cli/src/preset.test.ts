import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SystemPromptBuilder } from '@tessera/contracts';
import { ContainerSessionServices, createKernel } from '@tessera/kernel';
import { describe, expect, it } from 'vitest';
import { parseArgs, splitToolList } from './args.js';
import { cliPreset } from './preset.js';
import { loadCliSettings } from './settings.js';

describe('cliPreset', () => {
  it('boots, and every token a member provides resolves', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tessera-preset-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'tessera-preset-cwd-'));
    const kernel = await createKernel({
      plugins: cliPreset({ cwd, home, provider: { kind: 'profile', profile: { type: 'anthropic', apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9' } }, sessionLog: false }),
    });
    const description = kernel.describe();
    const provided = [...new Set(description.plugins.flatMap((plugin) => plugin.provides))];
    expect(provided).toEqual(expect.arrayContaining(['Provider', 'SessionStore', 'SessionTree', 'PermissionPolicy', 'SystemPromptBuilder', 'EditCheckpoints', 'BackgroundTasks', 'SubagentLauncher']));
    // Tokens are `Symbol.for('tessera/<Name>')`: resolve each provided one by its name.
    const unresolved: string[] = [];
    for (const name of provided) {
      try {
        if (kernel.get(Symbol.for(`tessera/${name}`)) === undefined) unresolved.push(name);
      } catch (error) {
        unresolved.push(`${name}: ${String(error)}`);
      }
    }
    expect(unresolved).toEqual([]);
    await kernel.shutdown();
  });
});

describe('parseArgs', () => {
  it("reads settings.json's language into the system prompt", async () => {
    const home = mkdtempSync(join(tmpdir(), 'tessera-preset-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'tessera-preset-cwd-'));
    mkdirSync(join(cwd, '.tessera'));
    writeFileSync(join(cwd, '.tessera', 'settings.json'), JSON.stringify({ language: 'Japanese' }));
    const settings = loadCliSettings({ cwd, home, env: {}, flags: parseArgs([]) });
    expect(settings.language).toBe('Japanese');
    const kernel = await createKernel({ plugins: cliPreset({ cwd, home, provider: { kind: 'demo' }, sessionLog: false, ...(settings.language ? { language: settings.language } : {}) }) });
    const built = await kernel.get(SystemPromptBuilder).build({ cwd, services: new ContainerSessionServices(kernel.container) });
    expect(built.prompt).toContain('- Response language: Japanese');
    await kernel.shutdown();
  });

  it('takes every Claude Code print flag, in both --flag value and --flag=value forms', () => {
    const flags = parseArgs([
      '-p', '--output-format=stream-json', '--verbose', '--input-format', 'stream-json', '--include-partial-messages', '--replay-user-messages',
      '-c', '--fork-session', '--session-id', 'b6f0c4f2-1111-4c4c-8888-000000000001', '--model=opus', '--fallback-model', 'haiku,sonnet',
      '--permission-mode', 'plan', '--allowedTools', 'Read', 'Bash(git diff *),Write', '--disallowedTools=WebFetch', '--tools', 'Read', 'Grep',
      '--system-prompt', 'S', '--append-system-prompt-file', 'a.txt', '--max-turns=3', '--mcp-config', '{"mcpServers":{}}', '--strict-mcp-config',
      '--settings', 's.json', '--setting-sources=', '--add-dir', '../lib', '../docs', '--cwd', 'sub', '--provider', 'demo', '--no-session-persistence',
      '--permission-prompt-tool=stdio', '--dangerously-skip-permissions', 'the prompt',
    ]);
    expect(flags).toMatchObject({
      print: true, outputFormat: 'stream-json', verbose: true, inputFormat: 'stream-json', includePartialMessages: true, replayUserMessages: true,
      continue: true, forkSession: true, sessionId: 'b6f0c4f2-1111-4c4c-8888-000000000001', model: 'opus', fallbackModel: 'haiku,sonnet',
      permissionMode: 'plan', allowedTools: ['Read', 'Bash(git diff *)', 'Write'], disallowedTools: ['WebFetch'], tools: ['Read', 'Grep'],
      systemPrompt: 'S', appendSystemPromptFile: 'a.txt', maxTurns: 3, mcpConfig: ['{"mcpServers":{}}'], strictMcpConfig: true, settings: 's.json',
      settingSources: [], addDir: ['../lib', '../docs'], cwd: 'sub', provider: 'demo', sessionPersistence: false, permissionPromptTool: 'stdio',
      dangerouslySkipPermissions: true, positionals: ['the prompt'],
    });
  });

  it('-r takes an id when one follows, else means the latest session', () => {
    expect(parseArgs(['-r', 'abc-123', '-p', 'x']).resume).toBe('abc-123');
    expect(parseArgs(['-r', '-p', 'x']).resume).toBe(true);
    expect(parseArgs(['-p', 'x', '--resume']).resume).toBe(true);
    expect(parseArgs(['-r', 'fix the tests']).resume).toBe(true);
  });

  it('rejects unknown flags and bad values with the offending text', () => {
    expect(() => parseArgs(['--output-format', 'yaml'])).toThrow(/argument 'yaml' is invalid. Allowed choices are text, json, stream-json/);
    expect(() => parseArgs(['--max-turns', 'many'])).toThrow(/expects a whole number/);
    expect(() => parseArgs(['--model'])).toThrow(/argument missing/);
    expect(() => parseArgs(['--allowedTool', 'Read'])).toThrow(/Did you mean --allowedTools/);
    const ignored: string[] = [];
    expect(parseArgs(['--brand-new-flag=1', '--input-format', 'stream-json'], { ignoreUnknown: true, onUnknown: (flag) => ignored.push(flag) }).inputFormat).toBe('stream-json');
    expect(ignored).toEqual(['--brand-new-flag']);
  });

  it('splits tool lists on commas and spaces outside parentheses', () => {
    expect(splitToolList('Read, Bash(git log:*),Bash(npm run test *) Write')).toEqual(['Read', 'Bash(git log:*)', 'Bash(npm run test *)', 'Write']);
  });

  it('combines boolean short flags as Commander does (-pc is -p -c)', () => {
    expect(parseArgs(['-pc', 'hi'])).toMatchObject({ print: true, continue: true, positionals: ['hi'] });
    expect(parseArgs(['-cp', '--output-format', 'json', 'hi'])).toMatchObject({ print: true, continue: true, outputFormat: 'json', positionals: ['hi'] });
    expect(() => parseArgs(['-px', 'hi'])).toThrow(/unknown option '-x'/);
  });

  it('an option value that starts with "-" is the value, as Commander takes required option arguments', () => {
    expect(parseArgs(['-p', 'hi', '--append-system-prompt', '-be terse']).appendSystemPrompt).toBe('-be terse');
    expect(parseArgs(['--system-prompt', '--- role: reviewer', '-p', 'hi'])).toMatchObject({ systemPrompt: '--- role: reviewer', print: true, positionals: ['hi'] });
    expect(parseArgs(['--system-prompt', '-pc']).systemPrompt).toBe('-pc');
  });
});

describe('loadCliSettings', () => {
  it('inline --settings JSON leaves no file behind, and its errors name --settings', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'tessera-settings-tmp-'));
    const home = mkdtempSync(join(tmpdir(), 'tessera-preset-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'tessera-preset-cwd-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const settings = loadCliSettings({ cwd, home, env: {}, flags: parseArgs(['--settings', '{"permissions":{"allow":["Bash(pwd)"]},"env":{"API_TOKEN":"secret-value"}}']) });
      expect(settings.permissions.allow).toContain('Bash(pwd)');
      expect(() => loadCliSettings({ cwd, home, env: {}, flags: parseArgs(['--settings', '{"permissions": [}']) })).toThrow(/^Settings error: --settings:1:/);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it('--setting-sources limits the settings files read: their permissions and hooks ("" reads none)', () => {
    const home = mkdtempSync(join(tmpdir(), 'tessera-preset-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'tessera-preset-cwd-'));
    const hooks = (marker: string) => ({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `echo ${marker}` }] }] });
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['WebFetch'] }, hooks: hooks('user') }));
    mkdirSync(join(cwd, '.claude'));
    writeFileSync(join(cwd, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash'] }, hooks: hooks('project'), enableAllProjectMcpServers: true }));
    writeFileSync(join(cwd, '.claude', 'settings.local.json'), JSON.stringify({ permissions: { deny: ['Write'] } }));
    const load = (...argv: string[]) => loadCliSettings({ cwd, home, env: {}, flags: parseArgs(argv) });

    expect(load().permissions.deny).toEqual(['WebFetch', 'Bash', 'Write']);
    const none = load('--setting-sources', '');
    expect(none.permissions.deny).toEqual([]);
    expect(none.hookFiles).toEqual([]);
    expect(none.loaded.config.enableAllProjectMcpServers).toBeUndefined();
    expect(none.settingSources).toEqual([]);
    const user = load('--setting-sources', 'user');
    expect(user.permissions.deny).toEqual(['WebFetch']);
    expect(user.hookFiles).toEqual([join(home, '.claude', 'settings.json')]);
    expect(load('--setting-sources', 'project,local').permissions.deny).toEqual(['Bash', 'Write']);
    // Flags and --settings are not files a source names: they always apply.
    expect(load('--setting-sources', '', '--disallowedTools', 'Read', '--settings', '{"permissions":{"deny":["Glob"]}}').permissions.deny).toEqual(['Glob', 'Read']);
    expect(() => load('--setting-sources', 'user,policy')).toThrow(/--setting-sources.*'policy'.*user, project, local/);
  });
});
