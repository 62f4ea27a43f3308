import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempTree } from './config.test-helper.js';
import { configPlugin } from './config-plugin.js';
import { loadConfig } from './load-config.js';

let cleanup = () => {};
afterEach(() => cleanup());
function project(files: Record<string, string | object>) {
  const tree = tempTree(files);
  cleanup = tree.cleanup;
  return { cwd: join(tree.root, 'repo'), home: join(tree.root, 'home') };
}

const sixLayers = {
  'home/.tessera/settings.json': { model: 'a', permissions: { deny: ['user-deny'] } },
  'home/.claude/settings.json': { model: 'b' },
  'repo/.tessera/settings.json': { model: 'c', permissions: { deny: ['project-deny'] } },
  'repo/.tessera/settings.local.json': { model: 'd' },
  'repo/.claude/settings.json': { model: 'e' },
  'repo/.claude/settings.local.json': { model: 'f', permissions: { deny: ['local-deny'] } },
  'repo/cli.json': { model: 'g' },
};

describe('loadConfig scopes', () => {
  it('reads only the files of the scopes named, in precedence order', () => {
    const { cwd, home } = project(sixLayers);
    const userOnly = loadConfig({ cwd, home, env: {}, scopes: ['user'] });
    expect(userOnly.layers.map((layer) => [layer.scope, layer.file])).toEqual([
      ['user', join(home, '.tessera', 'settings.json')],
      ['user', join(home, '.claude', 'settings.json')],
    ]);
    expect(userOnly.config.model).toBe('b');
    expect(userOnly.config.permissions?.deny).toEqual(['user-deny']);

    const projectAndLocal = loadConfig({ cwd, home, env: {}, scopes: ['project', 'local'] });
    expect(projectAndLocal.layers.map((layer) => layer.scope)).toEqual(['project', 'local', 'project', 'local']);
    expect(projectAndLocal.config.model).toBe('f');
    expect(projectAndLocal.config.permissions?.deny).toEqual(['project-deny', 'local-deny']);
  });

  it("reads the settingsFile only when 'cli' is named, and reports it missing then", () => {
    const { cwd, home } = project(sixLayers);
    const withCli = loadConfig({ cwd, home, env: {}, settingsFile: 'cli.json', scopes: ['project', 'cli'] });
    expect(withCli.layers.map((layer) => layer.scope)).toEqual(['project', 'project', 'cli']);
    expect(withCli.config.model).toBe('g');
    const withoutCli = loadConfig({ cwd, home, env: {}, settingsFile: 'cli.json', scopes: ['project'] });
    expect(withoutCli.layers.map((layer) => layer.scope)).toEqual(['project', 'project']);
    expect(withoutCli.config.model).toBe('e');
    const missing = loadConfig({ cwd, home, env: {}, settingsFile: 'nope.json', scopes: ['cli'] });
    expect(missing.diagnostics).toMatchObject([{ severity: 'error', file: join(cwd, 'nope.json') }]);
  });

  it('reads nothing with [] and every scope when left out', () => {
    const { cwd, home } = project(sixLayers);
    const none = loadConfig({ cwd, home, env: {}, settingsFile: 'cli.json', scopes: [] });
    expect(none.layers).toEqual([]);
    expect(none.config).toEqual({});
    const all = loadConfig({ cwd, home, env: {}, settingsFile: 'cli.json' });
    expect(all.layers.map((layer) => layer.scope)).toEqual(['user', 'user', 'project', 'local', 'project', 'local', 'cli']);
  });

  it('does not open a file of a scope left out, so a broken one cannot stop the load', () => {
    // Unrecoverable deny rules would throw SettingsPolicyError if the file were read.
    const { cwd, home } = project({ 'repo/.claude/settings.json': '{ "permissions": { "deny": 42 ', 'home/.claude/settings.json': { model: 'u' } });
    expect(() => loadConfig({ cwd, home, env: {} })).toThrow();
    expect(loadConfig({ cwd, home, env: {}, scopes: ['user'] }).config.model).toBe('u');
  });

  it('reads a file that is both a user and a project path once, as the first scope named', () => {
    const { home } = project({ 'home/.claude/settings.json': { model: 'shared' } });
    expect(loadConfig({ cwd: home, home, env: {} }).layers.filter((layer) => layer.exists).map((layer) => layer.scope)).toEqual(['user']);
    expect(loadConfig({ cwd: home, home, env: {}, scopes: ['project'] }).layers.filter((layer) => layer.exists).map((layer) => layer.scope)).toEqual(['project']);
  });

  it('is checked by configPlugin', () => {
    expect(() => configPlugin({ cwd: '/x', scopes: ['user', 'team' as never] })).toThrow(/scopes/);
    expect(() => configPlugin({ cwd: '/x', scopes: ['user', 'cli'] })).not.toThrow();
  });
});
