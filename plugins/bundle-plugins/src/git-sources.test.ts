import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BundlePluginManager } from './bundle-plugin-manager.js';
import { sandbox, writeTree } from './bundle-plugins.test-helper.js';
import { githubUrl } from './marketplace-client.js';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.test' };
const saved: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) {
    saved[key] = process.env[key];
    process.env[key] = value;
  }
});
afterAll(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A repository with `files` committed on `main`, published as a bare repo; returns its file URL and commit. */
function publish(root: string, name: string, files: Record<string, string | object>): { url: string; sha: string; work: string; bare: string } {
  const work = join(root, `${name}-work`);
  writeTree(work, files);
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'first');
  const bare = join(root, `${name}.git`);
  git(root, 'clone', '-q', '--bare', work, bare);
  return { url: `file://${bare}`, sha: git(work, 'rev-parse', 'HEAD'), work, bare };
}

let box: ReturnType<typeof sandbox>;
let manager: BundlePluginManager;
beforeEach(() => {
  box = sandbox();
  manager = new BundlePluginManager({ home: box.home, cwd: box.cwd });
});
afterEach(() => box.cleanup());

describe('git sources', () => {
  it('adds a marketplace from a git URL with #ref, installs pinned url and git-subdir plugins, and refuses a pin the repository does not have', async () => {
    const plugin = publish(box.root, 'plugin', { '.claude-plugin/plugin.json': { name: 'gitplug' }, 'commands/deploy.md': '---\ndescription: Deploy\n---\nGo.\n' });
    const mono = publish(box.root, 'mono', { 'plugins/sub/commands/sub-cmd.md': 'Sub.', 'plugins/other/README.md': 'not wanted' });
    const market = publish(box.root, 'market', {
      '.claude-plugin/marketplace.json': {
        name: 'git-market',
        owner: { name: 'Test' },
        plugins: [
          { name: 'gitplug', source: { source: 'url', url: plugin.url, ref: 'main', sha: plugin.sha } },
          { name: 'subplug', source: { source: 'git-subdir', url: mono.url, path: 'plugins/sub', ref: 'main' } },
          { name: 'tampered', source: { source: 'url', url: plugin.url, sha: 'deadbeef'.repeat(5) } },
          { name: 'local', source: './local' },
        ],
      },
      'local/commands/here.md': 'Here.',
    });
    git(market.work, 'checkout', '-q', '-b', 'release');

    const added = await manager.run(`marketplace add ${market.url}#main --yes`);
    expect(added, added.message).toMatchObject({ success: true });
    const clone = join(box.home, '.tessera', 'plugins', 'marketplaces', 'git-market');
    expect(existsSync(join(clone, '.claude-plugin', 'marketplace.json'))).toBe(true);
    const known = JSON.parse(readFileSync(join(box.home, '.tessera', 'plugins', 'known_marketplaces.json'), 'utf8'));
    expect(known['git-market']).toMatchObject({ source: { source: 'git', url: market.url, ref: 'main' }, installLocation: clone, trusted: true });

    const installed = await manager.run('install gitplug@git-market');
    expect(installed, installed.message).toMatchObject({ success: true });
    const records = manager.installer.records('gitplug@git-market');
    expect(records[0]).toMatchObject({ gitCommitSha: plugin.sha, version: plugin.sha.slice(0, 12) });
    expect(existsSync(join(records[0]!.installPath, 'commands', 'deploy.md'))).toBe(true);
    expect(existsSync(join(records[0]!.installPath, '.git'))).toBe(false);

    expect(await manager.run('install subplug@git-market')).toMatchObject({ success: true });
    const sub = manager.installer.records('subplug@git-market')[0]!;
    expect(existsSync(join(sub.installPath, 'commands', 'sub-cmd.md'))).toBe(true);
    expect(existsSync(join(sub.installPath, 'README.md'))).toBe(false);

    expect(await manager.run('install local@git-market')).toMatchObject({ success: true });
    expect(manager.installer.records('local@git-market')[0]).toMatchObject({ gitCommitSha: market.sha });

    const tampered = await manager.run('install tampered@git-market');
    expect(tampered.success).toBe(false);
    expect(tampered.message).toContain(`pins commit ${'deadbeef'.repeat(5)}`);
    expect(manager.installer.records('tampered@git-market')).toEqual([]);
    expect(manager.registry.plugins().map((item) => item.id).sort()).toEqual(['gitplug@git-market', 'local@git-market', 'subplug@git-market']);
  });

  it('refuses a pinned commit that history rewriting removed', async () => {
    const plugin = publish(box.root, 'plugin', { '.claude-plugin/plugin.json': { name: 'p' }, 'commands/a.md': 'A' });
    writeTree(join(box.root, 'market'), { '.claude-plugin/marketplace.json': { name: 'm', owner: { name: 'T' }, plugins: [{ name: 'p', source: { source: 'url', url: plugin.url, ref: 'main', sha: plugin.sha } }] } });
    // Rewrite: amend the only commit, force-push, and prune the old object.
    writeTree(plugin.work, { 'commands/a.md': 'Evil' });
    git(plugin.work, 'commit', '-q', '-a', '--amend', '-m', 'rewritten');
    git(plugin.work, 'push', '-q', '--force', plugin.bare, 'main');
    git(plugin.bare, 'reflog', 'expire', '--expire=now', '--all');
    git(plugin.bare, 'gc', '-q', '--prune=now');
    await manager.run(`marketplace add ${join(box.root, 'market')} --yes`);
    const result = await manager.run('install p@m');
    expect(result.success).toBe(false);
    expect(result.message).toMatch(/pins commit [0-9a-f]{40}.*does not contain it/s);
    expect(existsSync(join(box.home, '.tessera', 'plugins', 'cache', 'm', 'p'))).toBe(false);
  });

  it('maps GitHub owner/repo sources to https git URLs and reads git URLs with #ref', () => {
    expect(manager.marketplaces.parseSource('anthropics/claude-plugins-official')).toEqual({ source: 'github', repo: 'anthropics/claude-plugins-official' });
    expect(manager.marketplaces.parseSource('obra/superpowers-marketplace@v2')).toEqual({ source: 'github', repo: 'obra/superpowers-marketplace', ref: 'v2' });
    expect(githubUrl('obra/superpowers')).toBe('https://github.com/obra/superpowers.git');
    expect(manager.marketplaces.parseSource('https://git.example.test/team/plugins.git#stable')).toEqual({ source: 'git', url: 'https://git.example.test/team/plugins.git', ref: 'stable' });
    expect(manager.marketplaces.parseSource('git@github.com:o/r.git')).toEqual({ source: 'git', url: 'git@github.com:o/r.git' });
    expect(manager.marketplaces.parseSource('https://example.test/catalog/marketplace.json')).toEqual({ source: 'url', url: 'https://example.test/catalog/marketplace.json' });
  });
});

describe('a marketplace.json URL', () => {
  let server: Server;
  let base = '';
  let body = '';
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/marketplace.json') response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is downloaded; git sources install from it, relative ones are refused with the reason', async () => {
    const plugin = publish(box.root, 'plugin', { '.claude-plugin/plugin.json': { name: 'remote' }, 'skills/tidy/SKILL.md': '---\ndescription: Tidy\n---\nTidy.\n' });
    body = JSON.stringify({ name: 'web-market', owner: { name: 'W' }, plugins: [{ name: 'remote', source: { source: 'url', url: plugin.url } }, { name: 'rel', source: './rel' }] });
    expect(await manager.run(`marketplace add ${base}/marketplace.json --yes`)).toMatchObject({ success: true });
    expect(await manager.run('install remote@web-market')).toMatchObject({ success: true });
    expect(manager.registry.skillEntries().map((entry) => entry.qualifiedName)).toEqual(['remote:tidy']);
    const relative = await manager.run('install rel@web-market');
    expect(relative.success).toBe(false);
    expect(relative.message).toContain('only that file is there');
    body = JSON.stringify({ name: 'web-market', owner: { name: 'W' }, plugins: [] });
    expect((await manager.run('marketplace update web-market')).message).toContain('Updated web-market (0 plugins)');
    const missing = await manager.run(`marketplace add ${base}/missing.json --yes`);
    expect(missing.message).toContain('HTTP 404');
  });
});

const npmAvailable = spawnSync('npm', ['--version'], { encoding: 'utf8' }).status === 0;
describe.skipIf(!npmAvailable)('npm sources', () => {
  it('installs a package through npm pack (a local tarball here: no network)', async () => {
    writeTree(join(box.root, 'pkg'), { 'package.json': { name: 'npm-plug', version: '0.3.0' }, '.claude-plugin/plugin.json': { name: 'npm-plug', version: '0.3.0' }, 'commands/pkg.md': 'From npm.' });
    execFileSync('npm', ['pack', '--pack-destination', box.root, '--ignore-scripts'], { cwd: join(box.root, 'pkg'), stdio: 'ignore' });
    writeTree(join(box.root, 'market'), { '.claude-plugin/marketplace.json': { name: 'npm-market', owner: { name: 'N' }, plugins: [{ name: 'npm-plug', source: { source: 'npm', package: join(box.root, 'npm-plug-0.3.0.tgz') } }] } });
    await manager.run(`marketplace add ${join(box.root, 'market')} --yes`);
    const result = await manager.run('install npm-plug@npm-market');
    expect(result, result.message).toMatchObject({ success: true });
    expect(existsSync(join(box.home, '.tessera', 'plugins', 'cache', 'npm-market', 'npm-plug', '0.3.0', 'commands', 'pkg.md'))).toBe(true);
  });
});

describe('what a fetched source may do', () => {
  it('refuses a catalogue whose name would leave the marketplaces folder, before anything on disk changes', async () => {
    const victim = join(box.home, 'victim');
    writeTree(victim, { 'precious.txt': 'keep me' });
    const evil = publish(box.root, 'evil', { '.claude-plugin/marketplace.json': { name: '../../../victim', owner: { name: 'X' }, plugins: [] }, authorized_keys: 'attacker' });
    const result = await manager.run(`marketplace add ${evil.url} --yes`);
    expect(result.success).toBe(false);
    expect(result.message).toContain('Marketplace name "../../../victim"');
    expect(readdirSync(victim)).toEqual(['precious.txt']);
    expect(readdirSync(join(box.home, '.tessera', 'plugins', 'marketplaces'))).toEqual([]);
    expect(existsSync(join(box.home, '.tessera', 'plugins', 'known_marketplaces.json'))).toBe(false);
  });

  it('keeps only the symlinks of an npm package that point inside it', async () => {
    const secret = join(box.root, 'secret.md');
    writeFileSync(secret, '---\nname: leaked\ndescription: TOP SECRET\n---\nsk-123\n');
    writeTree(join(box.root, 'pkg', 'package'), { 'package.json': { name: 'linky', version: '1.0.0' }, '.claude-plugin/plugin.json': { name: 'linky', version: '1.0.0' }, 'commands/a.md': 'A.' });
    symlinkSync(secret, join(box.root, 'pkg', 'package', 'SKILL.md'));
    symlinkSync('a.md', join(box.root, 'pkg', 'package', 'commands', 'b.md'));
    execFileSync('tar', ['-czf', join(box.root, 'linky-1.0.0.tgz'), '-C', join(box.root, 'pkg'), 'package']);
    writeTree(join(box.root, 'market'), { '.claude-plugin/marketplace.json': { name: 'npm-market', owner: { name: 'N' }, plugins: [{ name: 'linky', source: { source: 'npm', package: join(box.root, 'linky-1.0.0.tgz') } }] } });
    await manager.run(`marketplace add ${join(box.root, 'market')} --yes`);
    const result = await manager.run('install linky@npm-market');
    expect(result, result.message).toMatchObject({ success: true });
    expect(result.message).toContain('outside the marketplace; left out');
    const installPath = join(box.home, '.tessera', 'plugins', 'cache', 'npm-market', 'linky', '1.0.0');
    expect(existsSync(join(installPath, 'SKILL.md'))).toBe(false);
    expect(lstatSync(join(installPath, 'commands', 'b.md')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(installPath, 'commands', 'b.md'), 'utf8')).toBe('A.');
    expect(JSON.stringify(manager.registry.skillEntries())).not.toContain('TOP SECRET');
  });

  it('redacts credentials in git URLs from messages and listings, and keeps known_marketplaces.json private', async () => {
    const failed = await manager.run('marketplace add https://me:ghp_SECRET123@127.0.0.1:9/org/private.git?token=tok_SECRET456 --yes');
    expect(failed.success).toBe(false);
    expect(failed.message).toContain('https://***@127.0.0.1:9/org/private.git?token=***');
    expect(failed.message).not.toMatch(/SECRET/);

    const market = publish(box.root, 'market', { '.claude-plugin/marketplace.json': { name: 'private', owner: { name: 'P' }, plugins: [] } });
    const withToken = market.url.replace('file://', 'file://me:ghp_SECRET123@');
    mkdirSync(join(box.home, '.tessera', 'plugins'), { recursive: true });
    const added = await manager.run(`marketplace add ${withToken} --yes`);
    expect(added.message).not.toContain('ghp_SECRET123');
    expect((await manager.run('marketplace list')).message).toContain('file://me:***@');
    expect((await manager.run('marketplace list --json')).message).not.toContain('ghp_SECRET123');
    expect(statSync(join(box.home, '.tessera', 'plugins', 'known_marketplaces.json')).mode & 0o077).toBe(0);
  });
});
