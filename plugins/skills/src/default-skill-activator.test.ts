import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  PermissionPolicy,
  SandboxPaths,
  serviceOverride,
  SkillActivator,
  SubagentLauncher,
  TesseraError,
  type ISkillActivationEvent,
  type SessionServices,
  type SkillActivationRequest,
  type SubagentLaunchRequest,
} from '@tessera/contracts';
import { definePlugin, type Kernel } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SkillsFixture, skillFile } from './skills.test-helper.js';

let fixture: SkillsFixture;
beforeEach(() => {
  fixture = new SkillsFixture();
});
afterEach(() => fixture.dispose());

type Invocation = SkillActivationRequest['invocation'];

function activatorOf(kernel: Kernel, invocation: Invocation = 'user-slash', extra: Partial<SkillActivationRequest> = {}) {
  const session = kernel.createSession({ cwd: fixture.cwd, sessionId: 'session-1' });
  const activator = session.services.get(SkillActivator);
  const request: SkillActivationRequest = { invocation, sessionId: session.sessionId, cwd: session.cwd, services: session.services, ...extra };
  return (name: string, args = '', override: Partial<SkillActivationRequest> = {}) => activator.activate(name, args, { ...request, ...override });
}

const caught = (promise: Promise<unknown>): Promise<TesseraError> => promise.then(() => { throw new Error('expected a rejection'); }, (error: TesseraError) => error);

describe('SkillActivator: names and invocation', () => {
  it('refuses an unknown skill with close names', async () => {
    fixture.write('.claude/skills/deploy/SKILL.md', skillFile({ description: 'Ship' }, 'x'));
    fixture.write('.claude/skills/review/SKILL.md', skillFile({ description: 'Look' }, 'x'));
    const activate = activatorOf(await fixture.kernel());
    const error = await caught(activate('deplyo'));
    expect(error).toMatchObject({ code: 'skill_not_found', category: 'validation', details: { name: 'deplyo', suggestions: ['deploy'] } });
    expect(error.message).toContain('Did you mean "deploy"?');
  });

  it('refuses disable-model-invocation from the model and runs it for the user', async () => {
    fixture.write('.claude/skills/release/SKILL.md', skillFile({ description: 'Release', 'disable-model-invocation': 'true' }, 'Cut a release.'));
    const kernel = await fixture.kernel();
    const error = await caught(activatorOf(kernel, 'model-tool')('release'));
    expect(error).toMatchObject({ code: 'skill_not_model_invocable', category: 'permission' });
    const events: ISkillActivationEvent[] = [];
    const result = await activatorOf(kernel, 'user-slash')('/release', '', { onEvent: (event) => void events.push(event) });
    expect(result).toMatchObject({ mode: 'inject', prompt: 'Cut a release.', skill: { id: 'release', modelInvocable: false } });
    expect(events.map((event) => [event.status, event.invocation, event.mode, event.skillName])).toEqual([
      ['started', 'user-slash', 'inject', 'release'],
      ['completed', 'user-slash', 'inject', 'release'],
    ]);
  });
});

describe('SkillActivator: rendering', () => {
  it('substitutes $ARGUMENTS, positional words, the skill dir and the session id', async () => {
    const file = fixture.write(
      '.tessera/skills/fix/SKILL.md',
      skillFile({ description: 'Fix' }, 'All: $ARGUMENTS\nFirst: $0 Second: $1\nDir: ${CLAUDE_SKILL_DIR}\nSession: ${CLAUDE_SESSION_ID}\n'),
    );
    const activate = activatorOf(await fixture.kernel());
    const result = await activate('fix', 'src/a.ts "two words"');
    expect(result.prompt).toBe(`All: src/a.ts "two words"\nFirst: src/a.ts Second: two words\nDir: ${join(file, '..')}\nSession: session-1\n`);
  });

  it('counts $1 as the first word with positionalBase 1, and activates command files', async () => {
    fixture.write('.claude/commands/greet.md', 'Hello $1 and $2.');
    const activate = activatorOf(await fixture.kernel({ skills: { positionalBase: 1 } }));
    expect((await activate('greet', 'ada grace')).prompt).toBe('Hello ada and grace.');
  });

  it('runs a !`cmd` that a permission rule allows, in the session cwd', async () => {
    const file = fixture.write('.claude/skills/status/SKILL.md', skillFile({ description: 'Status' }, 'Branch:\n!`echo on-$0`\nDone.\n'));
    const kernel = await fixture.kernel({ replace: [permissionsPlugin({ rules: { allow: ['Bash(echo:*)'] } })] });
    const result = await activatorOf(kernel)('status', 'main');
    expect(result.prompt).toBe('Branch:\non-main\nDone.\n');
    expect(result.diagnostics.filter((diagnostic) => diagnostic.file === file && diagnostic.severity !== 'info')).toEqual([]);
  });

  it('never runs a !`cmd` that is denied or needs approval, and says why in its place', async () => {
    const marker = join(fixture.cwd, 'marker');
    const file = fixture.write(
      '.claude/skills/danger/SKILL.md',
      skillFile({ description: 'Danger' }, `One: !\`touch ${marker}\`\nTwo: !\`rm -f ${marker}-other\`\n`),
    );
    const kernel = await fixture.kernel({ replace: [permissionsPlugin({ rules: { allow: ['Bash(echo:*)'], deny: ['Bash(rm:*)'] } })] });
    const result = await activatorOf(kernel)('danger');
    expect(existsSync(marker)).toBe(false);
    expect(result.prompt).toMatch(/^One: \[shell command not run: `touch .*` — it needs approval.*\]\nTwo: \[shell command not run: `rm -f .*` — denied by rule `Bash\(rm:\*\)`.*\]\n$/);
    const warnings = result.diagnostics.filter((diagnostic) => diagnostic.severity === 'warning');
    expect(warnings).toEqual([
      expect.objectContaining({ file, line: 4, column: 6, message: expect.stringContaining('needs approval') }),
      expect.objectContaining({ file, line: 5, message: expect.stringContaining('denied') }),
    ]);
  });

  it('runs no !`cmd` in a session whose tools work in a sandbox (the command would run on the host)', async () => {
    const marker = join(fixture.cwd, 'marker');
    fixture.write('.claude/skills/touchy/SKILL.md', skillFile({ description: 'Touchy' }, `!\`touch ${marker}\``));
    const kernel = await fixture.kernel({ replace: [permissionsPlugin({ rules: { allow: ['Bash(touch:*)'] } })] });
    const session = kernel.createSession({ cwd: fixture.cwd, serviceOverrides: [serviceOverride(SandboxPaths, { root: '/workspace' })] });
    const result = await session.services.get(SkillActivator).activate('touchy', '', { invocation: 'user-slash', sessionId: session.sessionId, cwd: session.cwd, services: session.services });
    expect(existsSync(marker)).toBe(false);
    expect(result.prompt).toMatch(/^\[shell command not run: `touch .*` — this session's tools run in a sandbox/);
  });

  it('runs no !`cmd` when no PermissionPolicy is bound', async () => {
    const marker = join(fixture.cwd, 'marker');
    fixture.write('.claude/skills/touchy/SKILL.md', skillFile({ description: 'Touchy' }, `!\`touch ${marker}\``));
    const kernel = await fixture.kernel();
    const session = kernel.createSession({ cwd: fixture.cwd });
    // The test preset binds an allow-all policy; this view hides it.
    const services: SessionServices = {
      get: (token) => session.services.get(token),
      getAll: (token) => session.services.getAll(token),
      getOptional: (token) => (token === (PermissionPolicy as symbol) ? undefined : session.services.getOptional(token)),
    };
    const result = await session.services.get(SkillActivator).activate('touchy', '', { invocation: 'user-slash', sessionId: session.sessionId, cwd: fixture.cwd, services });
    expect(existsSync(marker)).toBe(false);
    expect(result.prompt).toContain('no PermissionPolicy is bound');
  });
});

describe('SkillActivator: context fork', () => {
  function fakeLauncher(requests: SubagentLaunchRequest[]) {
    return definePlugin({
      name: 'fake-launcher',
      provides: [SubagentLauncher],
      register: ({ bind }) =>
        void bind(SubagentLauncher).toConstantValue({
          launch: async (request) => {
            requests.push(request);
            return { text: `answer to: ${request.prompt}`, agentId: 'agent-7' };
          },
        }),
    });
  }

  it('runs the rendered prompt in the frontmatter agent through SubagentLauncher', async () => {
    fixture.write(
      '.claude/skills/research/SKILL.md',
      skillFile({ description: 'Research', context: 'fork', agent: 'Explore', model: 'haiku', 'allowed-tools': 'Read, Grep' }, 'Look into $ARGUMENTS'),
    );
    const requests: SubagentLaunchRequest[] = [];
    const kernel = await fixture.kernel({ plugins: [fakeLauncher(requests)] });
    const events: ISkillActivationEvent[] = [];
    const result = await activatorOf(kernel, 'model-tool')('research', 'auth', { onEvent: (event) => void events.push(event) });
    expect(result).toMatchObject({ mode: 'fork', prompt: 'Look into auth', result: { text: 'answer to: Look into auth', agentId: 'agent-7' }, skill: { agent: 'Explore', allowedTools: ['Read', 'Grep'] } });
    expect(requests).toEqual([expect.objectContaining({ prompt: 'Look into auth', agentType: 'Explore', model: 'haiku', parentSessionId: 'session-1', cwd: fixture.cwd, allowedTools: ['Read', 'Grep'] })]);
    expect(result.diagnostics).not.toContainEqual(expect.objectContaining({ path: 'allowed-tools' }));
    expect(events.map((event) => `${event.mode}:${event.status}`)).toEqual(['fork:started', 'fork:completed']);
  });

  it('defaults to general-purpose, and refuses a fork without a launcher', async () => {
    fixture.write('.claude/skills/bg/SKILL.md', skillFile({ description: 'Background', context: 'fork' }, 'Work.'));
    const requests: SubagentLaunchRequest[] = [];
    await activatorOf(await fixture.kernel({ plugins: [fakeLauncher(requests)] }))('bg');
    expect(requests[0]!.agentType).toBe('general-purpose');

    const events: ISkillActivationEvent[] = [];
    const error = await caught(activatorOf(await fixture.kernel())('bg', '', { onEvent: (event) => void events.push(event) }));
    expect(error).toMatchObject({ code: 'skill_fork_unavailable' });
    expect(events.map((event) => event.status)).toEqual(['started', 'failed']);
  });
});
