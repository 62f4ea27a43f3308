import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readMarketplace } from './marketplace.js';
import { readPluginManifest } from './plugin-manifest.js';

// Claude Code's validator refuses a plugin name only when it has spaces (and asks for
// kebab-case); Tessera refuses what breaks an id and warns about the rest.
const dir = mkdtempSync(join(tmpdir(), 'tessera-plugin-leniency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
function plugin(manifest: object) {
  count += 1;
  const root = join(dir, `plugin-${count}`);
  mkdirSync(join(root, '.claude-plugin'), { recursive: true });
  writeFileSync(join(root, '.claude-plugin', 'plugin.json'), JSON.stringify(manifest));
  return readPluginManifest(root);
}
function marketplace(content: object) {
  count += 1;
  const file = join(dir, `market-${count}`, '.claude-plugin', 'marketplace.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(content));
  return readMarketplace(file);
}
const severities = (diagnostics: Array<{ severity: string; path?: string }>) => diagnostics.map((d) => [d.severity, d.path]);

describe('plugin.json names', () => {
  it.each(['RevenueCat', 'my_plugin', 'tools.v2'])('loads %s as written with a warning', (name) => {
    const { value, diagnostics } = plugin({ name });
    expect(value.name).toBe(name);
    expect(severities(diagnostics)).toEqual([['warning', 'name']]);
  });

  it.each(['My Plugin', 'a:b', 'a@b', 'a/b'])('refuses %j, which cannot be an id', (name) => {
    expect(severities(plugin({ name }).diagnostics)).toEqual([['error', 'name']]);
  });

  it('keeps unknown keys with a warning', () => {
    const { value, diagnostics } = plugin({ name: 'p', interface: { icon: 'x' } });
    expect((value.manifest as Record<string, unknown>).interface).toEqual({ icon: 'x' });
    expect(severities(diagnostics)).toEqual([['warning', 'interface']]);
  });
});

describe('marketplace.json names', () => {
  const owner = { name: 'Me' };

  it('loads a marketplace and entries whose names are not kebab-case, with warnings', () => {
    const { value, diagnostics } = marketplace({
      name: 'Team.Tools',
      owner,
      plugins: [{ name: 'RevenueCat', source: './plugins/rc' }, { name: 'fine', source: './plugins/fine' }],
    });
    expect(value.name).toBe('Team.Tools');
    expect(value.plugins.map((entry) => entry.name)).toEqual(['RevenueCat', 'fine']);
    expect(severities(diagnostics)).toEqual([['warning', 'name'], ['warning', 'plugins[0].name']]);
  });

  it('leaves out an entry whose name has a space, and keeps the rest', () => {
    const { value, diagnostics } = marketplace({
      name: 'm',
      owner,
      plugins: [{ name: 'my plugin', source: './a' }, { name: 'b', source: './b' }],
    });
    expect(value.plugins.map((entry) => entry.name)).toEqual(['b']);
    expect(severities(diagnostics)).toEqual([['error', 'plugins[0].name']]);
  });

  it('refuses a marketplace name Claude Code cannot install from, and warns about unknown keys', () => {
    expect(severities(marketplace({ name: 'my market', owner, plugins: [] }).diagnostics)).toEqual([['error', 'name']]);
    expect(severities(marketplace({ name: 'm', owner, plugins: [], homepage: 'x' }).diagnostics)).toEqual([['warning', 'homepage']]);
  });
});
