import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readMarketplace } from '@tessera/formats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeRealCorpus } from '../../../test/support/compat-corpus.js';
import { describeComponents } from './bundle-plugin-installer.js';
import { BundlePluginLoader } from './bundle-plugin-loader.js';
import { BundlePluginManager } from './bundle-plugin-manager.js';
import { sandbox } from './bundle-plugins.test-helper.js';

/** What each real plugin must show once installed (a component kind → a name it must list). */
const EXPECTED: Record<string, string[]> = {
  'commit-commands': ['commands:', 'commit-commands:clean_gone', 'commit-commands:commit-push-pr'],
  'ralph-loop': ['commands:', 'ralph-loop:ralph-loop', 'hooks: Stop'],
  hookify: ['agents: hookify:conversation-analyzer', 'commands:', 'hookify:hookify', 'skills: hookify:', 'hooks: PreToolUse, PostToolUse, Stop, UserPromptSubmit'],
  'example-plugin': ['commands: example-plugin:', 'skills: example-plugin:', 'MCP servers: '],
  'clangd-lsp': ['LSP servers (not started): clangd'],
  'math-olympiad': ['skills: math-olympiad:math-olympiad'],
  context7: ['MCP servers: context7'],
  github: ['MCP servers: github'],
  superpowers: ['skills:', 'superpowers:brainstorming', 'hooks: SessionStart'],
  'debugging-toolkit': ['agents:', 'debugging-toolkit:debugging-toolkit-debugger', 'commands:', 'debugging-toolkit:smart-debug'],
  'kubernetes-operations': ['skills: kubernetes-operations:'],
  'protect-mcp': ['hooks: '],
};

describeRealCorpus('every compat marketplace installs its local plugins', (corpus) => {
  const root = join(corpus.root, 'plugins');
  let box: ReturnType<typeof sandbox>;
  let manager: BundlePluginManager;
  const seen = new Set<string>();
  beforeAll(() => {
    box = sandbox('tessera-bundle-corpus-');
    manager = new BundlePluginManager({ home: box.home, cwd: box.cwd });
  });
  afterAll(() => {
    box.cleanup();
    // Every plugin of the corpus was installed by one of the marketplaces below.
    expect([...seen].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const folder of ['anthropics__claude-plugins-official', 'obra__superpowers', 'obra__superpowers-marketplace', 'wshobson__agents']) {
    it(folder, async () => {
      const dir = join(root, folder);
      const added = await manager.run(`marketplace add ${dir} --yes`);
      expect(added, added.message).toMatchObject({ success: true });
      const { value: catalogue } = readMarketplace(join(dir, '.claude-plugin', 'marketplace.json'));
      const local = catalogue.plugins.filter((entry) => entry.source.source === 'relative' && existsSync(entry.source.resolvedPath));
      for (const entry of local) {
        const id = `${entry.name}@${catalogue.name}`;
        const result = await manager.run(`install ${id} --yes`);
        expect(result, `${id}: ${result.message}`).toMatchObject({ success: true });
        const plugin = manager.registry.plugins().find((item) => item.id === id);
        expect(plugin, id).toBeDefined();
        const shown = describeComponents(plugin!).join('\n');
        for (const expected of EXPECTED[entry.name] ?? ['(unexpected plugin)']) expect(shown, id).toContain(expected);
        expect(plugin!.diagnostics.filter((diagnostic) => diagnostic.severity === 'error'), id).toEqual([]);
        seen.add(entry.name);
      }
      expect(manager.registry.lastReload().failed).toEqual([]);
      // A plugin folder its catalogue does not list (example-plugin) loads as a plugin directory.
      const listed = new Set(local.map((entry) => (entry.source as { resolvedPath: string }).resolvedPath));
      for (const parent of ['plugins', 'external_plugins'].map((name) => join(dir, name)).filter((path) => existsSync(path))) {
        for (const name of readdirSync(parent)) {
          if (listed.has(join(parent, name))) continue;
          const loaded = await new BundlePluginLoader().load(join(parent, name), { dataDir: join(box.root, 'data', name) });
          expect(loaded.ok, name).toBe(true);
          if (!loaded.ok) continue;
          const shown = describeComponents(loaded.plugin).join('\n');
          for (const expected of EXPECTED[name] ?? ['(unexpected plugin)']) expect(shown, name).toContain(expected);
          seen.add(name);
        }
      }
    });
  }
});
