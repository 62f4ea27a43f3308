import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// `tessera plugin …` and bundle plugins in a run, through the built bin.
const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tessera.js');
let home: string;
let workspace: string;
let marketplace: string;

function run(argv: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...argv], {
    cwd: workspace,
    env: { PATH: process.env.PATH, HOME: home, TESSERA_SESSION_LOG: '0' },
    input: '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'tessera-plugins-home-'));
  workspace = mkdtempSync(join(tmpdir(), 'tessera-plugins-ws-'));
  marketplace = mkdtempSync(join(tmpdir(), 'tessera-plugins-mkt-'));
  write(join(marketplace, '.claude-plugin', 'marketplace.json'), JSON.stringify({ name: 'local-tools', owner: { name: 'Test' }, plugins: [{ name: 'greeter', source: './plugins/greeter', description: 'Says hello' }] }));
  const plugin = join(marketplace, 'plugins', 'greeter');
  write(join(plugin, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'greeter', version: '1.0.0', description: 'Says hello' }));
  write(join(plugin, 'commands', 'hello.md'), '---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS.\n');
  write(join(plugin, 'agents', 'welcomer.md'), '---\nname: welcomer\ndescription: Welcomes people\n---\nYou welcome people.\n');
});

afterEach(() => {
  for (const dir of [home, workspace, marketplace]) rmSync(dir, { recursive: true, force: true });
});

describe('tessera plugin', () => {
  it('adds a marketplace, installs, lists, disables and uninstalls; a run sees the plugin while enabled', async () => {
    const refused = run(['plugin', 'marketplace', 'add', marketplace]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--yes/);

    expect(run(['plugin', 'marketplace', 'add', marketplace, '--yes']).code).toBe(0);
    const installed = run(['plugin', 'install', 'greeter@local-tools', '--yes']);
    expect(installed.code, installed.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(home, '.tessera', 'settings.json'), 'utf8'));
    expect(settings.enabledPlugins).toEqual({ 'greeter@local-tools': true });
    expect(run(['plugin', 'list']).stdout).toContain('greeter@local-tools');

    const init = () => {
      const { stdout } = run(['--provider', 'demo', '-p', 'hi', '--output-format', 'stream-json', '--verbose']);
      return JSON.parse(stdout.split('\n')[0]!) as { plugins: Array<{ name: string }>; slash_commands: string[]; agents: string[] };
    };
    const enabled = init();
    expect(enabled.plugins.map((plugin) => plugin.name)).toEqual(['greeter']);
    // Its command and agent are offered like Claude Code lists them in system/init.
    expect(enabled.slash_commands).toContain('greeter:hello');
    expect(enabled.agents).toContain('greeter:welcomer');

    expect(run(['plugin', 'disable', 'greeter@local-tools']).code).toBe(0);
    expect(init().plugins).toEqual([]);
    expect(init().slash_commands).not.toContain('greeter:hello');

    expect(run(['plugin', 'enable', 'greeter@local-tools', '--yes']).code).toBe(0);
    expect(run(['plugin', 'uninstall', 'greeter@local-tools']).code).toBe(0);
    expect(init().plugins).toEqual([]);
  });

  it('--setting-sources reaches bundle plugins: a project-enabled plugin loads without it, not under "user" or ""', () => {
    expect(run(['plugin', 'marketplace', 'add', marketplace, '--yes']).code).toBe(0);
    const installed = run(['plugin', 'install', 'greeter@local-tools', '--scope', 'project', '--yes']);
    expect(installed.code, installed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(workspace, '.claude', 'settings.json'), 'utf8')).enabledPlugins).toEqual({ 'greeter@local-tools': true });
    const init = (...flags: string[]) => {
      const { stdout, code, stderr } = run(['--provider', 'demo', '-p', 'hi', '--output-format', 'stream-json', '--verbose', ...flags]);
      expect(code, stderr).toBe(0);
      return JSON.parse(stdout.split('\n')[0]!) as { plugins: Array<{ name: string }>; slash_commands: string[] };
    };
    expect(init().plugins.map((plugin) => plugin.name)).toEqual(['greeter']);
    expect(init('--setting-sources', 'project').plugins.map((plugin) => plugin.name)).toEqual(['greeter']);
    for (const sources of ['user', '']) {
      const isolated = init('--setting-sources', sources);
      expect(isolated.plugins).toEqual([]);
      expect(isolated.slash_commands).not.toContain('greeter:hello');
    }
  });

  it('--plugin-dir loads a plugin folder for one run', () => {
    const { stdout, code } = run(['--provider', 'demo', '-p', 'hi', '--output-format', 'stream-json', '--verbose', '--plugin-dir', join(marketplace, 'plugins', 'greeter')]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout.split('\n')[0]!).plugins).toEqual([{ name: 'greeter', path: join(marketplace, 'plugins', 'greeter') }]);
  });
});
