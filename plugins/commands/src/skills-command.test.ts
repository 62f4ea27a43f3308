import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, InteractiveSession, type Kernel } from '@tessera/kernel';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { skills } from '@tessera/plugin-skills';
import { systemPrompt } from '@tessera/plugin-system-prompt';
import { testPreset } from '@tessera/preset-test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { skillsCommand } from './index.js';

let dir: string;
let kernel: Kernel | undefined;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tessera-skills-command-')));
  await mkdir(join(dir, '.tessera/skills/greet'), { recursive: true });
  await writeFile(join(dir, '.tessera/skills/greet/SKILL.md'), '---\ndescription: Greets someone warmly\n---\nSay hello to $ARGUMENTS in one line.\n');
  await mkdir(join(dir, '.tessera/skills/private'), { recursive: true });
  await writeFile(join(dir, '.tessera/skills/private/SKILL.md'), '---\ndescription: Only for people\ndisable-model-invocation: true\n---\nSecret steps.\n');
});
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function compose(provider: ScriptedProvider): Promise<InteractiveSession> {
  kernel = await createKernel({ plugins: testPreset({ provider, plugins: [skills({ home: join(dir, 'home') }), skillsCommand(), systemPrompt({ git: false })] }) });
  return new InteractiveSession({ kernel, cwd: dir });
}

describe('/skills and skill activation', () => {
  it('a user runs /greet world: the rendered skill is submitted, the activation recorded and kept in the record', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'Hello, world!' }] });
    const session = await compose(provider);
    const activations: string[] = [];
    session.on('skill_activation', (event) => activations.push(`${event.skillName}:${event.invocation}:${event.status}`));
    const result = await session.executeCommand('/greet', 'world');
    expect(result).toMatchObject({ success: true, message: 'Hello, world!', data: { mode: 'inject', skill: 'greet' } });
    expect(JSON.stringify(provider.requests[0]!.messages)).toContain('Say hello to world in one line.');
    expect(activations).toEqual(['greet:user-slash:started', 'greet:user-slash:completed']);
    expect(session.getFullHistory().filter((entry) => entry.type === 'skill-activation')).toHaveLength(2);
    expect(session.getSession().toRecord().skillActivationEvents).toHaveLength(2);
    // The system prompt lists skills (name and description) because a model-invocable skills command is composed.
    expect(provider.requests[0]!.system).toContain('greet: Greets someone warmly');
    expect(provider.requests[0]!.system).not.toContain('Secret steps');
    await session.shutdown();
  });

  it('the model activates a skill through tessera_command_skills and gets its instructions; a disabled one is refused', async () => {
    const provider = new ScriptedProvider({
      turns: [{ toolCalls: [{ id: 'a', name: 'tessera_command_skills', input: { args: 'greet Ada' } }, { id: 'b', name: 'tessera_command_skills', input: { args: 'private' } }] }, { text: 'done' }],
    });
    const session = await compose(provider);
    await session.submit('greet Ada please');
    const toolMessages = JSON.stringify(provider.requests[1]!.messages);
    expect(toolMessages).toContain('Say hello to Ada in one line.');
    expect(toolMessages).toMatch(/private.*(not|cannot).*model|model.*private/i);
    await session.shutdown();
  });

  it('/skills lists what a person may run', async () => {
    const session = await compose(new ScriptedProvider({ turns: [] }));
    const listed = await session.executeCommand('skills');
    expect(listed!.message).toContain('greet: Greets someone warmly');
    expect(listed!.message).toContain('private: Only for people');
    await session.shutdown();
  });
});
