import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BundlePluginManager } from './bundle-plugin-manager.js';
import { BundlePlugins, bundlePlugins } from './bundle-plugins-plugin.js';
import { sampleMarketplace, samplePlugin, sandbox, writeTree } from './bundle-plugins.test-helper.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => (box = sandbox()));
afterEach(() => box.cleanup());

describe('a damaged installed_plugins.json', () => {
  const file = () => join(box.home, '.tessera', 'plugins', 'installed_plugins.json');
  const write = (text: string) => {
    mkdirSync(join(box.home, '.tessera', 'plugins'), { recursive: true });
    writeFileSync(file(), text);
  };

  it('is an error naming the file, and the kernel still starts', async () => {
    write('{"version": 2, "plugins": {');
    const kernel = await createKernel({ plugins: testPreset({ plugins: [bundlePlugins({ home: box.home, cwd: box.cwd })] }) });
    const problems = kernel.get(BundlePlugins).registry.diagnostics();
    await kernel.shutdown();
    expect(problems).toEqual([expect.objectContaining({ severity: 'error', file: file(), message: expect.stringContaining('delete the file') })]);
  });

  it('keeps every readable record and skips the others with a located warning', async () => {
    sampleMarketplace(join(box.root, 'market'), 'mkt', { plain: { '.claude-plugin/plugin.json': { name: 'plain', version: '1.0.0' }, 'commands/hello.md': 'Say hello.' } });
    const manager = new BundlePluginManager({ home: box.home, cwd: box.cwd });
    await manager.run(`marketplace add ${join(box.root, 'market')} --yes`);
    expect((await manager.run('install plain@mkt')).success).toBe(true);
    const state = JSON.parse(readFileSync(file(), 'utf8'));
    state.plugins['x@m'] = [null];
    write(JSON.stringify(state));
    writeTree(box.home, { '.tessera/settings.json': { enabledPlugins: { 'plain@mkt': true, 'x@m': true } } });
    const result = await manager.registry.reload();
    expect(result.loaded).toEqual(['plain@mkt']);
    expect(result.diagnostics).toEqual(expect.arrayContaining([expect.objectContaining({ severity: 'warning', file: file(), path: 'plugins.x@m[0]' })]));
  });
});

describe('one plugin name loaded twice', () => {
  it('a --plugin-dir copy replaces the installed plugin of the same name for the session', async () => {
    sampleMarketplace(join(box.root, 'market'), 'mkt', { demo: samplePlugin('demo', { version: '1.0.0' }) });
    writeTree(join(box.root, 'dev', 'demo'), samplePlugin('demo', { version: '1.1.0-dev' }));
    const setup = new BundlePluginManager({ home: box.home, cwd: box.cwd });
    await setup.run(`marketplace add ${join(box.root, 'market')} --yes`);
    expect((await setup.run('install demo@mkt --yes')).success).toBe(true);
    const manager = new BundlePluginManager({ home: box.home, cwd: box.cwd, pluginDirs: [join(box.root, 'dev', 'demo')] });
    const result = await manager.registry.reload();
    expect(result.loaded).toEqual(['demo@inline']);
    expect(manager.registry.hookConfigs()).toHaveLength(1);
    expect(manager.registry.mcpServers().map((server) => server.name)).toEqual(['notes']);
    expect(manager.registry.skillEntries().map((entry) => entry.qualifiedName)).toEqual(['demo:review', 'demo:ship']);
    expect(result.diagnostics).toEqual(expect.arrayContaining([expect.objectContaining({ severity: 'info', message: expect.stringContaining('replaces the installed demo@mkt') })]));
  });
});
