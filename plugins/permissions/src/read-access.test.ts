import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadAccess } from '@tessera/contracts';
import { createKernel } from '@tessera/kernel';
import { testPreset } from '@tessera/preset-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePermission, type PermissionRules } from '@tessera/permission-rules';
import { permissionsPlugin } from './permissions-plugin.js';
import { RulesPermissionPolicy } from './rules-permission-policy.js';

let root: string;
let cwd: string;
let home: string;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'tessera-read-access-')));
  cwd = join(root, 'project');
  home = join(root, 'home');
  await mkdir(join(cwd, 'secrets'), { recursive: true });
  await mkdir(join(root, 'outside', 'keys'), { recursive: true });
  await mkdir(home, { recursive: true });
  await symlink(join(root, 'outside'), join(cwd, 'linked'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const deniedPaths = (rules: PermissionRules, options: { settingsRoot?: string } = {}) =>
  new RulesPermissionPolicy(rules, { homeDir: home, ...options }).deniedPaths({ cwd, sessionId: 's' });

describe('RulesPermissionPolicy as ReadAccess', () => {
  it('offers no test when no Read deny rule exists, so callers skip the check', () => {
    expect(deniedPaths({})).toBeUndefined();
    expect(deniedPaths({ deny: ['Bash(rm *)', 'Edit(./src/**)', 'WebFetch'], allow: ['Read(./x)'], ask: ['Read(./y)'] })).toBeUndefined();
  });

  it('denies the files Read(./.env) and Read(./secrets/**) name, and nothing else', () => {
    const denied = deniedPaths({ deny: ['Read(./.env)', 'Read(./secrets/**)'] })!;
    expect(denied(join(cwd, '.env'))).toBe(true);
    expect(denied(join(cwd, 'secrets', 'key.txt'))).toBe(true);
    expect(denied(join(cwd, 'secrets', 'deep', 'a.pem'))).toBe(true);
    expect(denied(join(cwd, 'SECRETS', 'key.txt'))).toBe(true);
    expect(denied(join(cwd, 'src', '.env'))).toBe(false);
    expect(denied(join(cwd, 'src', 'secrets.ts'))).toBe(false);
  });

  it('treats Grep(…) and Glob(…) deny rules as Read rules, and a bare Read deny as denying every file', () => {
    expect(deniedPaths({ deny: ['Grep(./secrets/**)'] })!(join(cwd, 'secrets', 'a'))).toBe(true);
    expect(deniedPaths({ deny: ['Read'] })!(join(cwd, 'src', 'a.ts'))).toBe(true);
  });

  it('decides every path exactly as a Read of that file would be decided', () => {
    const rules = {
      deny: ['Read(./.env)', 'Read(secrets/**)', 'Read(*.pem)', 'Read(/conf/*.json)', 'Read(~/.ssh/**)', `Read(/${root}/outside/keys/**)`],
    };
    const denied = deniedPaths(rules, { settingsRoot: root })!;
    const paths = [
      join(cwd, '.env'),
      join(cwd, 'a', '.env'),
      join(cwd, 'secrets', 'x'),
      join(cwd, 'src', 'secrets', 'x'),
      join(cwd, 'deep', 'server.PEM'),
      join(root, 'conf', 'a.json'),
      join(root, 'conf', 'sub', 'a.json'),
      join(cwd, 'conf', 'a.json'),
      join(home, '.ssh', 'id_rsa'),
      join(home, 'ssh', 'id_rsa'),
      join(root, 'outside', 'keys', 'k'),
      join(cwd, 'linked', 'keys', 'k'),
      join(cwd, 'linked', 'other', 'k'),
      join(cwd, 'src', 'index.ts'),
    ];
    const context = { cwd, settingsRoot: root, homeDir: home };
    for (const path of paths) {
      expect(denied(path), path).toBe(evaluatePermission('Read', { file_path: path }, 'default', rules, context) === 'deny');
    }
    // The symbolic link is seen through: its real path is under the denied folder.
    expect(denied(join(cwd, 'linked', 'keys', 'k'))).toBe(true);
  });

  it('is bound as ReadAccess by the plugin and follows rule changes', async () => {
    const kernel = await createKernel({ plugins: testPreset({ replace: [permissionsPlugin({ rules: { deny: ['Read(./secrets/**)'] } })] }) });
    try {
      const access = kernel.container.get<ReadAccess>(ReadAccess);
      expect(access.deniedPaths({ cwd, sessionId: 's' })!(join(cwd, 'secrets', 'k'))).toBe(true);
      (access as RulesPermissionPolicy).setRules({});
      expect(access.deniedPaths({ cwd, sessionId: 's' })).toBeUndefined();
    } finally {
      await kernel.shutdown();
    }
  });
});
