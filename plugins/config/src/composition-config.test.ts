import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKernel } from '@tessera/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { LoadedSettings, configPlugin } from './config-plugin.js';
import { tempTree } from './config.test-helper.js';
import { loadCompositionConfig } from './composition-config.js';

let cleanup = () => {};
afterEach(() => cleanup());
function dir(files: Record<string, string | object>) {
  const tree = tempTree({ 'package.json': { name: 'product' }, ...files });
  cleanup = tree.cleanup;
  return tree.root;
}

describe('loadCompositionConfig', () => {
  it('reads the tessera key of package.json', async () => {
    const root = dir({ 'package.json': { name: 'p', tessera: { preset: '@tessera/preset-cli', plugins: ['x', ['y', { a: 1 }]] } } });
    expect(await loadCompositionConfig(root)).toEqual({
      value: { preset: '@tessera/preset-cli', plugins: ['x', ['y', { a: 1 }]] },
      file: join(root, 'package.json'),
      diagnostics: [],
    });
  });

  it('reads .tesserarc.json and tessera.config.mjs', async () => {
    const rc = dir({ '.tesserarc.json': { preset: 'a' } });
    expect((await loadCompositionConfig(rc)).value).toEqual({ preset: 'a' });
    cleanup();
    const mjs = dir({ 'tessera.config.mjs': 'export default { preset: "b", exclude: ["prompt-history"] };' });
    const loaded = await loadCompositionConfig(mjs);
    expect(loaded.value).toEqual({ preset: 'b', exclude: ['prompt-history'] });
    expect(loaded.file).toBe(join(mjs, 'tessera.config.mjs'));
  });

  it('searches from a subdirectory up to the package root', async () => {
    const root = dir({ '.tesserarc.yaml': 'preset: c\n', 'src/deep/file.txt': '' });
    expect((await loadCompositionConfig(join(root, 'src/deep'))).value).toEqual({ preset: 'c' });
  });

  it('returns no value and no diagnostics when there is no composition config', async () => {
    expect(await loadCompositionConfig(dir({}))).toEqual({ value: undefined, diagnostics: [] });
  });

  it('reports schema errors with the file and JSON path (prefixed with tessera in package.json)', async () => {
    const root = dir({ 'package.json': { name: 'p', tessera: { preset: 3, plugins: [{}] } } });
    const { value, diagnostics } = await loadCompositionConfig(root);
    expect(value).toBeUndefined();
    expect(diagnostics.map((d) => [d.severity, d.path, d.file])).toEqual([
      ['error', 'tessera.preset', join(root, 'package.json')],
      ['error', 'tessera.plugins[0]', join(root, 'package.json')],
    ]);
  });

  it('warns about unknown keys and reports a broken file without throwing', async () => {
    const unknown = dir({ '.tesserarc.json': { preset: 'a', colour: 'red' } });
    expect((await loadCompositionConfig(unknown)).diagnostics).toMatchObject([{ severity: 'warning', path: 'colour' }]);
    cleanup();
    const broken = dir({ '.tesserarc.json': '{ "preset": ' });
    const result = await loadCompositionConfig(broken);
    expect(result.value).toBeUndefined();
    expect(result.diagnostics).toMatchObject([{ severity: 'error', file: join(broken, '.tesserarc.json') }]);
  });

  it('explains that tessera.config.ts needs renaming on Node 20', async () => {
    const root = dir({ 'tessera.config.ts': 'export default { preset: "a" };' });
    const { diagnostics } = await loadCompositionConfig(root);
    expect(diagnostics).toMatchObject([{ severity: 'error', file: join(root, 'tessera.config.ts') }]);
    expect(diagnostics[0]!.message).toContain('tessera.config.mjs');
  });
});

describe('configPlugin', () => {
  it('provides LoadedSettings, loaded on first use', async () => {
    const root = dir({ 'repo/.tessera/settings.json': { model: 'm' } });
    const kernel = await createKernel({ plugins: [configPlugin({ cwd: join(root, 'repo'), home: join(root, 'home'), env: {} })] });
    expect(kernel.get(LoadedSettings).config).toEqual({ model: 'm' });
    await kernel.shutdown();
  });

  it('reads no file and no environment when made; each kernel loads its own settings on first use', async () => {
    const root = dir({});
    const env: Record<string, string | undefined> = {};
    const plugin = configPlugin({ cwd: join(root, 'repo'), home: join(root, 'home'), env });
    // Written after the plugin was made: what a kernel loads is what is there at first use.
    mkdirSync(join(root, 'repo', '.tessera'), { recursive: true });
    writeFileSync(join(root, 'repo', '.tessera', 'settings.json'), JSON.stringify({ currentProvider: 'p', providers: { p: { type: 'openai', model: 'x', apiKey: '$ENV:LATE_KEY' } } }));
    env.LATE_KEY = 'sk-late';

    const first = await createKernel({ plugins: [plugin] });
    const loaded = first.get(LoadedSettings);
    expect(loaded.provider?.profile.apiKey).toBe('sk-late');
    expect(first.get(LoadedSettings)).toBe(loaded);
    await first.shutdown();

    writeFileSync(join(root, 'repo', '.tessera', 'settings.json'), JSON.stringify({ model: 'second' }));
    const second = await createKernel({ plugins: [plugin] });
    expect(second.get(LoadedSettings)).not.toBe(loaded);
    expect(second.get(LoadedSettings).config).toEqual({ model: 'second' });
    await second.shutdown();
  });

  it('checks options when the plugin is made', () => {
    expect(() => configPlugin({} as never)).toThrow(/cwd/);
    expect(() => configPlugin({ cwd: '/x', home: '' })).toThrow(/home/);
    expect(() => configPlugin({ cwd: '/x', env: 'no' as never })).toThrow(/env/);
  });
});
