import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BundlePluginLoader } from './bundle-plugin-loader.js';
import { BundlePluginRegistry } from './bundle-plugin-registry.js';
import { sandbox, samplePlugin, writeTree } from './bundle-plugins.test-helper.js';
import { PluginPaths } from './plugin-paths.js';
import { readPluginSettings } from './plugin-settings.js';

let box: ReturnType<typeof sandbox>;
const loader = new BundlePluginLoader();
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

async function load(files: Record<string, string | object>, options: Partial<Parameters<BundlePluginLoader['load']>[1]> = {}) {
  const dir = join(box.root, 'plugin');
  writeTree(dir, files);
  return loader.load(dir, { dataDir: join(box.home, 'data', 'p'), marketplace: 'm', ...options });
}

describe('BundlePluginLoader', () => {
  it('reads every component of a manifest plugin, namespaced and with the plugin variables expanded', async () => {
    const result = await load(samplePlugin('demo', { version: '1.2.0' }));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { plugin } = result;
    const root = join(box.root, 'plugin');
    const data = join(box.home, 'data', 'p');
    expect(plugin).toMatchObject({ id: 'demo@m', name: 'demo', version: '1.2.0', root, dataDir: data });
    expect(existsSync(data)).toBe(true);
    expect(plugin.commands).toEqual([expect.objectContaining({ id: 'ship', qualifiedName: 'demo:ship', source: 'plugin:demo', argumentHint: '[branch]', description: 'Ship it' })]);
    expect(plugin.skills).toEqual([expect.objectContaining({ id: 'review', qualifiedName: 'demo:review', source: 'plugin:demo' })]);
    expect(plugin.agents).toEqual([expect.objectContaining({ name: 'demo:helper', model: 'sonnet', source: 'plugin:demo', systemPrompt: `You help. Data is in ${data}.` })]);
    const command = plugin.hooks[0]!.config.PreToolUse![0]!.hooks[0]!;
    expect(command).toMatchObject({ type: 'command', command: `bash "${root}/hooks/check.sh" ${data}`, timeout: 10 });
    expect(plugin.hooks[0]!.source).toEqual({ file: join(root, 'hooks', 'hooks.json'), pluginRoot: root });
    expect(plugin.mcpServers).toEqual([{ name: 'notes', scope: 'plugin', plugin: 'demo', file: join(root, '.mcp.json'), spec: { type: 'stdio', command: `${root}/bin/notes`, args: ['--data', data], env: {} } }]);
  });

  it('loads a plugin without a manifest from the default layout, named after its directory or its marketplace entry', async () => {
    const result = await load({ 'commands/hello.md': 'Say hello.\n', 'SKILL.md': '---\ndescription: Only skill\n---\nBody\n' });
    expect(result.ok && result.plugin.name).toBe('plugin');
    expect(result.ok && result.plugin.skills.map((entry) => entry.qualifiedName)).toEqual(['plugin:plugin']);
    const named = await loader.load(join(box.root, 'plugin'), { dataDir: join(box.root, 'd'), marketplace: 'm', entry: { name: 'greeter', source: { source: 'relative', path: './x', resolvedPath: '' }, strict: true, fields: {} } });
    expect(named.ok && named.plugin.commands[0]!.qualifiedName).toBe('greeter:hello');
  });

  it('is lenient like Claude Code: unknown keys kept, dotted names accepted, a broken component skipped with its file', async () => {
    const result = await load({
      '.claude-plugin/plugin.json': { name: 'lenient', somethingNew: true },
      'agents/powershell-5.1-expert.md': '---\nname: powershell-5.1-expert\ndescription: PS\ncolor: blue\ninitialPrompt: hi\n---\nBody\n',
      'agents/broken.md': '---\ndescription: no name\n---\nBody\n',
      'commands/odd.md': '---\ndescription: Odd\nhide-from-slash-command-tool: "true"\nmystery: 3\n---\nBody\n',
      'hooks/hooks.json': '{ not json',
      '.mcp.json': { good: { command: 'node' }, bad: { type: 'carrier-pigeon' } },
      'output-styles/terse.md': '---\ndescription: Short answers\n---\nBe terse.\n',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { plugin } = result;
    expect(plugin.agents.map((agent) => agent.name)).toEqual(['lenient:powershell-5.1-expert']);
    expect(plugin.commands.map((entry) => entry.id)).toEqual(['odd']);
    expect(plugin.mcpServers.map((server) => server.name)).toEqual(['good']);
    expect(plugin.outputStyles).toEqual([expect.objectContaining({ name: 'terse', description: 'Short answers' })]);
    const errors = plugin.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    expect(errors.map((diagnostic) => diagnostic.file.split('/').slice(-2).join('/')).sort()).toEqual(['agents/broken.md', 'hooks/hooks.json', 'plugin/.mcp.json']);
    expect(plugin.diagnostics.some((diagnostic) => diagnostic.severity === 'warning' && diagnostic.path === 'somethingNew')).toBe(true);
  });

  it('refuses only a manifest Claude Code would refuse, and strict:false entries that clash with plugin.json', async () => {
    const broken = await load({ '.claude-plugin/plugin.json': { name: 'x', keywords: 'not-a-list' } });
    expect(broken).toMatchObject({ ok: false, error: expect.stringContaining('plugin.json') });
    writeTree(join(box.root, 'plugin'), { '.claude-plugin/plugin.json': { name: 'x', commands: './commands' } });
    const clash = await loader.load(join(box.root, 'plugin'), { dataDir: join(box.root, 'd'), entry: { name: 'x', source: { source: 'relative', path: './x', resolvedPath: '' }, strict: false, fields: {} } });
    expect(clash).toMatchObject({ ok: false, error: expect.stringContaining('strict') });
  });

  it('applies a strict:false marketplace entry: inline hooks and MCP servers, LSP servers listed', async () => {
    const dir = join(box.root, 'entry-only');
    writeTree(dir, { 'README.md': 'docs', 'extra/cmd.md': '---\ndescription: From the entry\n---\nx\n' });
    const result = await loader.load(dir, {
      dataDir: join(box.root, 'd'),
      marketplace: 'm',
      entry: {
        name: 'entry-only',
        source: { source: 'relative', path: './entry-only', resolvedPath: dir },
        strict: false,
        fields: {
          commands: ['./extra/cmd.md'],
          hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo ${CLAUDE_PLUGIN_ROOT}' }] }] },
          mcpServers: { api: { type: 'http', url: 'https://example.test/mcp' } },
          lspServers: { clangd: { command: 'clangd' } },
        },
      },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plugin.commands.map((entry) => entry.qualifiedName)).toEqual(['entry-only:cmd']);
    expect(result.plugin.hooks[0]!.config.Stop![0]!.hooks[0]).toMatchObject({ command: `echo ${dir}` });
    expect(result.plugin.mcpServers[0]).toMatchObject({ name: 'api', spec: { type: 'http', url: 'https://example.test/mcp' } });
    expect(result.plugin.lspServers).toEqual(['clangd']);
  });

  it('de-duplicates hooks/hooks.json named again in the manifest', async () => {
    const result = await load({ ...samplePlugin('dup'), '.claude-plugin/plugin.json': { name: 'dup', hooks: './hooks/hooks.json' } });
    expect(result.ok && result.plugin.hooks).toHaveLength(1);
  });
});

describe('BundlePluginRegistry names', () => {
  it('keeps the plain name when one plugin has it and only the qualified name when two do', async () => {
    writeTree(join(box.root, 'a'), { '.claude-plugin/plugin.json': { name: 'a' }, 'commands/build.md': 'A build', 'commands/only-a.md': 'only' });
    writeTree(join(box.root, 'b'), { '.claude-plugin/plugin.json': { name: 'b' }, 'commands/build.md': 'B build' });
    const registry = new BundlePluginRegistry({ home: box.home, cwd: box.cwd, paths: new PluginPaths(join(box.home, 'plugins')), pluginDirs: [join(box.root, 'a'), join(box.root, 'b')] });
    let changes = 0;
    registry.onChange(() => (changes += 1));
    await registry.reload();
    expect(changes).toBe(1);
    expect(registry.skillEntries().map((entry) => [entry.id, entry.qualifiedName])).toEqual([
      ['a:build', 'a:build'],
      ['only-a', 'a:only-a'],
      ['b:build', 'b:build'],
    ]);
  });
});

describe('plugin settings and setting sources', () => {
  it('settingSources limits which files enable plugins and declare marketplaces ([]: none)', () => {
    writeTree(box.home, { '.tessera/settings.json': { enabledPlugins: { 'mine@m': true } } });
    writeTree(box.cwd, {
      '.claude/settings.json': { enabledPlugins: { 'team@m': true }, extraKnownMarketplaces: { team: { source: { source: 'directory', path: '/x' } } } },
      '.claude/settings.local.json': { enabledPlugins: { 'local@m': true } },
    });
    const read = (settingSources?: Array<'user' | 'project' | 'local'>) => readPluginSettings({ home: box.home, cwd: box.cwd, ...(settingSources ? { settingSources } : {}) });
    expect(read().enabledPlugins).toEqual({ 'mine@m': true, 'team@m': true, 'local@m': true });
    expect(read(['user']).enabledPlugins).toEqual({ 'mine@m': true });
    expect(read(['user']).extraKnownMarketplaces).toEqual({});
    expect(read(['project', 'local']).enabledPlugins).toEqual({ 'team@m': true, 'local@m': true });
    expect(read(['project']).extraKnownMarketplaces).toHaveProperty('team');
    expect(read([]).enabledPlugins).toEqual({});
  });
});
