import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '@tessera/plugin-config';
import { runSubcommand, tempDirs } from './subcommand.test-helper.js';
import { runProviderCommand } from './provider.js';

let home: string;
let cwd: string;

beforeEach(() => {
  ({ home, cwd } = tempDirs('provider', 'home', 'cwd'));
});

const run = (env: Record<string, string>, ...argv: string[]) => runSubcommand(runProviderCommand, argv, { cwd, home, env });

const globalFile = () => join(home, '.tessera', 'settings.json');
const projectFile = () => join(cwd, '.tessera', 'settings.json');
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

function write(file: string, content: object): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
}

describe('provider add', () => {
  it('adds the profile to the global settings with the key as an $ENV reference, and --use makes it current', async () => {
    const { code, stdout } = await run(
      { WORK_KEY: 'sk-ant-real' },
      'add', 'work', '--type', 'anthropic', '--model', 'claude-sonnet-4-5', '--api-key-env', 'WORK_KEY', '--use',
    );
    expect(code).toBe(0);
    expect(stdout).toContain('Added provider work (anthropic) to ~/.tessera/settings.json');
    expect(read(globalFile())).toEqual({ providers: { work: { type: 'anthropic', model: 'claude-sonnet-4-5', apiKey: '$ENV:WORK_KEY' } }, currentProvider: 'work' });
    // The config plugin resolves what was written to the active profile.
    const loaded = loadConfig({ cwd, home, env: { WORK_KEY: 'sk-ant-real' } });
    expect(loaded.provider?.key).toBe('work');
    expect(loaded.provider?.profile.apiKey).toBe('sk-ant-real');
  });

  it('refuses --project: provider profiles are read only from user settings', async () => {
    const { code, stderr } = await run({}, 'add', 'lmstudio', '--type', 'openai', '--base-url', 'http://localhost:1234/v1', '--project');
    expect(code).toBe(2);
    expect(stderr).toContain('--project');
    expect(existsSync(projectFile())).toBe(false);
  });

  it('refuses a clear-text --api-key without echoing it, and writes nothing', async () => {
    for (const argv of [['--api-key', 'sk-ant-secret'], ['--api-key=sk-ant-secret']]) {
      const { code, stderr } = await run({}, 'add', 'work', '--type', 'anthropic', ...argv);
      expect(code).toBe(2);
      expect(stderr).toContain('pass --api-key-env NAME');
      expect(stderr).not.toContain('sk-ant-secret');
    }
    const pasted = await run({}, 'add', 'work', '--type', 'anthropic', '--api-key-env', 'sk-ant-secret');
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toContain('takes the NAME of an environment variable');
    expect(pasted.stderr).not.toContain('sk-ant-secret');
    expect(() => readFileSync(globalFile())).toThrow();
  });

  it('validates the type, the name and the base URL', async () => {
    const noType = await run({}, 'add', 'work');
    expect(noType.code).toBe(2);
    expect(noType.stderr).toContain('missing --type');
    const badType = await run({}, 'add', 'work', '--type', 'gemini');
    expect(badType.code).toBe(2);
    expect(badType.stderr).toContain('--type must be one of anthropic, openai');
    const badName = await run({}, 'add', 'a.b', '--type', 'openai');
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('invalid provider name "a.b"');
    const badUrl = await run({}, 'add', 'local', '--type', 'openai', '--base-url', 'localhost:1234');
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('--base-url must be an http(s) URL');
  });

  it('refuses to replace a profile without --force', async () => {
    await run({}, 'add', 'work', '--type', 'anthropic');
    const again = await run({}, 'add', 'work', '--type', 'openai');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('provider work already exists');
    expect(again.stderr).toContain('--force');
    expect(await run({}, 'add', 'work', '--type', 'openai', '--force')).toMatchObject({ code: 0 });
    expect(read(globalFile())).toEqual({ providers: { work: { type: 'openai' } } });
  });

  it('warns when ~/.claude/settings.json has a profile of that name that overrides what was written; a project profile does not count', async () => {
    write(projectFile(), { providers: { work: { type: 'anthropic', model: 'claude-haiku-4-5' } } });
    const quiet = await run({}, 'add', 'work', '--type', 'anthropic', '--model', 'claude-opus-4-1');
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('takes precedence');
    const claudeFile = join(home, '.claude', 'settings.json');
    write(claudeFile, { providers: { work: { type: 'anthropic', model: 'claude-haiku-4-5' } } });
    const { code, stderr } = await run({}, 'add', 'work', '--type', 'anthropic', '--model', 'claude-opus-4-1', '--force');
    expect(code).toBe(0);
    expect(stderr).toContain(`${claudeFile} also sets providers.work and takes precedence`);
  });

  it('warns when the key variable is not set', async () => {
    const { stderr } = await run({}, 'add', 'work', '--type', 'anthropic', '--api-key-env', 'WORK_KEY');
    expect(stderr).toContain('warning: WORK_KEY is not set');
  });
});

describe('provider list', () => {
  it('a gateway profile shows its bearer token (options.authToken) as the key; an unset key falls back to ANTHROPIC_AUTH_TOKEN', async () => {
    write(globalFile(), {
      providers: {
        gateway: { type: 'anthropic', baseURL: 'https://gw.example', options: { authToken: '$ENV:GW_TOKEN' } },
        plain: { type: 'anthropic' },
      },
    });
    const { code, stdout } = await run({ GW_TOKEN: 'gw-secret', ANTHROPIC_AUTH_TOKEN: 'tok' }, 'list');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\s+gateway\s+anthropic\s+-\s+https:\/\/gw\.example\s+\$ENV:GW_TOKEN \(set\)/m);
    expect(stdout).toMatch(/^\s+plain\s+anthropic\s+.*default ANTHROPIC_AUTH_TOKEN \(set\)/m);
    expect(stdout).not.toContain('gw-secret');
  });

  it('shows the profiles, the current one, and keys only as references with whether they are set', async () => {
    write(globalFile(), {
      currentProvider: 'work',
      providers: {
        work: { type: 'anthropic', model: 'claude-sonnet-4-5', apiKey: '$ENV:WORK_KEY' },
        local: { type: 'openai', baseURL: 'http://localhost:1234/v1' },
        leaked: { type: 'openai', apiKey: 'sk-clear-text' },
      },
    });
    const { code, stdout } = await run({ WORK_KEY: 'sk-ant-real' }, 'list');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\*\s+work\s+anthropic\s+claude-sonnet-4-5\s+-\s+\$ENV:WORK_KEY \(set\)/m);
    expect(stdout).toMatch(/^\s+local\s+openai\s+-\s+http:\/\/localhost:1234\/v1\s+default OPENAI_API_KEY \(not set\)/m);
    expect(stdout).toContain('literal key in file');
    expect(stdout).not.toContain('sk-ant-real');
    expect(stdout).not.toContain('sk-clear-text');

    const listed = JSON.parse((await run({}, 'list', '--json')).stdout) as { current: string; profiles: Array<{ name: string; apiKey: unknown }> };
    expect(listed.current).toBe('work');
    expect(listed.profiles.find((profile) => profile.name === 'work')?.apiKey).toEqual({ kind: 'env', variable: 'WORK_KEY', set: false, default: false });
  });

  it('says how to add one when there are none, and names a legacy provider block in use', async () => {
    expect((await run({}, 'list')).stdout).toContain('No provider profiles');
    write(globalFile(), { provider: { name: 'anthropic', model: 'claude-sonnet-4-5' } });
    expect((await run({}, 'list')).stdout).toContain('the legacy "provider" block (type anthropic)');
  });
});

describe('provider use', () => {
  it('sets currentProvider in the global file for a user-level profile; a project profile cannot be chosen', async () => {
    write(join(home, '.claude', 'settings.json'), { providers: { local: { type: 'openai' } } });
    const { code, stdout } = await run({}, 'use', 'local');
    expect(code).toBe(0);
    expect(stdout).toContain('Current provider: local');
    expect(read(globalFile())).toEqual({ currentProvider: 'local' });
    write(projectFile(), { providers: { repo: { type: 'openai' } } });
    const refused = await run({}, 'use', 'repo');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('no provider profile "repo"');
  });

  it('fails for an unknown profile, listing the known ones', async () => {
    write(globalFile(), { providers: { work: { type: 'anthropic' } } });
    const { code, stderr } = await run({}, 'use', 'nope');
    expect(code).toBe(1);
    expect(stderr).toContain('no provider profile "nope" (profiles: work)');
    expect(read(globalFile())).toEqual({ providers: { work: { type: 'anthropic' } } });
  });

  it('warns when ~/.claude/settings.json still picks another provider; a project file does not count', async () => {
    write(globalFile(), { providers: { work: { type: 'anthropic' }, local: { type: 'openai' } } });
    write(projectFile(), { currentProvider: 'local' });
    const quiet = await run({}, 'use', 'work');
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('takes precedence');
    const claudeFile = join(home, '.claude', 'settings.json');
    write(claudeFile, { currentProvider: 'local' });
    const { code, stderr } = await run({}, 'use', 'work');
    expect(code).toBe(0);
    expect(stderr).toContain(`${claudeFile} also sets currentProvider and takes precedence`);
  });
});
