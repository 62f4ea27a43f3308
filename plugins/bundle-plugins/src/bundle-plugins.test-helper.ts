import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Writes `files` (relative path → content; objects become JSON) under `root`. */
export function writeTree(root: string, files: Record<string, string | object>): void {
  for (const [relative, content] of Object.entries(files)) {
    const path = join(root, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
}

/** A temp directory (real path) with `home/` and `project/` inside; `cleanup()` removes it. */
export function sandbox(prefix = 'tessera-bundle-'): { root: string; home: string; cwd: string; cleanup: () => void } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const home = join(root, 'home');
  const cwd = join(root, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { root, home, cwd, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A plugin with a command, a skill, an agent, a hook and an MCP server. */
export function samplePlugin(name: string, options: { version?: string; extra?: Record<string, string | object> } = {}): Record<string, string | object> {
  return {
    '.claude-plugin/plugin.json': { name, ...(options.version ? { version: options.version } : {}), description: `${name} plugin` },
    'commands/ship.md': '---\ndescription: Ship it\nargument-hint: [branch]\n---\nShip $ARGUMENTS with ${CLAUDE_PLUGIN_ROOT}/scripts/ship.sh (state in ${CLAUDE_PLUGIN_DATA})\n',
    'skills/review/SKILL.md': '---\nname: review\ndescription: Review the diff\n---\nReview carefully.\n',
    'agents/helper.md': '---\nname: helper\ndescription: Helps\nmodel: sonnet\n---\nYou help. Data is in ${CLAUDE_PLUGIN_DATA}.\n',
    'hooks/hooks.json': { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'bash "${CLAUDE_PLUGIN_ROOT}/hooks/check.sh" ${CLAUDE_PLUGIN_DATA}', timeout: 10 }] }] } },
    'hooks/check.sh': '#!/bin/sh\nexit 0\n',
    '.mcp.json': { notes: { command: '${CLAUDE_PLUGIN_ROOT}/bin/notes', args: ['--data', '${CLAUDE_PLUGIN_DATA}'] } },
    ...(options.extra ?? {}),
  };
}

/** A marketplace directory listing `plugins` (each under `plugins/<name>`). */
export function sampleMarketplace(root: string, name: string, plugins: Record<string, Record<string, string | object>>, entries: Record<string, object> = {}): void {
  const files: Record<string, string | object> = {
    '.claude-plugin/marketplace.json': {
      name,
      owner: { name: 'Test' },
      plugins: Object.keys(plugins).map((plugin) => ({ name: plugin, source: `./plugins/${plugin}`, ...(entries[plugin] ?? {}) })),
    },
  };
  for (const [plugin, tree] of Object.entries(plugins)) for (const [path, content] of Object.entries(tree)) files[`plugins/${plugin}/${path}`] = content;
  writeTree(root, files);
}
