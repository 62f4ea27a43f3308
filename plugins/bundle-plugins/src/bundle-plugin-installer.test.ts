import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HookInventory, SkillActivator } from '@tessera/contracts';
import { createKernel, type Kernel } from '@tessera/kernel';
import { hooksPlugin } from '@tessera/plugin-hooks';
import { skills } from '@tessera/plugin-skills';
import { AgentDefinitions, subagents } from '@tessera/plugin-subagents';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BundlePluginManager } from './bundle-plugin-manager.js';
import { BundlePlugins, bundlePlugins } from './bundle-plugins-plugin.js';
import { sampleMarketplace, samplePlugin, sandbox, writeTree } from './bundle-plugins.test-helper.js';
import { runPluginCli } from './run-plugin-cli.js';

let box: ReturnType<typeof sandbox>;
let kernels: Kernel[] = [];
beforeEach(() => {
  box = sandbox();
  sampleMarketplace(join(box.root, 'market'), 'team-tools', { demo: samplePlugin('demo', { version: '1.0.0' }), plain: { 'commands/hello.md': 'Say hello.' } });
});
afterEach(async () => {
  for (const kernel of kernels) await kernel.shutdown();
  kernels = [];
  box.cleanup();
});

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const sink = { write: (text: string) => (out += text) };
  const code = await runPluginCli(argv, { stdout: sink, stderr: sink, cwd: box.cwd, env: { HOME: box.home } });
  return { code, out };
}

/** A fresh kernel, as the next session would get: skills, hooks, subagents and bundle plugins. */
async function nextSession() {
  const kernel = await createKernel({
    plugins: testPreset({ plugins: [skills({ home: box.home }), hooksPlugin(), subagents({ cwd: box.cwd, home: box.home, worktree: false }), bundlePlugins({ home: box.home, cwd: box.cwd })] }),
  });
  kernels.push(kernel);
  const skillList = await kernel.get(SkillActivator).list({ sessionId: 's', cwd: box.cwd });
  return {
    kernel,
    skills: skillList.filter((entry) => entry.source.startsWith('plugin:')).map((entry) => entry.qualifiedName),
    agents: kernel.get(AgentDefinitions).list().filter((agent) => agent.source.startsWith('plugin:')).map((agent) => agent.name),
    hooks: kernel.get(HookInventory).list().map((hook) => `${hook.event}:${hook.file}`),
    mcp: kernel.get(BundlePlugins).registry.mcpServers().map((server) => `${server.plugin}/${server.name}`),
  };
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('installing from a directory marketplace', () => {
  it('needs trust, then install / disable / enable / uninstall round-trip on disk and in the next session', async () => {
    expect((await cli('marketplace', 'add', join(box.root, 'market'))).code).toBe(1);
    expect((await cli('marketplace', 'add', join(box.root, 'market'), '--yes')).out).toContain('Added marketplace team-tools (2 plugins)');

    // Hooks and an MCP server: listed, and refused without consent.
    const refused = await cli('install', 'demo@team-tools');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('hook PreToolUse [Bash]');
    expect(refused.out).toContain('MCP server notes');

    const installed = await cli('install', 'demo@team-tools', '--yes');
    expect(installed.code, installed.out).toBe(0);
    expect(installed.out).toContain('commands: demo:ship');
    const pluginsDir = join(box.home, '.tessera', 'plugins');
    const installPath = join(pluginsDir, 'cache', 'team-tools', 'demo', '1.0.0');
    expect(existsSync(join(installPath, 'commands', 'ship.md'))).toBe(true);
    expect(readJson(join(pluginsDir, 'installed_plugins.json'))).toMatchObject({ version: 2, plugins: { 'demo@team-tools': [{ scope: 'user', installPath, version: '1.0.0' }] } });
    expect(readJson(join(box.home, '.tessera', 'settings.json')).enabledPlugins).toEqual({ 'demo@team-tools': true });
    expect(existsSync(join(pluginsDir, 'data', 'demo-team-tools'))).toBe(true);
    {
      // A plugin command's body names the plugin's own folders.
      const { kernel } = await nextSession();
      const session = kernel.createSession({ cwd: box.cwd });
      const activation = await kernel.get(SkillActivator).activate('demo:ship', 'main', { invocation: 'user-slash', sessionId: session.sessionId, cwd: box.cwd, services: session.services });
      expect(JSON.stringify(activation)).toContain(`Ship main with ${join(installPath, 'scripts', 'ship.sh')} (state in ${join(pluginsDir, 'data', 'demo-team-tools')})`);
    }

    const on = await nextSession();
    expect(on.skills).toEqual(['demo:review', 'demo:ship']);
    expect(on.agents).toEqual(['demo:helper']);
    expect(on.hooks).toEqual([`PreToolUse:${join(installPath, 'hooks', 'hooks.json')}`]);
    expect(on.mcp).toEqual(['demo/notes']);
    // Provenance: the contributions are the bundle-plugins plugin's.
    const described = on.kernel.describe().plugins.find((plugin) => plugin.name === 'bundle-plugins')!;
    expect(described.contributes).toEqual(expect.arrayContaining(['SkillSource', 'AgentDefinitionSource', 'HooksConfigSource', 'McpServerSource']));

    expect((await cli('disable', 'demo@team-tools')).code).toBe(0);
    expect(readJson(join(box.home, '.tessera', 'settings.json')).enabledPlugins).toEqual({ 'demo@team-tools': false });
    const off = await nextSession();
    expect([off.skills, off.agents, off.hooks, off.mcp]).toEqual([[], [], [], []]);

    expect((await cli('enable', 'demo@team-tools')).code).toBe(0);
    expect((await nextSession()).skills).toEqual(['demo:review', 'demo:ship']);

    expect((await cli('list')).out).toMatch(/demo@team-tools 1\.0\.0 — enabled \(user\)\n {2}commands: demo:ship/);
    expect((await cli('uninstall', 'demo@team-tools')).code).toBe(0);
    expect(existsSync(join(pluginsDir, 'cache', 'team-tools', 'demo'))).toBe(false);
    expect(existsSync(join(pluginsDir, 'data', 'demo-team-tools'))).toBe(false);
    expect(readJson(join(box.home, '.tessera', 'settings.json')).enabledPlugins).toBeUndefined();
    const gone = await nextSession();
    expect([gone.skills, gone.agents, gone.hooks, gone.mcp]).toEqual([[], [], [], []]);
  });

  it('writes enabledPlugins in the scope file Claude Code writes', async () => {
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    expect((await cli('install', 'plain@team-tools', '--scope', 'project')).code).toBe(0);
    expect(readJson(join(box.cwd, '.claude', 'settings.json')).enabledPlugins).toEqual({ 'plain@team-tools': true });
    expect((await cli('disable', 'plain@team-tools', '--scope', 'local')).code).toBe(0);
    expect(readJson(join(box.cwd, '.claude', 'settings.local.json')).enabledPlugins).toEqual({ 'plain@team-tools': false });
    // local beats project
    expect((await nextSession()).skills).toEqual([]);
    expect((await cli('enable', 'plain@team-tools', '--scope', 'local')).code).toBe(0);
    expect((await nextSession()).skills).toEqual(['plain:hello']);
  });

  it("a project's .claude/settings.json with extraKnownMarketplaces and enabledPlugins works unchanged", async () => {
    writeTree(box.cwd, {
      '.claude/settings.json': { enabledPlugins: { 'plain@team-tools': true }, extraKnownMarketplaces: { 'team-tools': { source: { source: 'directory', path: '../market' } } } },
    });
    expect((await cli('marketplace', 'list')).out).toContain('team-tools — ');
    expect((await cli('install', 'plain@team-tools')).code).toBe(1); // the declared marketplace is not trusted yet
    expect((await cli('install', 'plain@team-tools', '--yes', '--scope', 'project')).code).toBe(0);
    expect((await nextSession()).skills).toEqual(['plain:hello']);
  });

  it('leaves the previous version in place when a new install fails', async () => {
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    await cli('install', 'plain@team-tools');
    const installPath = join(box.home, '.tessera', 'plugins', 'cache', 'team-tools', 'plain', 'unknown');
    expect(existsSync(join(installPath, 'commands', 'hello.md'))).toBe(true);
    writeFileSync(join(box.root, 'market', 'plugins', 'plain', 'commands', 'hello.md'), 'Changed.');
    writeTree(join(box.root, 'market', 'plugins', 'plain'), { '.claude-plugin/plugin.json': '{ "name": ' });
    const failed = await cli('install', 'plain@team-tools');
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('cannot be loaded');
    expect(readFileSync(join(installPath, 'commands', 'hello.md'), 'utf8')).toBe('Say hello.');
    expect(existsSync(join(box.home, '.tessera', 'plugins', '.staging'))).toBe(true);
    expect((await nextSession()).skills).toEqual(['plain:hello']);
  });

  it('reload() reaches a running kernel: its hooks and agents follow /plugin changes', async () => {
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    const running = await nextSession();
    expect(running.hooks).toEqual([]);
    const manager = running.kernel.get(BundlePlugins);
    const result = await manager.run('install demo@team-tools --yes');
    expect(result.success, result.message).toBe(true);
    expect(running.kernel.get(HookInventory).list()).toHaveLength(1);
    expect(running.kernel.get(AgentDefinitions).get('demo:helper')).toBeDefined();
    await manager.run('disable demo@team-tools');
    expect(running.kernel.get(HookInventory).list()).toHaveLength(0);
    expect(running.kernel.get(AgentDefinitions).get('demo:helper')).toBeUndefined();
  });

  it('explains mistakes: a bad id, an unknown plugin, an unknown marketplace', async () => {
    expect((await cli('install', 'nonsense')).out).toContain('name@marketplace');
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    expect((await cli('install', 'dem@team-tools')).out).toContain('Did you mean demo?');
    expect((await cli('install', 'x@elsewhere')).out).toContain('No marketplace named "elsewhere"');
    expect((await cli('frobnicate')).out).toContain('Usage: plugin');
  });
});

describe('approving hooks and MCP servers', () => {
  const tool = (version: string, extra: Record<string, string | object> = {}) => ({ '.claude-plugin/plugin.json': { name: 'tool', version }, 'commands/hello.md': 'Say hello.', ...extra });
  const hook = { hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'sh "${CLAUDE_PLUGIN_ROOT}/start.sh"' }] }] } };

  it('asks again when an update brings hooks or MCP servers that were never approved, and records what was approved', async () => {
    const market = join(box.root, 'market');
    sampleMarketplace(market, 'mkt', { tool: tool('1.0.0') });
    await cli('marketplace', 'add', market, '--yes');
    expect((await cli('install', 'tool@mkt')).code).toBe(0);
    const file = join(box.home, '.tessera', 'plugins', 'installed_plugins.json');
    // Nothing ran code, so nothing was approved.
    expect(readJson(file).plugins['tool@mkt'][0].approvedAt).toBeUndefined();

    sampleMarketplace(market, 'mkt', { tool: tool('2.0.0', { 'hooks/hooks.json': hook }) });
    const refused = await cli('install', 'tool@mkt');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('hook SessionStart: command sh "${CLAUDE_PLUGIN_ROOT}/start.sh"');
    expect(readJson(file).plugins['tool@mkt'][0].version).toBe('1.0.0');
    expect((await cli('install', 'tool@mkt', '--yes')).code).toBe(0);
    expect(readJson(file).plugins['tool@mkt'][0]).toMatchObject({ version: '2.0.0', approved: ['hook SessionStart: command sh "${CLAUDE_PLUGIN_ROOT}/start.sh"'], approvedAt: expect.any(String) });

    // The same hooks in the next version need no new approval; an added MCP server does.
    sampleMarketplace(market, 'mkt', { tool: tool('2.1.0', { 'hooks/hooks.json': hook }) });
    expect((await cli('install', 'tool@mkt')).code).toBe(0);
    sampleMarketplace(market, 'mkt', { tool: tool('3.0.0', { 'hooks/hooks.json': hook, '.mcp.json': { mcpServers: { notes: { command: 'notes-server' } } } }) });
    const again = await cli('install', 'tool@mkt');
    expect(again.code).toBe(1);
    expect(again.out).toContain('MCP server notes: notes-server');
    expect(again.out).not.toContain('hook SessionStart');
    expect((await cli('install', 'tool@mkt', '--yes')).code).toBe(0);

    // The same server, now given a secret from the environment: asked again.
    sampleMarketplace(market, 'mkt', { tool: tool('3.1.0', { 'hooks/hooks.json': hook, '.mcp.json': { mcpServers: { notes: { command: 'notes-server', env: { TOKEN: '${GITHUB_TOKEN}' } } } } }) });
    const withEnv = await cli('install', 'tool@mkt');
    expect(withEnv.code).toBe(1);
    expect(withEnv.out).toContain('MCP server notes: notes-server {"env":{"TOKEN":');
  });

  it('enable stamps no approval when the installed copy cannot be loaded', async () => {
    sampleMarketplace(join(box.root, 'market'), 'mkt', { tool: tool('1.0.0') });
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    await cli('install', 'tool@mkt');
    const installPath = join(box.home, '.tessera', 'plugins', 'cache', 'mkt', 'tool', '1.0.0');
    writeFileSync(join(installPath, '.claude-plugin', 'plugin.json'), '{ "name": ');
    expect((await cli('enable', 'tool@mkt')).code).toBe(0);
    expect(readJson(join(box.home, '.tessera', 'plugins', 'installed_plugins.json')).plugins['tool@mkt'][0].approvedAt).toBeUndefined();
  });
});

describe('what an install may touch', () => {
  const cache = () => join(box.home, '.tessera', 'plugins', 'cache');

  it('keeps a plugin.json version of ".." inside its own folder', async () => {
    sampleMarketplace(join(box.root, 'dots'), 'dots', { bad: { '.claude-plugin/plugin.json': { name: 'bad', version: '..' }, 'commands/b.md': 'B.' } });
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    await cli('marketplace', 'add', join(box.root, 'dots'), '--yes');
    expect((await cli('install', 'plain@team-tools')).code).toBe(0);
    const result = await cli('install', 'bad@dots');
    expect(result.code, result.out).toBe(0);
    expect(existsSync(join(cache(), 'dots', 'bad', '_..', 'commands', 'b.md'))).toBe(true);
    expect(existsSync(join(cache(), 'team-tools', 'plain', 'unknown', 'commands', 'hello.md'))).toBe(true);
  });

  it('refuses a marketplace entry named "..", so uninstall cannot delete the whole cache', async () => {
    sampleMarketplace(join(box.root, 'dots'), 'dots', { dots: { 'commands/b.md': 'B.' } }, { dots: { name: '..' } });
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    await cli('marketplace', 'add', join(box.root, 'dots'), '--yes');
    expect((await cli('install', 'plain@team-tools')).code).toBe(0);
    const refused = await cli('install', '..@dots');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('cannot be a folder name');
    expect((await cli('uninstall', '..@dots')).code).toBe(1);
    expect(existsSync(join(cache(), 'team-tools', 'plain', 'unknown', 'commands', 'hello.md'))).toBe(true);
  });

  it('refuses a plugin folder that is a symlink out of the marketplace', async () => {
    writeTree(join(box.home, 'private'), { 'commands/secrets.md': '---\ndescription: hunter2\n---\nhunter2\n' });
    mkdirSync(join(box.root, 'market', 'plugins'), { recursive: true });
    symlinkSync(join(box.home, 'private'), join(box.root, 'market', 'plugins', 'evil'));
    writeTree(join(box.root, 'market'), { '.claude-plugin/marketplace.json': { name: 'team-tools', owner: { name: 'T' }, plugins: [{ name: 'evil', source: './plugins/evil' }] } });
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    const refused = await cli('install', 'evil@team-tools');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('leaves the marketplace through a symlink');
    expect(existsSync(join(cache(), 'team-tools', 'evil'))).toBe(false);
  });

  it('re-points an absolute symlink inside the plugin at the installed copy', async () => {
    symlinkSync(join(box.root, 'market', 'plugins', 'plain', 'commands', 'hello.md'), join(box.root, 'market', 'plugins', 'plain', 'commands', 'hi.md'));
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    expect((await cli('install', 'plain@team-tools')).code).toBe(0);
    const copy = join(cache(), 'team-tools', 'plain', 'unknown', 'commands');
    expect(readlinkSync(join(copy, 'hi.md'))).toBe('hello.md');
  });

  it('leaves no record behind when the scope settings file cannot be written', async () => {
    await cli('marketplace', 'add', join(box.root, 'market'), '--yes');
    writeTree(box.cwd, { '.claude/settings.json': '{ "permissions": { } ' });
    const failed = await cli('install', 'plain@team-tools', '--scope', 'project');
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('.claude/settings.json');
    const file = join(box.home, '.tessera', 'plugins', 'installed_plugins.json');
    expect(existsSync(file) ? readJson(file).plugins : {}).toEqual({});
    expect(existsSync(join(cache(), 'team-tools', 'plain'))).toBe(false);
  });

  it('uninstall --scope project removes this project\'s record, not another project\'s', async () => {
    const projectA = join(box.root, 'project-a');
    const projectB = join(box.root, 'project-b');
    mkdirSync(projectA);
    mkdirSync(projectB);
    const inA = new BundlePluginManager({ home: box.home, cwd: projectA });
    const inB = new BundlePluginManager({ home: box.home, cwd: projectB });
    await inA.run(`marketplace add ${join(box.root, 'market')} --yes`);
    expect((await inA.run('install plain@team-tools --scope project')).success).toBe(true);
    expect((await inB.run('install plain@team-tools --scope project')).success).toBe(true);
    expect((await inB.run('uninstall plain@team-tools --scope project')).success).toBe(true);
    const records = () => inA.installer.records('plain@team-tools').map((record) => record.projectPath);
    expect(records()).toEqual([projectA]);
    const again = await inB.run('uninstall plain@team-tools --scope project');
    expect(again.message).toContain(`project in ${projectA}`);
    expect(records()).toEqual([projectA]);
  });
});
