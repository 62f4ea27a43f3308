import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runSubcommand, tempDirs } from './subcommand.test-helper.js';
import { runConfigCommand } from './config.js';

let home: string;
let cwd: string;

beforeEach(() => {
  ({ home, cwd } = tempDirs('config', 'home', 'cwd'));
});

const run = (...argv: string[]) => runSubcommand(runConfigCommand, argv, { cwd, home });

const projectFile = () => join(cwd, '.tessera', 'settings.json');
const localFile = () => join(cwd, '.tessera', 'settings.local.json');
const globalFile = () => join(home, '.tessera', 'settings.json');

function write(file: string, content: string | object): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
}

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

describe('config set', () => {
  it('writes the project file by default, keeping other keys, as 2-space JSON with a newline', async () => {
    write(projectFile(), { $schema: 'https://tessera.dev/schemas/settings.schema.json', spinnerTipsEnabled: false, permissions: { allow: ['Read'] } });
    const { code, stdout } = await run('set', 'permissions.defaultMode', 'acceptEdits');
    expect(code).toBe(0);
    expect(stdout).toContain('Set permissions.defaultMode = "acceptEdits" in .tessera/settings.json');
    const text = readFileSync(projectFile(), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "permissions": {\n    "allow": [');
    expect(JSON.parse(text)).toEqual({
      $schema: 'https://tessera.dev/schemas/settings.schema.json',
      spinnerTipsEnabled: false,
      permissions: { allow: ['Read'], defaultMode: 'acceptEdits' },
    });
    // Atomic write: no temp file is left beside it.
    expect(readdirSync(dirname(projectFile()))).toEqual(['settings.json']);
  });

  it('writes --global to ~/.tessera/settings.json and --local to .tessera/settings.local.json', async () => {
    expect((await run('set', 'model', 'claude-opus-4-1', '--global')).code).toBe(0);
    expect(read(globalFile())).toEqual({ model: 'claude-opus-4-1' });
    expect((await run('set', 'cleanupPeriodDays', '30', '--local')).code).toBe(0);
    expect(read(localFile())).toEqual({ cleanupPeriodDays: 30 });
  });

  it('reads values as JSON when they parse, else as text', async () => {
    await run('set', 'permissions.allow', '["Bash(npm test)"]');
    await run('set', 'includeCoAuthoredBy', 'false');
    await run('set', 'currentProvider', 'work');
    expect(read(projectFile())).toEqual({ permissions: { allow: ['Bash(npm test)'] }, includeCoAuthoredBy: false, currentProvider: 'work' });
  });

  it('refuses a value of the wrong type, naming the key and the expected type, and writes nothing', async () => {
    write(projectFile(), '{\n    "model": "sonnet"\n}\n');
    const before = readFileSync(projectFile(), 'utf8');

    const number = await run('set', 'model', '42');
    expect(number.code).toBe(1);
    expect(number.stderr).toContain('invalid value for model');
    expect(number.stderr).toContain('expected string');
    expect(number.stderr).toContain(`quote it: '"42"'`);

    const mode = await run('set', 'permissions.defaultMode', 'yolo');
    expect(mode.code).toBe(1);
    expect(mode.stderr).toContain('invalid value for permissions.defaultMode');
    expect(mode.stderr).toContain('expected one of');

    expect(readFileSync(projectFile(), 'utf8')).toBe(before);
  });

  it('refuses keys Tessera does not read', async () => {
    const { code, stderr } = await run('set', 'modle', 'x');
    expect(code).toBe(1);
    expect(stderr).toContain('unknown settings key "modle"');
    expect(() => readFileSync(projectFile())).toThrow();
  });

  it('reports a broken file with file:line:column and leaves it alone', async () => {
    const broken = '{\n  "model": "sonnet",\n  oops\n}\n';
    write(projectFile(), broken);
    const { code, stderr } = await run('set', 'model', 'opus');
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`${projectFile().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+: `));
    expect(stderr).toContain('nothing was written');
    expect(readFileSync(projectFile(), 'utf8')).toBe(broken);
  });

  it('follows a symlinked settings file instead of replacing the link', async () => {
    const real = join(home, 'dotfiles', 'tessera-settings.json');
    write(real, { model: 'a' });
    mkdirSync(dirname(globalFile()), { recursive: true });
    symlinkSync(real, globalFile());
    expect((await run('set', 'model', 'b', '--global')).code).toBe(0);
    expect(lstatSync(globalFile()).isSymbolicLink()).toBe(true);
    expect(read(real)).toEqual({ model: 'b' });
  });

  it('warns when a higher layer still decides the value', async () => {
    write(projectFile(), { model: 'project-model' });
    const { code, stderr } = await run('set', 'model', 'user-model', '--global');
    expect(code).toBe(0);
    expect(stderr).toContain(`${projectFile()} also sets model and takes precedence`);
  });

  it('rejects more than one scope flag and a missing value as usage errors', async () => {
    const both = await run('set', 'model', 'x', '--global', '--local');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--global and --local cannot be combined');
    const missing = await run('set', 'model');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing <value>');
    expect(missing.stderr).toContain('usage: tessera config set <key> <value>');
  });
});

describe('config get', () => {
  it('prints the merged value: the highest layer for scalars, JSON for objects', async () => {
    write(globalFile(), { model: 'user-model', permissions: { allow: ['Read'] } });
    write(projectFile(), { model: 'project-model', permissions: { allow: ['Bash(ls)'] } });
    expect((await run('get', 'model')).stdout).toBe('project-model\n');
    expect(JSON.parse((await run('get', 'permissions.allow')).stdout)).toEqual(['Read', 'Bash(ls)']);
  });

  it('fails with exit 1 for a key no file sets', async () => {
    const { code, stderr } = await run('get', 'model');
    expect(code).toBe(1);
    expect(stderr).toContain('model is not set in any settings file');
  });
});

describe('config list', () => {
  it('shows every key with the file it comes from', async () => {
    write(globalFile(), { model: 'user-model', permissions: { allow: ['Read'] } });
    write(projectFile(), { model: 'project-model', permissions: { allow: ['Bash(ls)'] } });
    write(localFile(), { permissions: { defaultMode: 'plan' } });
    const { code, stdout } = await run('list');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^model\s+"project-model"\s+\.tessera\/settings\.json$/m);
    expect(stdout).toMatch(/^permissions\.defaultMode\s+"plan"\s+\.tessera\/settings\.local\.json$/m);
    expect(stdout).toMatch(/^permissions\.allow\s+\["Read","Bash\(ls\)"\]\s+~\/\.tessera\/settings\.json, \.tessera\/settings\.json$/m);
    expect(stdout).toContain('.claude/settings.json (missing)');
  });

  it('prints settings and sources as JSON, never a literal API key', async () => {
    write(globalFile(), {
      providers: {
        work: { type: 'anthropic', apiKey: 'sk-ant-secret' },
        gateway: { type: 'anthropic', options: { authToken: 'gw-secret-token' } },
        home: { type: 'openai', apiKey: '$ENV:OPENAI_KEY' },
      },
    });
    const { code, stdout } = await run('list', '--json');
    expect(code).toBe(0);
    expect(stdout).not.toContain('sk-ant-secret');
    expect(stdout).not.toContain('gw-secret-token');
    const parsed = JSON.parse(stdout) as { settings: { providers: Record<string, { apiKey: string }> }; sources: Record<string, string[]> };
    expect(parsed.settings.providers.home!.apiKey).toBe('$ENV:OPENAI_KEY');
    expect(parsed.sources['providers.work.type']).toEqual([globalFile()]);
  });

  it('fails on a broken settings file with its location', async () => {
    write(globalFile(), '{ "model": }');
    const { code, stderr } = await run('list');
    expect(code).toBe(1);
    expect(stderr).toContain(`${globalFile()}:1:`);
  });

  it('answers --help with the usage on stdout', async () => {
    const { code, stdout } = await run('list', '--help');
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: tessera config list [--json]');
  });
});
