import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Message } from '@tessera/contracts';
import { createKernel, type Kernel } from '@tessera/kernel';
import { backgroundRuntime } from '@tessera/plugin-background';
import { hooksPlugin } from '@tessera/plugin-hooks';
import { permissionsPlugin, type PermissionsPluginOptions } from '@tessera/plugin-permissions';
import { builtinTools, InMemorySandboxClient } from '@tessera/plugin-tools';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The built-in tools composed with the real permission, hook and background plugins, as a
// user's preset composes them: what each plugin does alone is tested in its package; these
// tests catch the seams between them (ReadAccess, ShellDirectories, BackgroundTasks).

let dir: string;
let kernel: Kernel | undefined;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-compose-')));
  await mkdir(join(dir, 'secrets'));
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'secrets', 'key.txt'), 'password=TOPSECRET\n');
  await writeFile(join(dir, '.env'), 'API_KEY=hunter2\n');
  await writeFile(join(dir, 'src', 'app.ts'), 'export const password = "not a secret";\n');
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

type Turn = { toolCalls: Array<{ name: string; input: Record<string, unknown> }> } | { text: string };

async function session(turns: Turn[], permissions: PermissionsPluginOptions | undefined, plugins: unknown[] = []) {
  const provider = new ScriptedProvider({ turns: turns as never });
  kernel = await createKernel({
    plugins: testPreset({ provider, ...(permissions ? { replace: [permissionsPlugin(permissions)] } : {}), plugins: [...builtinTools(), ...(plugins as never[])] }),
  });
  return { session: kernel.createSession({ cwd: dir }), provider };
}

const results = (history: readonly Message[]): string[] =>
  history.flatMap((message) => (message.role === 'tool' ? message.content.map((block) => String(block.content)) : []));

describe('built-in tools with the permissions plugin', () => {
  const rules = { allow: ['Bash(cd:*)', 'Bash(cat:*)', 'Grep', 'Glob'], deny: ['Read(./.env)', 'Read(./secrets/**)', 'WebFetch'] };

  it('keeps Read-denied files out of Grep and Glob results', async () => {
    const { session: s } = await session(
      [
        { toolCalls: [{ name: 'Grep', input: { pattern: 'password|API_KEY', output_mode: 'content' } }] },
        { toolCalls: [{ name: 'Glob', input: { pattern: '**/*' } }] },
        { toolCalls: [{ name: 'Glob', input: { pattern: 'secrets/**' } }] },
        { text: 'done' },
      ],
      { rules },
    );
    await s.run('look for secrets');
    const [grep, glob, globSecrets] = results(s.getHistory());
    expect(grep).toContain('src/app.ts:1:');
    expect(grep).not.toContain('TOPSECRET');
    expect(grep).not.toContain('hunter2');
    expect(glob).toContain(join(dir, 'src', 'app.ts'));
    expect(glob).not.toContain('key.txt');
    expect(glob).not.toContain('.env');
    expect(globSecrets).toBe('No files found');
  });

  it("resolves a Bash command's relative paths where an earlier cd left the shell", async () => {
    const { session: s } = await session(
      [
        { toolCalls: [{ name: 'Bash', input: { command: 'cd secrets' } }] },
        { toolCalls: [{ name: 'Bash', input: { command: 'cat key.txt' } }] },
        { toolCalls: [{ name: 'Bash', input: { command: 'cd .. && cd secrets && cat key.txt' } }] },
        { text: 'done' },
      ],
      { rules },
    );
    await s.run('read the key');
    const [, cat, compound] = results(s.getHistory());
    expect(cat).not.toContain('TOPSECRET');
    expect(cat).toMatch(/denied|not allowed/i);
    expect(compound).not.toContain('TOPSECRET');
    expect(compound).toMatch(/denied|not allowed/i);
  });

  it("lets the file tools reach the rules' additionalDirectories (one setting for both)", async () => {
    const shared = `${dir}-shared`;
    await mkdir(shared, { recursive: true });
    try {
      await writeFile(join(shared, 'notes.md'), 'shared notes\n');
      const { session: s } = await session(
        [
          { toolCalls: [{ name: 'Read', input: { file_path: join(shared, 'notes.md') } }] },
          { toolCalls: [{ name: 'Grep', input: { pattern: 'shared', path: shared } }] },
          { text: 'done' },
        ],
        { rules: { additionalDirectories: [`../${basename(shared)}`] } },
      );
      await s.run('read the shared notes');
      const [read, grep] = results(s.getHistory());
      expect(read).toContain('shared notes');
      expect(grep).toContain(join(shared, 'notes.md'));
    } finally {
      await rm(shared, { recursive: true, force: true });
    }
  });

  it('judges a command where it will run when the directory an earlier cd went to is gone', async () => {
    const { session: s } = await session(
      [
        { toolCalls: [{ name: 'Bash', input: { command: 'mkdir x && cd x' } }] },
        // Something else removes the directory the shell stands in (removing it through Bash needs approval).
        (() => {
          rmSync(join(dir, 'x'), { recursive: true, force: true });
          return { toolCalls: [{ name: 'Bash', input: { command: 'cat secrets/key.txt' } }] };
        }) as never,
        { text: 'done' },
      ],
      { rules: { allow: ['Bash(cd:*)', 'Bash(cat:*)', 'Bash(mkdir:*)'], deny: ['Read(./secrets/**)'] } },
    );
    await s.run('try');
    const cat = results(s.getHistory())[1]!;
    expect(cat).not.toContain('TOPSECRET');
    expect(cat).toMatch(/denied/i);
  });

  it('leaves a tool denied outright out of the model request', async () => {
    const { session: s, provider } = await session([{ text: 'done' }], { rules });
    await s.run('hi');
    const offered = provider.requests[0]!.tools.map((tool) => tool.name);
    expect(offered).not.toContain('WebFetch');
    expect(offered).toContain('Read');
  });
});

describe('built-in tools with the hooks plugin', () => {
  it("matches an `if` path rule against the tools' absolute file_path", async () => {
    const marker = join(dir, 'hook-ran.txt');
    const config = {
      PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command' as const, command: `echo ran >> ${JSON.stringify(marker)}`, if: 'Write(src/**)' }] }],
    };
    const { session: s } = await session(
      [
        { toolCalls: [{ name: 'Write', input: { file_path: join(dir, 'src', 'new.ts'), content: 'x' } }] },
        { toolCalls: [{ name: 'Write', input: { file_path: join(dir, 'notes.md'), content: 'y' } }] },
        { text: 'done' },
      ],
      undefined,
      [hooksPlugin({ configs: [{ config, source: { file: join(dir, 'settings.json') } }] })],
    );
    await s.run('write two files');
    expect((await readFile(marker, 'utf8')).trim().split('\n')).toEqual(['ran']);
  });
});

describe.runIf(process.platform !== 'win32')('built-in tools with the background runtime', () => {
  it('starts a command in the background, reads its output with BashOutput and stops it with KillShell', async () => {
    const { session: s } = await session(
      [
        { toolCalls: [{ name: 'Bash', input: { command: 'echo ready; sleep 30', run_in_background: true } }] },
        // Waits (up to 10 s) until the line is in the task's log, so the read below is deterministic.
        { toolCalls: [{ name: 'Bash', input: { command: 'for i in $(seq 100); do grep -q ready logs/task_1.log 2>/dev/null && break; sleep 0.1; done' } }] },
        { toolCalls: [{ name: 'BashOutput', input: { bash_id: 'task_1' } }] },
        { toolCalls: [{ name: 'KillShell', input: { shell_id: 'task_1' } }] },
        { toolCalls: [{ name: 'BashOutput', input: { bash_id: 'task_1' } }] },
        { text: 'done' },
      ],
      undefined,
      [backgroundRuntime({ shell: { logDir: join(dir, 'logs'), killGraceMs: 200 } })],
    );
    await s.run('start the server');
    const [started, , output, killed, after] = results(s.getHistory());
    expect(started).toContain('task_1');
    expect(started).toContain('BashOutput');
    expect(output).toBe('Status: running\nready');
    expect(killed).toBe('Killed background shell task_1.');
    expect(after).toMatch(/^Status: cancelled/);
  });
});

describe('built-in tools in a sandbox with the permissions plugin', () => {
  it('judges sandbox paths as the host paths they stand for', async () => {
    const client = new InMemorySandboxClient();
    await client.writeFile('/workspace/secrets/key.txt', 'TOPSECRET');
    await client.writeFile('/workspace/src/a.ts', 'export {};');
    const provider = new ScriptedProvider({
      turns: [
        { toolCalls: [{ name: 'Read', input: { file_path: '/workspace/secrets/key.txt' } }] },
        { toolCalls: [{ name: 'Read', input: { file_path: '/workspace/src/a.ts' } }] },
        { toolCalls: [{ name: 'Bash', input: { command: 'cat /workspace/secrets/key.txt' } }] },
        { text: 'done' },
      ] as never,
    });
    kernel = await createKernel({
      plugins: testPreset({
        provider,
        replace: [permissionsPlugin({ rules: { allow: ['Bash(cat:*)'], deny: ['Read(./secrets/**)'] } })],
        plugins: builtinTools({ sandbox: { client } }),
      }),
    });
    const s = kernel.createSession({ cwd: dir });
    await s.run('read');
    const [secret, source, cat] = results(s.getHistory());
    expect(secret).toMatch(/denied/i);
    expect(source).toContain('export {};');
    expect(cat).toMatch(/denied/i);
    expect(client.commands).toEqual([]);
  });
});
