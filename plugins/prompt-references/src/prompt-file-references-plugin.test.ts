import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, SessionEvent } from '@tessera/contracts';
import { createKernel, definePlugin, PromptBlockedError, Stage, type Kernel, type Plugin } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promptFileReferences, type PromptFileReferencesOptions } from './prompt-file-references-plugin.js';

let base: string;
let cwd: string;
let kernel: Kernel | undefined;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'tessera-refs-plugin-')));
  cwd = join(base, 'work');
  await mkdir(cwd);
});

afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(base, { recursive: true, force: true });
});

async function start(options?: PromptFileReferencesOptions, ...others: Plugin[]) {
  return startWith([], options, ...others);
}

/** With `permissionsPlugin({ rules })` in place of the preset's allow-all policy. */
async function startWithRules(rules: { deny?: string[]; ask?: string[] }) {
  return startWith([permissionsPlugin({ rules })]);
}

async function startWith(replace: Plugin[], options?: PromptFileReferencesOptions, ...others: Plugin[]) {
  const provider = new ScriptedProvider({ turns: () => ({ text: 'done' }) });
  kernel = await createKernel({ plugins: testPreset({ provider, replace, plugins: [promptFileReferences(options), ...others] }) });
  const session = kernel.createSession({ cwd });
  const events: SessionEvent[] = [];
  session.subscribe((event) => events.push(event));
  return { provider, session, events };
}

const userText = (message: Message | undefined): string =>
  typeof message?.content === 'string' ? message.content : (message?.content ?? []).map((block) => ('text' in block ? block.text : '')).join('\n');

async function expectBlocked(prompt: string, kind: string, options?: PromptFileReferencesOptions): Promise<PromptBlockedError> {
  const { provider, session, events } = await start(options);
  const error = await session.run(prompt).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PromptBlockedError);
  const blocked = error as PromptBlockedError;
  expect(blocked.code).toBe('prompt_blocked');
  expect(blocked.source).toBe('prompt-file-references');
  expect(blocked.details?.failures).toEqual([expect.objectContaining({ kind })]);
  expect(provider.requests).toHaveLength(0);
  expect(session.getHistory()).toHaveLength(0);
  expect(events.some((event) => event.type === 'prompt_file_reference')).toBe(false);
  return blocked;
}

/** A plugin whose `userPromptSubmit` tap blocks every prompt. */
function blocker(name: string, stage: number): Plugin {
  return definePlugin({
    name,
    register({ hooks }) {
      hooks.userPromptSubmit.tap({ name, stage }, () => ({ blocked: { reason: 'no', source: name } }));
    },
  });
}

describe('promptFileReferences', () => {
  it('sends the file to the model only, keeps the prompt, and publishes the references', async () => {
    await writeFile(join(cwd, 'AGENTS.md'), 'Always write tests.\n');
    const { provider, session, events } = await start();
    await expect(session.run('follow @AGENTS.md please')).resolves.toBe('done');

    const sent = userText(provider.requests[0]?.messages.at(-1));
    expect(sent).toContain('<system-reminder>');
    expect(sent).toContain('<file path="AGENTS.md">\nAlways write tests.\n</file>');
    expect(sent).toContain('follow @AGENTS.md please');
    const stored = session.getHistory()[0];
    expect(Array.isArray(stored?.content) && stored.content.at(-1)).toEqual({ type: 'text', text: 'follow @AGENTS.md please' });

    const event = events.find((candidate) => candidate.type === 'prompt_file_reference');
    expect(event).toEqual({
      type: 'prompt_file_reference',
      prompt: 'follow @AGENTS.md please',
      references: [{ sourcePath: join(cwd, 'AGENTS.md'), relativePath: 'AGENTS.md', originalReference: '@AGENTS.md', reason: 'prompt', depth: 0, byteLength: 20 }],
    });
    expect(JSON.stringify(event)).not.toContain('Always write tests');
  });

  it('reads a quoted path with spaces', async () => {
    await writeFile(join(cwd, 'my notes.md'), 'remember the milk');
    const { provider, session } = await start();
    await session.run('summarise @"my notes.md"');
    expect(userText(provider.requests[0]?.messages.at(-1))).toContain('<file path="my notes.md">\nremember the milk\n</file>');
  });

  it('includes nested references with their depth', async () => {
    await writeFile(join(cwd, 'a.md'), 'see @b.md');
    await writeFile(join(cwd, 'b.md'), 'B body');
    const { provider, session, events } = await start();
    await session.run('@a.md');
    expect(userText(provider.requests[0]?.messages.at(-1))).toContain('a.md references @b.md. Contents of b.md:\n<file path="b.md">\nB body\n</file>');
    const event = events.find((candidate) => candidate.type === 'prompt_file_reference');
    expect(event?.type === 'prompt_file_reference' && event.references.map(({ relativePath, reason, depth }) => ({ relativePath, reason, depth }))).toEqual([
      { relativePath: 'a.md', reason: 'prompt', depth: 0 },
      { relativePath: 'b.md', reason: 'nested', depth: 1 },
    ]);
  });

  it('leaves e-mail addresses and @words with no file alone', async () => {
    const { provider, session, events } = await start();
    await session.run('write to ops@example.com and ask @alice');
    expect(provider.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'write to ops@example.com and ask @alice' });
    expect(events.some((event) => event.type === 'prompt_file_reference')).toBe(false);
  });

  describe('blocks the prompt', () => {
    it('on a missing file, naming it and what to do', async () => {
      const error = await expectBlocked('read @missing.md', 'missing');
      expect(error.message).toContain('@missing.md [missing]');
      expect(error.message).toContain('Check the spelling');
    });

    it('on a path outside the workspace', async () => {
      await writeFile(join(base, 'x'), 'outside');
      await expectBlocked('read @../x', 'outside_root');
    });

    it('on a symbolic link that leads outside the workspace', async () => {
      await writeFile(join(base, 'secret'), 'outside');
      await symlink(join(base, 'secret'), join(cwd, 'notes.md'));
      const error = await expectBlocked('read @notes.md', 'outside_root');
      expect(error.message).toContain('symbolic link');
    });

    it('on a directory', async () => {
      await mkdir(join(cwd, 'docs'));
      await expectBlocked('read @docs/', 'directory');
    });

    it('on a cycle', async () => {
      await writeFile(join(cwd, 'a.md'), '@b.md');
      await writeFile(join(cwd, 'b.md'), '@a.md');
      await expectBlocked('read @a.md', 'circular');
    });

    it('past maxDepth', async () => {
      await writeFile(join(cwd, 'a.md'), '@b.md');
      await writeFile(join(cwd, 'b.md'), 'leaf');
      await expectBlocked('read @a.md', 'max_depth', { maxDepth: 0 });
    });

    it('over the per-file limit', async () => {
      await writeFile(join(cwd, 'big.txt'), 'x'.repeat(2048));
      await expectBlocked('read @big.txt', 'size_limit', { maxFileBytes: 1024 });
    });

    it('over the total limit', async () => {
      await writeFile(join(cwd, 'a.txt'), 'a'.repeat(600));
      await writeFile(join(cwd, 'b.txt'), 'b'.repeat(600));
      await expectBlocked('read @a.txt and @b.txt', 'size_limit', { maxTotalBytes: 1000 });
    });
  });

  describe('applies the Read permission rules', () => {
    beforeEach(async () => {
      await writeFile(join(cwd, '.env'), 'TOKEN=hunter2\n');
      await writeFile(join(cwd, 'CONTRIBUTING.md'), 'See the settings in @.env before you start.\n');
    });

    async function blockedByRules(rules: { deny?: string[]; ask?: string[] }, prompt: string): Promise<PromptBlockedError> {
      const { provider, session } = await startWithRules(rules);
      const error = await session.run(prompt).then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(PromptBlockedError);
      expect(provider.requests).toHaveLength(0);
      return error as PromptBlockedError;
    }

    it('blocks a reference to a file a Read deny rule covers, naming the rule', async () => {
      const error = await blockedByRules({ deny: ['Read(./.env)'] }, 'what is in @.env');
      expect(error.details?.failures).toEqual([expect.objectContaining({ reference: '@.env', kind: 'denied', path: join(cwd, '.env') })]);
      expect(error.message).toContain('@.env [denied]');
      expect(error.message).toContain('Read(./.env)');
      expect(JSON.stringify(error)).not.toContain('hunter2');
    });

    it('blocks a denied file referenced inside a referenced file, naming where', async () => {
      const error = await blockedByRules({ deny: ['Read(./.env)'] }, 'follow @CONTRIBUTING.md');
      expect(error.details?.failures).toEqual([expect.objectContaining({ reference: '@.env', kind: 'denied', referencedFrom: 'CONTRIBUTING.md' })]);
      expect(error.message).toContain('@.env (in CONTRIBUTING.md) [denied]');
    });

    it('judges the real path of a symbolic link, as the Read tool does', async () => {
      await symlink(join(cwd, '.env'), join(cwd, 'settings.txt'));
      const error = await blockedByRules({ deny: ['Read(./.env)'] }, 'read @settings.txt');
      expect(error.details?.failures).toEqual([expect.objectContaining({ reference: '@settings.txt', kind: 'denied' })]);
    });

    it('includes a file an ask rule covers when the prompt names it, and blocks it when only a file does', async () => {
      const named = await startWithRules({ ask: ['Read(./.env)'] });
      await expect(named.session.run('what is in @.env')).resolves.toBe('done');
      expect(userText(named.provider.requests[0]?.messages.at(-1))).toContain('TOKEN=hunter2');
      await kernel?.shutdown();

      const error = await blockedByRules({ ask: ['Read(./.env)'] }, 'follow @CONTRIBUTING.md');
      expect(error.details?.failures).toEqual([expect.objectContaining({ reference: '@.env', kind: 'denied', referencedFrom: 'CONTRIBUTING.md' })]);
      expect(error.message).toContain('needs approval');
    });

    it('leaves files no rule covers alone', async () => {
      await writeFile(join(cwd, 'README.md'), 'hello\n');
      const { session } = await startWithRules({ deny: ['Read(./.env)'] });
      await expect(session.run('read @README.md')).resolves.toBe('done');
    });
  });

  it('reads nothing once an earlier tap blocked the prompt', async () => {
    const { session } = await start(undefined, blocker('guard', Stage.Guard));
    await expect(session.run('read @missing.md')).rejects.toMatchObject({ code: 'prompt_blocked', source: 'guard' });
  });

  it('publishes no event when a later tap blocks the prompt', async () => {
    await writeFile(join(cwd, 'a.md'), 'A');
    const { provider, session, events } = await start(undefined, blocker('late', Stage.Default));
    await expect(session.run('read @a.md')).rejects.toMatchObject({ code: 'prompt_blocked', source: 'late' });
    expect(provider.requests).toHaveLength(0);
    expect(events.some((event) => event.type === 'prompt_file_reference')).toBe(false);
  });

  it('checks its options in the factory and touches no file there', () => {
    expect(() => promptFileReferences({ maxDepth: -1 })).toThrow(/maxDepth/);
    expect(() => promptFileReferences({ maxFileBytes: 0 })).toThrow(/maxFileBytes/);
    expect(() => promptFileReferences({ maxTotalBytes: 1.5 })).toThrow(/maxTotalBytes/);
    expect(() => promptFileReferences({ roots: [''] })).toThrow(/roots\[0\]/);
    expect(() => promptFileReferences({ roots: 'docs' as never })).toThrow(expect.objectContaining({ code: 'invalid_plugin_options' }));
    expect(promptFileReferences({ roots: ['/does/not/exist'] }).name).toBe('prompt-file-references');
  });
});
