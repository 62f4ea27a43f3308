import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempTree } from './corpus.test-helper.js';
import { readMarketplace } from './marketplace.js';
import { readMcpConfig } from './mcp-config.js';
import { readPluginManifest } from './plugin-manifest.js';

let cleanup = () => {};
afterEach(() => cleanup());
function tree(files: Record<string, string>) {
  const created = tempTree(files);
  cleanup = created.cleanup;
  return created.root;
}
const SKILL = '---\ndescription: d\n---\nx';

describe('readPluginManifest', () => {
  it('discovers the default layout without a manifest, named after the directory', () => {
    const root = tree({
      'p/skills/a/SKILL.md': SKILL,
      'p/skills/notes/readme.md': 'not a skill',
      'p/commands/run.md': 'x',
      'p/commands/sub/deep.md': 'x',
      'p/agents/helper.md': 'x',
      'p/hooks/hooks.json': '{"hooks":{}}',
      'p/.mcp.json': '{"srv":{"command":"${CLAUDE_PLUGIN_ROOT}/bin/srv","args":["--data","${CLAUDE_PLUGIN_DATA}"]}}',
    });
    const plugin = join(root, 'p');
    const { value, diagnostics } = readPluginManifest(plugin, { pluginData: '/data/p' });
    expect(diagnostics).toEqual([]);
    expect(value.name).toBe('p');
    expect(value.manifest).toBeUndefined();
    expect(value.components).toEqual({
      skills: [join(plugin, 'skills/a/SKILL.md')],
      commands: [join(plugin, 'commands/run.md'), join(plugin, 'commands/sub/deep.md')],
      agents: [join(plugin, 'agents/helper.md')],
      hooks: [{ kind: 'file', file: join(plugin, 'hooks/hooks.json') }],
      mcpServers: { srv: { type: 'stdio', command: `${plugin}/bin/srv`, args: ['--data', '/data/p'], env: {} } },
    });
  });

  it('adds manifest skills, replaces commands/agents, and de-duplicates hooks.json by path', () => {
    const root = tree({
      'p/.claude-plugin/plugin.json': JSON.stringify({
        name: 'my-plugin',
        skills: './extra-skills',
        commands: ['./cmds/', './more/one.md'],
        agents: './team',
        hooks: ['./hooks/hooks.json', './hooks/../hooks/extra.json', { PreToolUse: [] }],
        mcpServers: { inline: { type: 'http', url: '${CLAUDE_PLUGIN_ROOT}/u' } },
        futureKey: 1,
      }),
      'p/skills/a/SKILL.md': SKILL,
      'p/extra-skills/b/SKILL.md': SKILL,
      'p/commands/ignored.md': 'x',
      'p/cmds/c.md': 'x',
      'p/more/one.md': 'x',
      'p/agents/ignored.md': 'x',
      'p/team/t.md': 'x',
      'p/hooks/hooks.json': '{}',
      'p/hooks/extra.json': '{}',
    });
    const plugin = join(root, 'p');
    const { value, diagnostics } = readPluginManifest(plugin);
    expect(value.name).toBe('my-plugin');
    expect(value.components.skills).toEqual([join(plugin, 'skills/a/SKILL.md'), join(plugin, 'extra-skills/b/SKILL.md')]);
    expect(value.components.commands).toEqual([join(plugin, 'cmds/c.md'), join(plugin, 'more/one.md')]);
    expect(value.components.agents).toEqual([join(plugin, 'team/t.md')]);
    expect(value.components.hooks).toEqual([
      { kind: 'file', file: join(plugin, 'hooks/hooks.json') },
      { kind: 'file', file: join(plugin, 'hooks/extra.json') },
      { kind: 'inline', file: join(plugin, '.claude-plugin/plugin.json'), value: { PreToolUse: [] } },
    ]);
    expect(value.components.mcpServers).toEqual({ inline: { type: 'http', url: `${plugin}/u`, headers: {} } });
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([
      ['warning', 'futureKey'],
      ['warning', 'hooks'],
    ]);
  });

  it('rejects paths that escape the plugin or are absolute', () => {
    const root = tree({ 'p/.claude-plugin/plugin.json': JSON.stringify({ name: 'p', commands: ['../outside', '/etc'] }) });
    const { value, diagnostics } = readPluginManifest(join(root, 'p'));
    expect(value.components.commands).toEqual([]);
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([['error', 'commands[0]'], ['error', 'commands[1]']]);
  });

  it('reports a wrong-typed known field and a non-kebab name, with the JSON path', () => {
    const root = tree({ 'p/.claude-plugin/plugin.json': '{"name":"p","keywords":"a,b"}', 'q/.claude-plugin/plugin.json': '{"name":"My Plugin"}' });
    expect(readPluginManifest(join(root, 'p')).diagnostics).toMatchObject([{ severity: 'error', path: 'keywords' }]);
    expect(readPluginManifest(join(root, 'q')).diagnostics).toMatchObject([{ severity: 'error', path: 'name' }]);
  });

  it('locates invalid JSON in the manifest', () => {
    const root = tree({ 'p/.claude-plugin/plugin.json': '{\n  "name": "p",\n}' });
    expect(readPluginManifest(join(root, 'p')).diagnostics).toMatchObject([{ severity: 'error', line: 3, column: 1 }]);
  });

  it('treats a root SKILL.md as a single-skill plugin', () => {
    const root = tree({ 'p/SKILL.md': SKILL });
    expect(readPluginManifest(join(root, 'p')).value.components.skills).toEqual([join(root, 'p', 'SKILL.md')]);
  });
});

describe('readMcpConfig', () => {
  it('reads both shapes and stdio/http/sse entries', () => {
    const root = tree({
      'wrapped.json': JSON.stringify({ mcpServers: { a: { command: 'npx', args: ['x'], env: { K: '${K:-}' } }, b: { type: 'sse', url: 'https://s' } } }),
      'bare.json': JSON.stringify({ c: { type: 'http', url: 'https://h', headers: { Authorization: 'Bearer ${T}' } } }),
    });
    const wrapped = readMcpConfig(join(root, 'wrapped.json'));
    expect(wrapped).toEqual({
      value: {
        wrapped: true,
        servers: {
          a: { type: 'stdio', command: 'npx', args: ['x'], env: { K: '${K:-}' } },
          b: { type: 'sse', url: 'https://s', headers: {} },
        },
      },
      diagnostics: [],
    });
    const bare = readMcpConfig(join(root, 'bare.json'));
    expect(bare.value).toEqual({ wrapped: false, servers: { c: { type: 'http', url: 'https://h', headers: { Authorization: 'Bearer ${T}' } } } });
  });

  it('reports a bad entry by path and keeps the others', () => {
    const root = tree({ 'm.json': JSON.stringify({ mcpServers: { ok: { command: 'x' }, bad: { type: 'http' }, odd: { type: 'pipe', command: 'x' } } }) });
    const { value, diagnostics } = readMcpConfig(join(root, 'm.json'));
    expect(Object.keys(value.servers)).toEqual(['ok']);
    expect(diagnostics.map((d) => d.path)).toEqual(['mcpServers.bad.url', 'mcpServers.odd.type']);
  });
});

describe('readMarketplace', () => {
  const catalogue = {
    name: 'my-market',
    owner: { name: 'Me' },
    metadata: { description: 'desc', version: '1.0.0' },
    plugins: [
      { name: 'local', source: './plugins/local', category: 'dev' },
      { name: 'gh', source: { source: 'github', repo: 'o/r', ref: 'main' } },
      { name: 'git', source: { source: 'url', url: 'https://x/y.git', sha: 'a'.repeat(40) } },
      { name: 'sub', source: { source: 'git-subdir', url: 'o/r', path: 'p' }, strict: false, skills: ['./s'] },
      { name: 'escape', source: '../../etc' },
      { name: 'bad', source: { source: 'github', repo: 'no-slash' } },
      { name: 'local', source: './again' },
    ],
  };

  it('normalises sources, keeps strict:false inline entries, and reports bad entries by index', () => {
    const root = tree({ 'm/.claude-plugin/marketplace.json': JSON.stringify(catalogue) });
    const { value, diagnostics } = readMarketplace(join(root, 'm/.claude-plugin/marketplace.json'));
    expect(value).toMatchObject({ name: 'my-market', owner: { name: 'Me' }, description: 'desc', version: '1.0.0', root: join(root, 'm') });
    expect(value.plugins.map((p) => [p.name, p.source, p.strict])).toEqual([
      ['local', { source: 'relative', path: './plugins/local', resolvedPath: join(root, 'm/plugins/local') }, true],
      ['gh', { source: 'github', repo: 'o/r', ref: 'main' }, true],
      ['git', { source: 'url', url: 'https://x/y.git', sha: 'a'.repeat(40) }, true],
      ['sub', { source: 'git-subdir', url: 'o/r', path: 'p' }, false],
    ]);
    expect(value.plugins[0]!.fields).toEqual({ category: 'dev' });
    expect(value.plugins[3]!.fields).toEqual({ skills: ['./s'] });
    expect(diagnostics.map((d) => [d.severity, d.path])).toEqual([
      ['error', 'plugins[4].source'],
      ['error', 'plugins[5].source.repo'],
      ['warning', 'plugins[6].name'],
    ]);
  });

  it('reports a missing owner as a located schema error', () => {
    const root = tree({ 'm.json': '{"name":"m","plugins":[]}' });
    expect(readMarketplace(join(root, 'm.json')).diagnostics).toMatchObject([{ severity: 'error', path: 'owner' }]);
  });
});
