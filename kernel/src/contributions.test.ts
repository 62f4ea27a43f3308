import {
  CommandContribution,
  SessionLogger,
  SessionServiceFactoryContribution,
  SkillSourceContribution,
  ToolContribution,
  TransportContribution,
  createToken,
  type ICommandModule,
  type SessionServiceFactory,
  type SessionServices,
  type Tool,
} from '@tessera/contracts';
import { scriptedProvider } from '@tessera/plugin-provider-scripted';
import { describe, expect, it } from 'vitest';
import { KernelCompositionError } from './errors.js';
import { createKernel } from './kernel.js';
import { definePlugin, type Plugin } from './plugin.js';
import { RecordingSessionLogger } from './testing/session-loggers.js';

const commandModule = (module: string, ...names: string[]): ICommandModule => ({
  name: module,
  systemCommands: names.map((name) => ({ name, description: `${name} command`, execute: () => ({ message: name, success: true }) })),
});

const commandPlugin = (module: string, ...names: string[]): Plugin =>
  definePlugin({
    name: `commands-${module}`,
    contributes: [CommandContribution],
    register({ bind }) {
      bind(CommandContribution).toConstantValue(commandModule(module, ...names));
    },
  });

describe('command, skill and transport contribution points', () => {
  it('collects command modules, skill sources and transports from any plugin', async () => {
    const kernel = await createKernel({
      plugins: [
        scriptedProvider({ turns: [] }),
        commandPlugin('alpha', 'alpha', 'shared-prefix'),
        commandPlugin('beta', 'beta'),
        definePlugin({
          name: 'finders',
          contributes: [SkillSourceContribution, TransportContribution],
          register({ bind }) {
            bind(SkillSourceContribution).toConstantValue({ name: 'folder', skills: () => [{ id: 'deploy', name: 'deploy', description: 'Ship it', source: 'project' }] });
            bind(TransportContribution).toConstantValue({ name: 'loopback', attach: () => undefined, start: async () => undefined, stop: async () => undefined });
          },
        }),
      ],
    });
    expect(kernel.getAll(CommandContribution).flatMap((module) => (module.systemCommands ?? []).map((command) => command.name))).toEqual(['alpha', 'shared-prefix', 'beta']);
    const [source] = kernel.getAll(SkillSourceContribution);
    expect(await source!.skills({ sessionId: 's', cwd: '/' })).toEqual([expect.objectContaining({ id: 'deploy' })]);
    expect(kernel.getAll(TransportContribution).map((transport) => transport.name)).toEqual(['loopback']);
    expect(kernel.describe().plugins.find((plugin) => plugin.name === 'finders')!.contributes).toEqual(['SkillSource', 'TransportContribution']);
    await kernel.shutdown();
  });

  it('refuses two executable commands with one name, naming both modules', async () => {
    const error = await createKernel({ plugins: [scriptedProvider({ turns: [] }), commandPlugin('one', 'deploy'), commandPlugin('two', 'deploy', 'other')] }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(KernelCompositionError);
    const problems = (error as KernelCompositionError).problems;
    expect(problems).toEqual([expect.objectContaining({ kind: 'duplicate_command', token: 'deploy' })]);
    expect(problems[0]!.message).toMatch(/"one", "two"/);
  });
});

describe('per-session services (SessionServiceFactory)', () => {
  const Counter = createToken<{ sessionId: string; count: number }>('test/Counter');

  function counterPlugin(disposed: string[]): Plugin {
    return definePlugin({
      name: 'per-session-counter',
      contributes: [SessionServiceFactoryContribution],
      register({ bind }) {
        const factory: SessionServiceFactory<{ sessionId: string; count: number }> = {
          token: Counter,
          create: (seed) => ({ sessionId: seed.sessionId, count: 0 }),
          dispose: (value) => void disposed.push(value.sessionId),
        };
        bind(SessionServiceFactoryContribution).toConstantValue(factory as SessionServiceFactory);
      },
    });
  }

  it('makes one value per session, reachable from hooks and tools, released when the session shuts down', async () => {
    const disposed: string[] = [];
    const seen: Array<{ sessionId: string; count: number }> = [];
    const countingTool: Tool = {
      name: 'Count',
      description: 'counts',
      parameters: { type: 'object' },
      execute: (_input, context) => {
        const counter = context.services!.get(Counter);
        counter.count += 1;
        seen.push(counter);
        return { success: true, output: String(counter.count) };
      },
    };
    const kernel = await createKernel({
      plugins: [
        scriptedProvider({ turns: [{ toolCalls: [{ name: 'Count', input: {} }] }, { text: 'done' }, { toolCalls: [{ name: 'Count', input: {} }] }, { text: 'done' }] }),
        counterPlugin(disposed),
        definePlugin({ name: 'count-tool', contributes: [ToolContribution], register: ({ bind }) => void bind(ToolContribution).toConstantValue(countingTool) }),
      ],
    });
    const first = kernel.createSession({ sessionId: 'first' });
    const second = kernel.createSession({ sessionId: 'second' });
    await first.run('go');
    await second.run('go');
    expect(seen.map((counter) => [counter.sessionId, counter.count])).toEqual([
      ['first', 1],
      ['second', 1],
    ]);
    expect(first.services.get(Counter)).toBe(seen[0]);
    await first.shutdown();
    expect(disposed).toEqual(['first']);
    await kernel.shutdown();
    expect(disposed).toEqual(['first', 'second']);
  });

  it('wins over a kernel-wide binding of the same token for its sessions: a per-session logger', async () => {
    const loggers: RecordingSessionLogger[] = [];
    const kernel = await createKernel({
      plugins: [
        scriptedProvider({ turns: [{ text: 'a' }, { text: 'b' }] }),
        definePlugin({
          name: 'per-session-logger',
          contributes: [SessionServiceFactoryContribution],
          register({ bind }) {
            bind(SessionServiceFactoryContribution).toConstantValue({
              token: SessionLogger,
              create: () => {
                const logger = new RecordingSessionLogger();
                loggers.push(logger);
                return logger;
              },
            } as SessionServiceFactory);
          },
        }),
      ],
    });
    await kernel.createSession({ sessionId: 'one' }).run('x');
    await kernel.createSession({ sessionId: 'two' }).run('y');
    expect(loggers).toHaveLength(2);
    expect(loggers.map((logger) => new Set(logger.events.map((entry) => entry.sessionId)))).toEqual([new Set(['one']), new Set(['two'])]);
    await kernel.shutdown();
  });

  it('refuses two factories for one token', async () => {
    const twice = (name: string): Plugin =>
      definePlugin({
        name,
        contributes: [SessionServiceFactoryContribution],
        register: ({ bind }) => void bind(SessionServiceFactoryContribution).toConstantValue({ token: Counter, create: () => ({}) } as SessionServiceFactory),
      });
    await expect(createKernel({ plugins: [scriptedProvider({ turns: [] }), twice('a'), twice('b')] })).rejects.toMatchObject({
      problems: [expect.objectContaining({ kind: 'duplicate_session_service', token: 'test/Counter' })],
    });
  });
});

describe('PluginActivation: per-kernel state without maps keyed by kernel', () => {
  it('one plugin value in two kernels keeps two states; boot and shutdown run per kernel, in order', async () => {
    const events: string[] = [];
    let kernels = 0;
    const Label = createToken<string>('test/Label');
    const plugin = definePlugin({
      name: 'stateful',
      provides: [Label],
      register({ bind }) {
        const mine = `kernel-${++kernels}`;
        let booted = false;
        bind(Label).toDynamicValue(() => (booted ? mine : 'not booted'));
        return {
          boot: () => {
            booted = true;
            events.push(`boot ${mine}`);
          },
          shutdown: () => void events.push(`shutdown ${mine}`),
        };
      },
      boot: () => void events.push('plugin boot'),
      shutdown: () => void events.push('plugin shutdown'),
    });
    const one = await createKernel({ plugins: [scriptedProvider({ turns: [] }), plugin] });
    const two = await createKernel({ plugins: [scriptedProvider({ turns: [] }), plugin] });
    expect([one.get(Label), two.get(Label)]).toEqual(['kernel-1', 'kernel-2']);
    await one.shutdown();
    await two.shutdown();
    expect(events).toEqual(['plugin boot', 'boot kernel-1', 'plugin boot', 'boot kernel-2', 'shutdown kernel-1', 'plugin shutdown', 'shutdown kernel-2', 'plugin shutdown']);
  });
});

describe('ToolContext.services', () => {
  it('is the session\'s services', async () => {
    let given: SessionServices | undefined;
    const kernel = await createKernel({
      plugins: [
        scriptedProvider({ turns: [{ toolCalls: [{ name: 'Peek', input: {} }] }, { text: 'ok' }] }),
        definePlugin({
          name: 'peek',
          contributes: [ToolContribution],
          register: ({ bind }) =>
            void bind(ToolContribution).toConstantValue({
              name: 'Peek',
              description: 'peeks',
              parameters: { type: 'object' },
              execute: (_input, context) => {
                given = context.services;
                return { success: true, output: '' };
              },
            }),
        }),
      ],
    });
    const session = kernel.createSession();
    await session.run('go');
    expect(given).toBe(session.services);
    await kernel.shutdown();
  });
});
