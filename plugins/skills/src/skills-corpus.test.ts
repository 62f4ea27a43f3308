import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SkillActivator, SubagentLauncher, type SkillActivationRequest } from '@tessera/contracts';
import { definePlugin, InteractiveSession } from '@tessera/kernel';
import { ScriptedProvider, scriptedProvider } from '@tessera/plugin-provider-scripted';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRealCorpus, fixtureCorpus, type Corpus } from '../../../test/support/compat-corpus.js';
import { SkillsFixture } from './skills.test-helper.js';

/**
 * Lays a corpus out as a project: each skill (a `<name>/SKILL.md` folder or a flattened
 * `<origin>__SKILL.md` file) under `.tessera/skills/<name>/`, each command under
 * `.claude/commands/`. Returns the ids expected and whether each file asks for a fork.
 */
function layOut(corpus: Corpus, fixture: SkillsFixture): Map<string, boolean> {
  const expected = new Map<string, boolean>();
  const place = (source: string, target: string, id: string): void => {
    mkdirSync(join(target, '..'), { recursive: true });
    copyFileSync(source, target);
    // A command with a skill's name is a duplicate: the skill (higher precedence) is kept.
    if (!expected.has(id)) expected.set(id, /^context:\s*fork\s*$/m.test(readFileSync(source, 'utf8')));
  };
  const skills = join(corpus.root, 'claude', 'skills');
  for (const name of existsSync(skills) ? readdirSync(skills).sort() : []) {
    const path = join(skills, name);
    if (statSync(path).isDirectory()) {
      if (existsSync(join(path, 'SKILL.md'))) place(join(path, 'SKILL.md'), join(fixture.cwd, '.tessera', 'skills', name, 'SKILL.md'), name);
    } else if (name.endsWith('__SKILL.md')) {
      const id = name.slice(0, -'__SKILL.md'.length);
      place(path, join(fixture.cwd, '.tessera', 'skills', id, 'SKILL.md'), id);
    }
  }
  const commands = join(corpus.root, 'claude', 'commands');
  for (const name of existsSync(commands) ? readdirSync(commands).sort() : []) {
    if (name.endsWith('.md')) place(join(commands, name), join(fixture.cwd, '.claude', 'commands', name), name.slice(0, -3));
  }
  return expected;
}

function corpusSuite(corpus: Corpus): void {
  let fixture: SkillsFixture;
  let expected: Map<string, boolean>;
  let request: SkillActivationRequest;
  let activator: SkillActivator;

  beforeAll(async () => {
    fixture = new SkillsFixture();
    expected = layOut(corpus, fixture);
    const launcher = definePlugin({
      name: 'fake-launcher',
      provides: [SubagentLauncher],
      register: ({ bind }) => void bind(SubagentLauncher).toConstantValue({ launch: async () => ({ text: 'done', agentId: 'a' }) }),
    });
    // No allow rules: every `!cmd` in the corpus needs approval, so none runs.
    const kernel = await fixture.kernel({ replace: [permissionsPlugin({})], plugins: [launcher] });
    const session = kernel.createSession({ cwd: fixture.cwd });
    activator = session.services.get(SkillActivator);
    request = { invocation: 'user-slash', sessionId: session.sessionId, cwd: fixture.cwd, services: session.services };
  });
  afterAll(() => fixture.dispose());

  it('discovers every SKILL.md and command file', async () => {
    expect(expected.size).toBeGreaterThan(0);
    const listed = await activator.list(request);
    expect(listed.map((entry) => entry.id).sort()).toEqual([...expected.keys()].sort());
    expect(fixture.reports.filter((report) => report.severity === 'error')).toEqual([]);
  });

  it('runs each one through an InteractiveSession with a model turn (the scripted provider answers)', async () => {
    const provider = new ScriptedProvider({ turns: () => ({ text: 'done' }) });
    const launcher = definePlugin({
      name: 'fake-launcher',
      provides: [SubagentLauncher],
      register: ({ bind }) => void bind(SubagentLauncher).toConstantValue({ launch: async () => ({ text: 'forked done', agentId: 'a' }) }),
    });
    const kernel = await fixture.kernel({ replace: [permissionsPlugin({}), scriptedProvider(provider)], plugins: [launcher] });
    const session = new InteractiveSession({ kernel, cwd: fixture.cwd });
    for (const [id, fork] of expected) {
      const before = provider.requests.length;
      const result = await session.executeSkillCommandByName(id, 'example-argument', { invocation: 'user-slash' });
      expect(result, id).toMatchObject({ success: true, message: fork ? 'forked done' : 'done' });
      expect(provider.requests.length, id).toBe(before + (fork ? 0 : 1));
    }
    expect(session.getFullHistory().filter((entry) => entry.type === 'skill-activation').length).toBe(expected.size * 2);
    await session.shutdown();
  });

  it('activates each one (inject unless it asks for a fork) without throwing or running commands', async () => {
    for (const [id, fork] of expected) {
      const activation = await activator.activate(id, 'example-argument', request);
      expect(activation.mode, id).toBe(fork ? 'fork' : 'inject');
      expect(activation.prompt.length, id).toBeGreaterThan(0);
    }
  });
}

describe('skills over the compat fixtures', () => corpusSuite(fixtureCorpus));
describeRealCorpus('skills', (corpus) => corpusSuite(corpus));
