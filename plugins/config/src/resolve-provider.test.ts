import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempTree } from './config.test-helper.js';
import { loadConfig } from './load-config.js';

let cleanup = () => {};
afterEach(() => cleanup());
function project(files: Record<string, object>) {
  const tree = tempTree(files);
  cleanup = tree.cleanup;
  return { cwd: join(tree.root, 'repo'), home: join(tree.root, 'home') };
}

describe('provider profiles', () => {
  it('resolves currentProvider with $ENV substitution after merging', () => {
    const { cwd, home } = project({
      'home/.tessera/settings.json': { providers: { work: { type: 'openai', apiKey: '$ENV:WORK_KEY', baseURL: 'https://x', options: { org: '$ENV:ORG' } } } },
      'repo/.tessera/settings.json': { currentProvider: 'work', providers: { work: { model: 'gpt-4o', timeout: 30000 } } },
    });
    const { provider, config, diagnostics } = loadConfig({ cwd, home, env: { WORK_KEY: 'sk-1', ORG: 'o' } });
    expect(diagnostics).toEqual([]);
    expect(provider).toEqual({
      key: 'work',
      profile: { type: 'openai', model: 'gpt-4o', apiKey: 'sk-1', baseURL: 'https://x', timeout: 30000, options: { org: 'o' } },
      files: [join(cwd, '.tessera/settings.json'), join(home, '.tessera/settings.json')],
    });
    expect(config.providers?.work?.apiKey).toBe('sk-1');
  });

  it('reports an unset $ENV variable naming the variable and the file, and leaves the key out', () => {
    const { cwd, home } = project({ 'repo/.claude/settings.json': { currentProvider: 'a', providers: { a: { type: 'anthropic', apiKey: '$ENV:MISSING_KEY' }, b: { type: 'x', apiKey: '$ENV:ALSO_MISSING' } } } });
    const { provider, diagnostics, config } = loadConfig({ cwd, home, env: {} });
    expect(provider?.profile).toEqual({ type: 'anthropic' });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ severity: 'error', file: join(cwd, '.claude/settings.json'), path: 'providers.a.apiKey' });
    expect(diagnostics[0]!.message).toContain('MISSING_KEY');
    expect(config.providers?.b).toEqual({ type: 'x' });
  });

  it('leaves literal keys and non-$ENV strings alone', () => {
    const { cwd, home } = project({ 'repo/.tessera/settings.json': { currentProvider: 'local', providers: { local: { type: 'gemma', apiKey: 'lm-studio', model: '$ENVIRONMENT' } } } });
    expect(loadConfig({ cwd, home, env: {} }).provider?.profile).toEqual({ type: 'gemma', apiKey: 'lm-studio', model: '$ENVIRONMENT' });
  });

  it('reports a currentProvider without a profile, naming the file that selects it', () => {
    const { cwd, home } = project({
      'home/.tessera/settings.json': { providers: { a: { type: 'openai' } } },
      'repo/.claude/settings.local.json': { currentProvider: 'b' },
    });
    const { provider, diagnostics } = loadConfig({ cwd, home, env: {} });
    expect(provider).toBeUndefined();
    expect(diagnostics).toMatchObject([{ severity: 'error', path: 'currentProvider', file: join(cwd, '.claude/settings.local.json') }]);
    expect(diagnostics[0]!.message).toContain('profiles: a');
  });

  it('reports a profile without type, naming the file that defines it', () => {
    const { cwd, home } = project({ 'repo/.tessera/settings.json': { currentProvider: 'a', providers: { a: { model: 'm' } } } });
    const { provider, diagnostics } = loadConfig({ cwd, home, env: {} });
    expect(provider).toBeUndefined();
    expect(diagnostics).toMatchObject([{ severity: 'error', path: 'providers.a.type', file: join(cwd, '.tessera/settings.json') }]);
  });

  it('accepts the legacy provider block, but never over an explicit currentProvider', () => {
    const legacy = project({ 'repo/.tessera/settings.json': { provider: { name: 'anthropic', model: 'claude', apiKey: '$ENV:K' } } });
    expect(loadConfig({ cwd: legacy.cwd, home: legacy.home, env: { K: 'v' } }).provider).toMatchObject({
      key: 'provider',
      profile: { type: 'anthropic', model: 'claude', apiKey: 'v' },
    });
    cleanup();
    const both = project({ 'repo/.tessera/settings.json': { provider: { name: 'anthropic' }, currentProvider: 'p', providers: { p: { type: 'openai' } } } });
    expect(loadConfig({ cwd: both.cwd, home: both.home, env: {} }).provider).toMatchObject({ key: 'p', profile: { type: 'openai' } });
  });

  it('has no provider when none is configured', () => {
    const { cwd, home } = project({});
    const loaded = loadConfig({ cwd, home, env: {} });
    expect(loaded.provider).toBeUndefined();
    expect(loaded.diagnostics).toEqual([]);
  });
});
