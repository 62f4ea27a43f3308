import { CommandContribution, SkillSourceContribution, type ICommandHostContext, type ICommandModule } from '@tessera/contracts';
import { createKernel, definePlugin, InteractiveSession, KernelCompositionError, type Kernel } from '@tessera/kernel';
import { permissionsPlugin } from '@tessera/plugin-permissions';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, describe, expect, it } from 'vitest';

let kernel: Kernel | undefined;
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
});

const modulePlugin = (module: ICommandModule) =>
  definePlugin({ name: `module-${module.name}`, contributes: [CommandContribution], register: ({ bind }) => void bind(CommandContribution).toConstantValue(module) });

function noteModule(seen: Array<{ args: string; invocation: ICommandHostContext['invocation'] }>): ICommandModule {
  return {
    name: 'notes',
    systemCommands: [
      {
        name: 'note',
        description: 'Keep a note',
        argumentHint: '<text>',
        modelInvocable: true,
        execute: (context, args) => {
          seen.push({ args, invocation: context.invocation });
          return { success: true, message: `noted: ${args}` };
        },
      },
      { name: 'secret', description: 'Users only', execute: () => ({ success: true, message: 'hidden' }) },
    ],
    commandDescriptors: [{ name: 'note', description: 'Keep a short note for later.', usage: 'Use when the user asks you to remember something.' }],
  };
}

describe('model-invocable command tools', () => {
  it('projects model-invocable commands as tessera_command_<id>, routed through the same handler', async () => {
    const seen: Array<{ args: string; invocation: ICommandHostContext['invocation'] }> = [];
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ id: 'n', name: 'tessera_command_note', input: { args: 'buy milk' } }] }, { text: 'done' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [modulePlugin(noteModule(seen))] }) });
    const session = new InteractiveSession({ kernel });
    await session.submit('remember to buy milk');
    const tools = provider.requests[0]!.tools;
    expect(tools.map((tool) => tool.name)).toContain('tessera_command_note');
    expect(tools.map((tool) => tool.name)).not.toContain('tessera_command_secret');
    expect(tools.find((tool) => tool.name === 'tessera_command_note')!.description).toBe('Keep a short note for later.\n\nUse when the user asks you to remember something.');
    expect(seen).toEqual([{ args: 'buy milk', invocation: 'model-tool' }]);
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('noted: buy milk');
    expect(await session.executeCommand('/note', 'by hand')).toMatchObject({ message: 'noted: by hand' });
    expect(seen.at(-1)).toEqual({ args: 'by hand', invocation: 'user-slash' });
    await session.shutdown();
  });

  it('gives a session made elsewhere (options.session) the command tools too', async () => {
    const seen: Array<{ args: string; invocation: ICommandHostContext['invocation'] }> = [];
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ id: 'n', name: 'tessera_command_note', input: { args: 'eggs' } }] }, { text: 'done' }, { text: 'plain' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [modulePlugin(noteModule(seen))] }) });
    const existing = kernel.createSession();
    const facade = new InteractiveSession({ session: existing });
    await facade.submit('remember eggs');
    expect(provider.requests[0]!.tools.map((tool) => tool.name)).toContain('tessera_command_note');
    expect(seen).toEqual([{ args: 'eggs', invocation: 'model-tool' }]);
    expect(await facade.executeCommand('/note', 'by hand')).toMatchObject({ message: 'noted: by hand' });
    await facade.shutdown();
  });

  it('projects nothing when no command is model-invocable', async () => {
    const provider = new ScriptedProvider({ turns: [{ text: 'hi' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, plugins: [modulePlugin({ name: 'plain', systemCommands: [{ name: 'plain', description: 'x', execute: () => ({ success: true, message: '' }) }] })] }) });
    const session = new InteractiveSession({ kernel });
    await session.submit('hi');
    expect(provider.requests[0]!.tools.some((tool) => tool.name.startsWith('tessera_command_'))).toBe(false);
    await session.shutdown();
  });

  it('permission rules apply to the projected tools like to any tool', async () => {
    const seen: Array<{ args: string; invocation: ICommandHostContext['invocation'] }> = [];
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ id: 'n', name: 'tessera_command_note', input: { args: 'x' } }] }, { text: 'ok' }] });
    kernel = await createKernel({ plugins: testPreset({ provider, replace: [permissionsPlugin({ rules: { deny: ['tessera_command_note'] } })], plugins: [modulePlugin(noteModule(seen))] }) });
    const session = new InteractiveSession({ kernel, permissionMode: 'bypassPermissions' });
    await session.submit('go');
    expect(seen).toEqual([]);
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('Permission denied');
    await session.shutdown();
  });

  it('refuses at composition two commands that project to one tool name', async () => {
    const both = modulePlugin({
      name: 'clash',
      systemCommands: ['a.b', 'a_b'].map((name) => ({ name, description: name, modelInvocable: true, execute: () => ({ success: true, message: '' }) })),
    });
    const error = await createKernel({ plugins: testPreset({ turns: [], plugins: [both] }) }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(KernelCompositionError);
    expect((error as KernelCompositionError).problems).toEqual([expect.objectContaining({ kind: 'invalid_command_tool', message: expect.stringContaining('tessera_command_a_b') })]);
  });
});

describe('command registry and skill aliases', () => {
  it('filters by prefix, resolves plugin-qualified names, lists skills and runs them through the skills command', async () => {
    const skillCalls: string[] = [];
    kernel = await createKernel({
      plugins: testPreset({
        turns: [],
        plugins: [
          modulePlugin({
            name: 'core',
            systemCommands: [
              { name: 'compact', description: 'Compact', execute: () => ({ success: true, message: 'c' }) },
              { name: 'context', description: 'Context', execute: () => ({ success: true, message: 'x' }) },
              { name: 'skills', description: 'Skills', execute: (_context, args) => (skillCalls.push(args), { success: true, message: `skill ${args}` }) },
            ],
            commandSources: [{ name: 'plugin', getCommands: () => [{ name: 'my-plugin:audit', description: 'Audit', source: 'plugin:my-plugin' }] }],
          }),
          definePlugin({
            name: 'skill-folder',
            contributes: [SkillSourceContribution],
            register: ({ bind }) =>
              void bind(SkillSourceContribution).toConstantValue({
                name: 'folder',
                skills: () => [
                  { id: 'deploy', name: 'deploy', description: 'Ship it', source: 'project' },
                  { id: 'internal', name: 'internal', description: 'Model only', source: 'project', userInvocable: false },
                ],
              }),
          }),
        ],
      }),
    });
    const session = new InteractiveSession({ kernel });
    const registry = await session.getCommandRegistry();
    expect(registry.getCommands('co').map((command) => command.name)).toEqual(['compact', 'context']);
    expect(registry.getCommands('/aud').map((command) => command.name)).toEqual(['my-plugin:audit']);
    expect(registry.resolveQualifiedName('audit')).toBe('my-plugin:audit');
    expect(registry.getCommands().map((command) => command.name)).toContain('deploy');
    expect(registry.getCommands().map((command) => command.name)).not.toContain('internal');
    expect(await session.executeCommand('/deploy', 'staging')).toMatchObject({ message: 'skill deploy staging' });
    expect(skillCalls).toEqual(['deploy staging']);
    expect(await session.executeCommand('nonexistent')).toBeNull();
    await session.shutdown();
  });
});
