import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { corpora, describeRealCorpus, fixtureCorpus } from '../../../test/support/compat-corpus.js';
import { tempTree } from './config.test-helper.js';
import { SettingsPolicyError } from './errors.js';
import { loadConfig } from './load-config.js';
import { readSettingsLayer } from './settings-layer.js';

let cleanup = () => {};
afterEach(() => cleanup());
function project(files: Record<string, string | object>) {
  const tree = tempTree(files);
  cleanup = tree.cleanup;
  return { cwd: join(tree.root, 'repo'), home: join(tree.root, 'home'), root: tree.root };
}

const settingsFiles = (root: string) => readdirSync(join(root, 'claude', 'settings')).filter((name) => name.endsWith('.json'));

describe.each(corpora)('settings files in the $label', (corpus) => {
  it.each(settingsFiles(corpus.root))('%s validates without errors', (name) => {
    const { layer, diagnostics } = readSettingsLayer(join(corpus.root, 'claude', 'settings', name), 'project');
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(layer.failed).toBe(false);
    expect(layer.settings).toBeDefined();
  });
});

describeRealCorpus('settings corpus', (corpus) => {
  it('has the 17 files', () => expect(settingsFiles(corpus.root)).toHaveLength(17));

  it('warns about mcpServers in settings.json (the llama_index negative case)', () => {
    const { diagnostics, layer } = readSettingsLayer(join(corpus.root, 'claude', 'settings', 'run-llama__llama_index__.claude__settings.json'), 'project');
    expect(diagnostics).toMatchObject([{ severity: 'warning', path: 'mcpServers' }]);
    expect(diagnostics[0]!.message).toContain('.mcp.json');
    expect((layer.settings as Record<string, unknown>).mcpServers).toBeDefined();
  });
});

describe('settings fixtures', () => {
  const read = (name: string) => readSettingsLayer(join(fixtureCorpus.root, 'claude', 'settings', name), 'project');

  it('warns about mcpServers in settings.json and keeps the key', () => {
    const { diagnostics, layer } = read('fixtures__mcp-in-settings__.claude__settings.json');
    expect(diagnostics).toMatchObject([{ severity: 'warning', path: 'mcpServers' }]);
    expect(diagnostics[0]!.message).toContain('.mcp.json');
    expect((layer.settings as Record<string, unknown>).mcpServers).toBeDefined();
  });

  it('reads minified, tab-indented and CRLF + BOM files alike', () => {
    expect(read('fixtures__minified__.claude__settings.json').layer.settings).toMatchObject({ model: 'sonnet', env: { NODE_ENV: 'test' } });
    expect(read('fixtures__tabs__.claude__settings.local.json').layer.settings).toMatchObject({ permissions: { allow: ['Bash(cargo test:*)'] }, includeCoAuthoredBy: false });
    expect(read('fixtures__crlf-bom__.claude__settings.json').layer.settings).toMatchObject({ permissions: { deny: ['Bash(rm -rf:*)'] } });
  });

  it('keeps $schema, empty arrays and keys it does not know', () => {
    const { layer, diagnostics } = read('fixtures__permissions__.claude__settings.json');
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(layer.settings).toMatchObject({ permissions: { deny: [], defaultMode: 'acceptEdits' }, enabledMcpjsonServers: ['github'] });
    const tabs = read('fixtures__tabs__.claude__settings.local.json').layer.settings as Record<string, unknown>;
    expect(tabs.feedbackSurveyState).toEqual({ lastShownTime: 1754089210000 });
  });
});

describe('loadConfig layers and merge rules', () => {
  it('reads the six layers plus --settings in precedence order', () => {
    const { cwd, home } = project({
      'home/.tessera/settings.json': { model: 'a' },
      'home/.claude/settings.json': { model: 'b' },
      'repo/.tessera/settings.json': { model: 'c' },
      'repo/.tessera/settings.local.json': { model: 'd' },
      'repo/.claude/settings.json': { model: 'e' },
      'repo/.claude/settings.local.json': { model: 'f' },
      'repo/cli.json': { model: 'g' },
    });
    const without = loadConfig({ cwd, home, env: {} });
    expect(without.config.model).toBe('f');
    expect(without.layers.map((l) => [l.scope, l.exists])).toEqual([
      ['user', true], ['user', true], ['project', true], ['local', true], ['project', true], ['local', true],
    ]);
    const withCli = loadConfig({ cwd, home, settingsFile: 'cli.json', env: {} });
    expect(withCli.config.model).toBe('g');
    expect(withCli.layers.at(-1)).toMatchObject({ scope: 'cli', file: join(cwd, 'cli.json') });
    expect(withCli.diagnostics).toEqual([]);
  });

  it('reports a missing --settings file', () => {
    const { cwd, home } = project({});
    expect(loadConfig({ cwd, home, settingsFile: 'nope.json', env: {} }).diagnostics).toMatchObject([{ severity: 'error', file: join(cwd, 'nope.json') }]);
  });

  it('concatenates and de-duplicates permission lists; a deny in any layer survives', () => {
    const { cwd, home } = project({
      'home/.claude/settings.json': { permissions: { allow: ['Read'], deny: ['Bash(rm *)'], additionalDirectories: ['/a'], defaultMode: 'plan' } },
      'repo/.claude/settings.json': { permissions: { allow: ['Read', 'Edit'], ask: ['Bash(git push:*)'], additionalDirectories: ['/a', '/b'] } },
      'repo/.claude/settings.local.json': { permissions: { deny: ['Bash(rm *)', 'WebFetch'], allow: [], defaultMode: 'acceptEdits' } },
    });
    expect(loadConfig({ cwd, home, env: {} }).config.permissions).toEqual({
      allow: ['Read', 'Edit'],
      deny: ['Bash(rm *)', 'WebFetch'],
      ask: ['Bash(git push:*)'],
      additionalDirectories: ['/a', '/b'],
      defaultMode: 'acceptEdits',
    });
  });

  it('merges hooks per event, keeping identical groups once', () => {
    const group = (command: string) => ({ matcher: 'Bash', hooks: [{ type: 'command', command }] });
    const { cwd, home } = project({
      'home/.claude/settings.json': { hooks: { PreToolUse: [group('a')], Stop: [] } },
      'repo/.claude/settings.json': { hooks: { PreToolUse: [group('a'), group('b')], SessionStart: [{ hooks: [{ type: 'command', command: 'c' }] }] } },
    });
    expect(loadConfig({ cwd, home, env: {} }).config.hooks).toEqual({
      PreToolUse: [group('a'), group('b')],
      Stop: [],
      SessionStart: [{ hooks: [{ type: 'command', command: 'c' }] }],
    });
  });

  it('deep-merges env and providers; arrays inside provider options replace', () => {
    const { cwd, home } = project({
      'home/.tessera/settings.json': { env: { A: '1', B: '1' }, providers: { main: { type: 'openai', model: 'm1', options: { tags: ['x'], keep: true } } } },
      'repo/.tessera/settings.json': { env: { B: '2' }, providers: { main: { model: 'm2', options: { tags: ['y'] } }, other: { type: 'anthropic' } } },
    });
    const { config } = loadConfig({ cwd, home, env: {} });
    expect(config.env).toEqual({ A: '1', B: '2' });
    expect(config.providers).toEqual({
      main: { type: 'openai', model: 'm2', options: { tags: ['y'], keep: true } },
      other: { type: 'anthropic' },
    });
  });

  it('keeps keys it does not use, reporting Claude Code settings as info', () => {
    const { cwd, home } = project({ 'repo/.claude/settings.json': { spinnerVerbs: ['Pondering'], includeCoAuthoredBy: false } });
    const { config, diagnostics } = loadConfig({ cwd, home, env: {} });
    expect((config as Record<string, unknown>).spinnerVerbs).toEqual(['Pondering']);
    expect(config.includeCoAuthoredBy).toBe(false);
    expect(diagnostics).toMatchObject([{ severity: 'info', path: 'spinnerVerbs', file: join(cwd, '.claude/settings.json') }]);
  });
});

describe('located errors', () => {
  it('gives file, line and column for invalid JSON and skips the layer', () => {
    const { cwd, home } = project({
      'repo/.claude/settings.json': '{\n\t"model": "x",\n\t"env": { "A": 1 }\n',
      'repo/.tessera/settings.json': '{\n  "model": "ok",\n  "language": "en",\n}\n',
    });
    const { config, diagnostics } = loadConfig({ cwd, home, env: {} });
    expect(config).toEqual({});
    expect(diagnostics).toMatchObject([
      { severity: 'error', file: join(cwd, '.tessera/settings.json'), line: 4, column: 1 },
      { severity: 'error', file: join(cwd, '.claude/settings.json'), line: 4, column: 1 },
    ]);
    expect(diagnostics[0]!.message).toContain('line 4, column 1');
  });

  it('gives file and JSON path for a wrong type, and drops only that value', () => {
    const { cwd, home } = project({
      'repo/.claude/settings.json': {
        model: 'kept',
        permissions: { defaultMode: 'sometimes', deny: ['Read(.env)'] },
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 1 }] }, { hooks: [{ type: 'command', command: 'ok' }] }] },
        providers: { bad: { type: 'x', timeout: 'soon' }, good: { type: 'y' } },
      },
    });
    const { config, diagnostics, layers } = loadConfig({ cwd, home, env: {} });
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([
      ['error', 'permissions.defaultMode'],
      ['error', 'hooks.PreToolUse[0].hooks[0].command'],
      ['error', 'providers.bad.timeout'],
    ]);
    expect(diagnostics.every((d) => d.file === join(cwd, '.claude/settings.json'))).toBe(true);
    expect(config).toEqual({
      model: 'kept',
      permissions: { deny: ['Read(.env)'] },
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'ok' }] }] },
      providers: { good: { type: 'y' } },
    });
    expect(layers.at(-2)!.failed).toBe(true);
  });
});

describe('a failing layer never drops deny rules', () => {
  it('recovers deny and ask rules from a file with broken JSON and reports both', () => {
    const { cwd, home } = project({
      'repo/.claude/settings.local.json': '{\n  "permissions": {\n    "allow": ["Bash"],\n    "deny": ["Bash(rm -rf *)", "Read(./.env)",],\n    "ask": ["WebFetch"]\n  },\n  "model": \n}',
    });
    const { config, diagnostics } = loadConfig({ cwd, home, env: {} });
    expect(config.permissions).toEqual({ deny: ['Bash(rm -rf *)', 'Read(./.env)'], ask: ['WebFetch'] });
    expect(config.model).toBeUndefined();
    expect(diagnostics.map((d) => d.severity)).toEqual(['error', 'warning']);
    expect(diagnostics[0]).toMatchObject({ line: 4 });
  });

  it('refuses to load when the deny rules of a broken file cannot be read', () => {
    const { cwd, home } = project({ 'repo/.claude/settings.json': '{ "permissions": { "deny": [ "Bash(rm *)" ' });
    expect(() => loadConfig({ cwd, home, env: {} })).toThrow(SettingsPolicyError);
    try {
      loadConfig({ cwd, home, env: {} });
    } catch (error) {
      expect((error as SettingsPolicyError).code).toBe('settings_policy_unreadable');
      expect((error as SettingsPolicyError).message).toContain(join(cwd, '.claude/settings.json'));
      expect((error as SettingsPolicyError).diagnostics[0]).toMatchObject({ severity: 'error', line: 1 });
    }
  });

  it('keeps the string rules of a deny list with a bad entry, and refuses a deny that is not a list', () => {
    const { cwd, home } = project({ 'repo/.claude/settings.json': { permissions: { deny: ['WebFetch', 42, 'Bash(curl *)'] } } });
    const loaded = loadConfig({ cwd, home, env: {} });
    expect(loaded.config.permissions?.deny).toEqual(['WebFetch', 'Bash(curl *)']);
    expect(loaded.diagnostics).toMatchObject([{ severity: 'error', path: 'permissions.deny[1]' }]);
    cleanup();
    const bad = project({ 'repo/.claude/settings.json': { permissions: { deny: { Bash: true } } } });
    expect(() => loadConfig({ cwd: bad.cwd, home: bad.home, env: {} })).toThrow(/permissions\.deny/);
  });

  it('drops a broken file without permission rules with just the located error', () => {
    const { cwd, home } = project({ 'repo/.claude/settings.json': '{ "model": "x" ', 'repo/.tessera/settings.json': { permissions: { deny: ['Edit'] } } });
    const { config, diagnostics } = loadConfig({ cwd, home, env: {} });
    expect(config).toEqual({ permissions: { deny: ['Edit'] } });
    expect(diagnostics).toMatchObject([{ severity: 'error', line: 1 }]);
  });
});
