#!/usr/bin/env node
// bundle-plugins: load the 140 enabled plugins of a large local marketplace in a fresh process.
//
//   node test/bench/bundle-plugins.mjs [--quick]
//
// Build first: npm run build
//
// The 140 plugins are generated into a temp dir from the shapes of the real plugins in
// ../shared/compat/plugins (commands, skills with scripts, agents, hooks, .mcp.json, a
// manifest-less plugin…): plugin i is a copy of corpus plugin i mod N, renamed. A temp HOME
// records them as installed (installed_plugins.json) and enabled (~/.tessera/settings.json).
// Each sample is a fresh `node` child that imports the built package, builds a
// BundlePluginRegistry and awaits reload(): every manifest, command, skill, agent, hook file
// and MCP config read, validated and turned into contributions.
// Target: the load (after import) ≤ 300 ms cold; import time and process wall are reported.

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, environment, fmt, parseArgs, summarize, table, writeResults } from '../lib/common.mjs';

const args = parseArgs(process.argv.slice(2));
const quick = Boolean(args.quick);
const COUNT = 140;
const LIMIT_MS = 300;
const ENTRY = join(REPO_ROOT, 'plugins', 'bundle-plugins', 'dist', 'index.js');

// ------------------------------------------------------------------ child: one cold load
if (args.child) {
  const t0 = performance.now();
  const { BundlePluginRegistry, PluginPaths } = await import(pathToFileURL(ENTRY).href);
  const t1 = performance.now();
  const home = args.home;
  const registry = new BundlePluginRegistry({ home, cwd: join(home, 'project'), paths: PluginPaths.forHome(home) });
  const result = await registry.reload();
  const t2 = performance.now();
  const counts = { commands: 0, skills: 0, agents: 0, hooks: 0, mcp: 0 };
  for (const plugin of registry.plugins()) {
    counts.commands += plugin.commands.length;
    counts.skills += plugin.skills.length;
    counts.agents += plugin.agents.length;
    counts.hooks += plugin.hooks.length;
    counts.mcp += plugin.mcpServers.length;
  }
  process.stdout.write(JSON.stringify({ importMs: t1 - t0, loadMs: t2 - t1, loaded: result.loaded.length, failed: result.failed, counts }));
  process.exit(0);
}

// ------------------------------------------------------------------ parent
if (!existsSync(ENTRY)) {
  console.error(`bundle-plugins: ${ENTRY} is missing; run npm run build first`);
  process.exit(1);
}
const REAL = process.env.TESSERA_COMPAT_DIR ?? join(REPO_ROOT, '..', 'shared', 'compat');
const corpusRoot = join(REAL, 'plugins');

/** Plugin directories of the corpus (a folder with .claude-plugin/plugin.json or components). */
function corpusShapes() {
  if (!existsSync(corpusRoot)) return [];
  const shapes = [];
  for (const market of readdirSync(corpusRoot)) {
    const root = join(corpusRoot, market);
    if (existsSync(join(root, '.claude-plugin', 'plugin.json'))) shapes.push(root);
    for (const parent of ['plugins', 'external_plugins']) {
      const dir = join(root, parent);
      if (existsSync(dir)) for (const name of readdirSync(dir)) shapes.push(join(dir, name));
    }
  }
  return shapes.sort();
}

function syntheticShape(dir) {
  const files = {
    '.claude-plugin/plugin.json': JSON.stringify({ name: 'synthetic' }),
    'commands/run.md': '---\ndescription: Run it\nallowed-tools: Bash(git add:*), Read\n---\nRun $ARGUMENTS\n',
    'skills/check/SKILL.md': '---\nname: check\ndescription: Check things\n---\nCheck.\n',
    'agents/helper.md': '---\nname: helper\ndescription: Helps\nmodel: sonnet\n---\nHelp.\n',
    'hooks/hooks.json': JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'bash "${CLAUDE_PLUGIN_ROOT}/stop.sh"' }] }] } }),
    '.mcp.json': JSON.stringify({ svc: { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/server.js'] } }),
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function generate(home) {
  const shapes = corpusShapes();
  if (shapes.length === 0) console.warn(`bundle-plugins: ${corpusRoot} not found; generating synthetic plugins instead (numbers not comparable)`);
  const market = join(home, 'market');
  const installed = {};
  const enabled = {};
  const entries = [];
  for (let index = 0; index < COUNT; index += 1) {
    const name = `plugin-${String(index).padStart(3, '0')}`;
    const dir = join(market, 'plugins', name);
    if (shapes.length > 0) cpSync(shapes[index % shapes.length], dir, { recursive: true, filter: (source) => !source.endsWith('/.git') });
    else syntheticShape(dir);
    const manifest = join(dir, '.claude-plugin', 'plugin.json');
    if (existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ ...JSON.parse(readFileSync(manifest, 'utf8')), name }));
    entries.push({ name, source: `./plugins/${name}` });
    const id = `${name}@big-market`;
    const now = new Date().toISOString();
    installed[id] = [{ scope: 'user', installPath: dir, version: 'unknown', installedAt: now, lastUpdated: now, entry: { name, source: { source: 'relative', path: `./plugins/${name}`, resolvedPath: `./plugins/${name}` }, strict: true, fields: {} } }];
    enabled[id] = true;
  }
  mkdirSync(join(market, '.claude-plugin'), { recursive: true });
  writeFileSync(join(market, '.claude-plugin', 'marketplace.json'), JSON.stringify({ name: 'big-market', owner: { name: 'bench' }, plugins: entries }));
  const pluginsDir = join(home, '.tessera', 'plugins');
  mkdirSync(pluginsDir, { recursive: true });
  writeFileSync(join(pluginsDir, 'installed_plugins.json'), JSON.stringify({ version: 2, plugins: installed }));
  writeFileSync(join(pluginsDir, 'known_marketplaces.json'), JSON.stringify({ 'big-market': { source: { source: 'directory', path: market }, installLocation: market, lastUpdated: new Date().toISOString(), trusted: true } }));
  writeFileSync(join(home, '.tessera', 'settings.json'), JSON.stringify({ enabledPlugins: enabled }));
  mkdirSync(join(home, 'project'), { recursive: true });
  return shapes.length;
}

const home = mkdtempSync(join(tmpdir(), 'tessera-bench-bundle-'));
try {
  const shapes = generate(home);
  const runs = quick ? 3 : 15;
  const warmups = quick ? 1 : 2;
  const samples = [];
  for (let index = 0; index < warmups + runs; index += 1) {
    const started = process.hrtime.bigint();
    const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--child', '--home', home], { encoding: 'utf8' });
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    if (child.status !== 0) {
      console.error(child.stderr);
      throw new Error(`child exited with ${child.status}`);
    }
    const sample = { ...JSON.parse(child.stdout), wallMs };
    if (sample.loaded !== COUNT || sample.failed.length > 0) throw new Error(`expected ${COUNT} plugins loaded, got ${sample.loaded} (failed: ${JSON.stringify(sample.failed)})`);
    if (index >= warmups) samples.push(sample);
  }
  const load = summarize(samples.map((sample) => sample.loadMs));
  const imported = summarize(samples.map((sample) => sample.importMs));
  const wall = summarize(samples.map((sample) => sample.wallMs));
  console.log(`bundle-plugins: ${COUNT} plugins generated from ${shapes || 'synthetic'} corpus shapes; ${runs} cold runs`);
  console.log(`components: ${JSON.stringify(samples[0].counts)}`);
  console.log(
    table(
      ['measure', 'median', 'p25', 'p75', 'max'],
      [
        ['load 140 plugins (after import), ms', fmt(load.median), fmt(load.p25), fmt(load.p75), fmt(load.max)],
        ['module import, ms', fmt(imported.median), fmt(imported.p25), fmt(imported.p75), fmt(imported.max)],
        ['process wall, ms', fmt(wall.median), fmt(wall.p25), fmt(wall.p75), fmt(wall.max)],
      ],
    ),
  );
  const targets = [{ name: `load ${COUNT} local plugins, cold (after import), ms`, value: load.median, limit: LIMIT_MS, met: load.median <= LIMIT_MS }];
  for (const t of targets) console.log(`${t.met ? 'TARGET met   ' : 'TARGET MISSED'}  ${t.name}: ${fmt(t.value)} (target <= ${t.limit})`);
  const file = writeResults('bundle-plugins', { environment: environment(), quick, count: COUNT, shapes, counts: samples[0].counts, summary: { load, import: imported, wall }, samples, targets });
  console.log(`\nresults: ${file}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
