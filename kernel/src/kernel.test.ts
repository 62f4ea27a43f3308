import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  Clock,
  createToken,
  Diagnostics,
  processWarningDiagnostics,
  type DiagnosticReport,
  Provider,
  SessionStore,
  serviceOverride,
  ToolContribution,
  type ISessionRecord,
} from '@tessera/contracts';
import { ScriptedProvider, scriptedProvider } from '@tessera/plugin-provider-scripted';
import { defineTool, toolsPlugin } from './define-tool.js';
import { KernelCompositionError } from './errors.js';
import { createKernel } from './kernel.js';
import { definePlugin, type Plugin } from './plugin.js';
import type { Session } from './session.js';
import { Stage } from './stage.js';
import { FakeClock } from './testing/fake-clock.js';
import { InMemorySessionStore } from './testing/in-memory-session-store.js';

const Widget = createToken<{ id: string }>('test/Widget');

function provides(name: string, token = Widget, extra: Partial<Plugin> = {}): Plugin {
  return definePlugin({
    name,
    provides: [token],
    register({ bind }) {
      bind(token).toConstantValue({ id: name } as never);
    },
    ...extra,
  });
}

async function compositionError(plugins: Parameters<typeof createKernel>[0]['plugins']): Promise<KernelCompositionError> {
  const error = await createKernel({ plugins }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(KernelCompositionError);
  return error as KernelCompositionError;
}

describe('createKernel composition', () => {
  it('names the plugin and token when a required token has no provider', async () => {
    const error = await compositionError([definePlugin({ name: 'needs-widget', requires: [Widget] })]);
    expect(error.message).toContain('Plugin "needs-widget" requires test/Widget, but no plugin provides it');
    expect(error.problems).toEqual([expect.objectContaining({ kind: 'missing_provider', plugins: ['needs-widget'], token: 'test/Widget' })]);
    expect(error).toMatchObject({ code: 'kernel_composition', category: 'configuration', recoverable: false });
  });

  it('names both plugins when two provide one single-capability token', async () => {
    const error = await compositionError([provides('first'), provides('second')]);
    expect(error.message).toContain('Token test/Widget is provided by "first" and "second"');
    expect(error.message).toContain("replaces: 'first'");
    expect(error.problems[0]).toMatchObject({ kind: 'duplicate_provider', plugins: ['first', 'second'] });
  });

  it('lets a plugin with replaces take the other one\'s place', async () => {
    const registered = vi.fn();
    const original = provides('original', Widget, { register: registered });
    const kernel = await createKernel({ plugins: [original, provides('better', Widget, { replaces: 'original' })] });
    expect(kernel.get(Widget)).toEqual({ id: 'better' });
    expect(registered).not.toHaveBeenCalled();
    expect(kernel.describe().replaced).toEqual({ original: 'better' });
    expect(kernel.describe().plugins.map((plugin) => plugin.name)).toEqual(['better']);
  });

  it('reports every problem at once', async () => {
    const error = await compositionError([
      provides('a'),
      provides('b'),
      provides('a'),
      definePlugin({ name: 'c', requires: [Clock] }),
    ]);
    expect(error.problems.map((problem) => problem.kind).sort()).toEqual(['duplicate_plugin', 'duplicate_provider', 'missing_provider']);
  });

  it('refuses a binding the plugin did not declare', async () => {
    const sneaky = definePlugin({
      name: 'sneaky',
      register({ bind }) {
        bind(Widget).toConstantValue({ id: 'x' });
      },
    });
    const error = await compositionError([sneaky]);
    expect(error.problems[0]).toMatchObject({ kind: 'undeclared_binding', plugins: ['sneaky'], token: 'test/Widget' });
  });

  it('reports a plugin whose register throws, by name', async () => {
    const error = await compositionError([
      definePlugin({
        name: 'broken',
        register() {
          throw new Error('bad options');
        },
      }),
    ]);
    expect(error.message).toContain('Plugin "broken" threw while registering: bad options');
  });

  it('rejects entries that are not plugins', async () => {
    const error = await compositionError([{ provides: [] } as unknown as Plugin]);
    expect(error.problems[0]!.kind).toBe('invalid_plugin');
  });

  it('flattens nested arrays and ignores falsy entries', async () => {
    const kernel = await createKernel({
      plugins: [[provides('a'), [false, null, undefined, [0, '']]], false && provides('never')],
    });
    expect(kernel.describe().plugins.map((plugin) => plugin.name)).toEqual(['a']);
  });
});

describe('kernel lifecycle', () => {
  it('boots in order, shuts down in reverse, once', async () => {
    const calls: string[] = [];
    const plugin = (name: string): Plugin =>
      definePlugin({
        name,
        boot: async () => void calls.push(`boot:${name}`),
        shutdown: async () => void calls.push(`shutdown:${name}`),
        register({ hooks }) {
          hooks.ready.tap(name, () => void calls.push(`ready:${name}`));
        },
      });
    const kernel = await createKernel({ plugins: [plugin('a'), plugin('b')] });
    expect(calls).toEqual(['boot:a', 'boot:b', 'ready:a', 'ready:b']);
    calls.length = 0;
    await Promise.all([kernel.shutdown(), kernel.shutdown()]);
    expect(calls).toEqual(['shutdown:b', 'shutdown:a']);
  });

  it('shuts down booted plugins when a later one fails to boot', async () => {
    const shutdown = vi.fn();
    const error = await createKernel({
      plugins: [
        definePlugin({ name: 'ok', boot: () => {}, shutdown }),
        definePlugin({
          name: 'bad',
          boot: () => {
            throw new Error('port in use');
          },
        }),
      ],
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KernelCompositionError);
    expect((error as Error).message).toContain('Plugin "bad" failed to boot: port in use');
    expect(shutdown).toHaveBeenCalledTimes(1);
  });

  it('shuts down booted plugins when a ready tap fails', async () => {
    const shutdown = vi.fn();
    const error = await createKernel({
      plugins: [
        definePlugin({
          name: 'server',
          shutdown,
          register: ({ hooks }) =>
            hooks.ready.tap('server', () => {
              throw new Error('cannot listen');
            }),
        }),
      ],
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain('A boot/ready hook tap failed: cannot listen');
    expect(shutdown).toHaveBeenCalledTimes(1);
  });

  it('keeps shutting down when one plugin fails, and reports it', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const later = vi.fn();
    const kernel = await createKernel({
      plugins: [
        definePlugin({ name: 'first', shutdown: later }),
        definePlugin({
          name: 'second',
          shutdown: () => {
            throw new Error('stuck');
          },
        }),
      ],
    });
    await kernel.shutdown();
    expect(later).toHaveBeenCalled();
    expect(String(warn.mock.calls[0]![0])).toContain('plugin "second": stuck');
    warn.mockRestore();
  });

  it('lets a plugin decorate what another binds, whatever the plugin order', async () => {
    const wrap = (tag: string): Plugin =>
      definePlugin({ name: `wrap-${tag}`, register: ({ decorate }) => decorate(Widget, (widget) => ({ id: `${tag}(${widget.id})` })) });
    const kernel = await createKernel({ plugins: [wrap('a'), provides('base'), wrap('b')] });
    expect(kernel.get(Widget)).toEqual({ id: 'b(a(base))' });
    expect(kernel.get(Widget)).toBe(kernel.get(Widget));
    expect(kernel.describe().decorated).toEqual({ 'test/Widget': ['wrap-a', 'wrap-b'] });
  });

  it('describes plugins and hook taps', async () => {
    const kernel = await createKernel({
      plugins: [
        provides('widgets'),
        definePlugin({
          name: 'auditor',
          requires: [Widget],
          optional: [Clock],
          register({ hooks }) {
            hooks.preToolUse.tap({ name: 'auditor', stage: Stage.Guard }, () => undefined);
            hooks.textDelta.tap({ name: 'auditor:meter', stage: Stage.Observe }, () => undefined);
          },
        }),
      ],
    });
    const description = kernel.describe();
    expect(description.plugins[0]!.taps).toEqual([]);
    expect(description.plugins[1]).toEqual({
      name: 'auditor',
      provides: [],
      requires: ['test/Widget'],
      optional: ['Clock'],
      contributes: [],
      replaces: [],
      // In hook order (the order of `kernel.hooks`), then tap order.
      taps: [
        { hook: 'textDelta', name: 'auditor:meter', stage: Stage.Observe },
        { hook: 'preToolUse', name: 'auditor', stage: Stage.Guard },
      ],
    });
    expect(description.hooks.preToolUse).toEqual([{ name: 'auditor', stage: Stage.Guard }]);
    expect(Object.isFrozen(kernel.hooks)).toBe(true);
  });

  it('resolves services per session: a rebind reaches sessions created afterwards, never a running one', async () => {
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), provides('first')] });
    const before = kernel.createSession();
    expect(before.services.get(Widget).id).toBe('first');
    kernel.container.rebind(Widget).toConstantValue({ id: 'second' });
    const after = kernel.createSession();
    expect(after.services.get(Widget).id).toBe('second');
    expect(before.services.get(Widget).id).toBe('first');
    expect(after.services.getOptional(SessionStore)).toBeUndefined();
    expect(after.services.getAll(ToolContribution)).toEqual([]);
    await kernel.shutdown();
  });

  it('binds a Diagnostics reporter when no plugin provides one, and lets a plugin provide its own', async () => {
    const bare = await createKernel({ plugins: [] });
    expect(bare.get(Diagnostics)).toBe(processWarningDiagnostics);
    const seen: DiagnosticReport[] = [];
    const custom = await createKernel({
      plugins: [definePlugin({ name: 'sink', provides: [Diagnostics], register: ({ bind }) => void bind(Diagnostics).toConstantValue({ report: (report) => seen.push(report) }) })],
    });
    custom.get(Diagnostics).report({ severity: 'warning', code: 'X', message: 'm' });
    expect(seen).toEqual([{ severity: 'warning', code: 'X', message: 'm' }]);
  });

  it('releases container-built singletons at shutdown and builds fresh ones when the same plugin value is composed again', async () => {
    const released: number[] = [];
    let built = 0;
    const counter = definePlugin({
      name: 'counter',
      provides: [Widget],
      register({ bind }) {
        bind(Widget)
          .toResolvedValue(() => ({ id: String(++built) }))
          .inSingletonScope()
          .onDeactivation((widget) => void released.push(Number(widget.id)));
      },
    });
    const first = await createKernel({ plugins: [counter] });
    expect(first.get(Widget).id).toBe('1');
    await first.shutdown();
    expect(released).toEqual([1]);
    const second = await createKernel({ plugins: [counter] });
    expect(second.get(Widget).id).toBe('2');
    await second.shutdown();
    expect(released).toEqual([1, 2]);
  });

  it('refuses a session id that could escape a folder, before any plugin sees it', async () => {
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] })] });
    for (const id of ['../etc', 'a/b', '', '.hidden', 'x'.repeat(129), 'a..b']) {
      expect(() => kernel.createSession({ sessionId: id })).toThrow(expect.objectContaining({ code: 'invalid_session_id' }));
    }
    expect(kernel.createSession({ sessionId: 'pi-2024.05_a' }).sessionId).toBe('pi-2024.05_a');
    await kernel.shutdown();
  });

  it('says which plugin is missing when no provider is bound', async () => {
    const kernel = await createKernel({ plugins: [] });
    expect(() => kernel.createSession()).toThrow(/no plugin provides Provider/);
  });

  it('returns [] for a contribution point nobody contributed to', async () => {
    const kernel = await createKernel({ plugins: [] });
    expect(kernel.getAll(ToolContribution)).toEqual([]);
    expect(kernel.getOptional(SessionStore)).toBeUndefined();
  });
});

describe('kernel.createSession', () => {
  it('wires provider, contributed tools, store, clock and shared hooks', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'echo',
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => ({ success: true, output: text }),
    });
    const store = new InMemorySessionStore();
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const provider = new ScriptedProvider({ turns: [{ toolCalls: [{ name: 'echo', input: { text: 'hi' } }] }, { text: 'done' }] });
    const starts: string[] = [];
    const kernel = await createKernel({
      plugins: [
        scriptedProvider(provider),
        toolsPlugin(echo),
        definePlugin({ name: 'store', provides: [SessionStore], register: ({ bind }) => void bind(SessionStore).toConstantValue(store) }),
        definePlugin({ name: 'clock', provides: [Clock], register: ({ bind }) => void bind(Clock).toConstantValue(clock) }),
        definePlugin({
          name: 'watch',
          register: ({ hooks }) => hooks.sessionStart.tap('watch', ({ session }) => void starts.push(session.sessionId)),
        }),
      ],
    });
    const session = kernel.createSession({ sessionId: 'k1' });
    expect(await session.run('go')).toBe('done');
    expect(starts).toEqual(['k1']);
    const record = store.load('k1') as ISessionRecord;
    expect(record.createdAt).toBe('2030-01-01T00:00:00.000Z');
    expect(record.toolSchemas?.map((tool) => tool.name)).toEqual(['echo']);
    expect(kernel.get(Provider)).toBe(provider);
  });

  it('releases a session once it has shut down', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [{ text: 'x' }] })] });
    let session: Session | undefined = kernel.createSession();
    await session.run('go');
    await session.shutdown();
    const probe = new WeakRef(session);
    session = undefined;
    // WeakRef targets stay alive until the current job ends: yield to the event loop first.
    for (let attempt = 0; attempt < 10 && probe.deref(); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      gc();
    }
    expect(probe.deref()).toBeUndefined();
    await kernel.shutdown();
  });

  it('shuts down open sessions with the kernel, firing sessionEnd once each', async () => {
    const ends: string[] = [];
    const kernel = await createKernel({
      plugins: [
        scriptedProvider({ turns: [] }),
        definePlugin({ name: 'watch', register: ({ hooks }) => hooks.sessionEnd.tap('watch', ({ session }) => void ends.push(session.sessionId)) }),
      ],
    });
    const a = kernel.createSession({ sessionId: 'a' });
    kernel.createSession({ sessionId: 'b' });
    await a.shutdown();
    await kernel.shutdown();
    expect(ends.sort()).toEqual(['a', 'b']);
    expect(() => kernel.createSession()).toThrow(expect.objectContaining({ code: 'kernel_closed' }));
  });
});

describe('kernel.createSession: per-session tools and services', () => {
  const named = (name: string, output: string) =>
    defineTool({ name, description: name, inputSchema: z.object({}), execute: () => ({ success: true, output }) });

  it('replaceTools swaps a contributed tool by name (and adds a new one); serviceOverrides answer for that session only; sessionScope lists both until the session ends', async () => {
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), toolsPlugin(named('Bash', 'host'), named('Grep', 'host')), provides('widget')] });
    const replaced = kernel.createSession({
      sessionId: 'scoped',
      replaceTools: [named('Bash', 'sandbox'), named('Extra', 'extra')],
      serviceOverrides: [serviceOverride(Widget, { id: 'first' }), serviceOverride(Widget, { id: 'per-session' })],
    });
    const plain = kernel.createSession({ sessionId: 'plain' });
    expect([...replaced.toolsByName.keys()]).toEqual(['Bash', 'Grep', 'Extra']);
    const context = {} as never;
    expect(await replaced.toolsByName.get('Bash')!.execute({} as never, context)).toMatchObject({ output: 'sandbox' });
    expect(await plain.toolsByName.get('Bash')!.execute({} as never, context)).toMatchObject({ output: 'host' });
    expect(replaced.services.get(Widget)).toEqual({ id: 'per-session' });
    expect(plain.services.get(Widget)).toEqual({ id: 'widget' });
    expect(kernel.sessionScope('scoped')?.replaceTools.map((tool) => tool.name)).toEqual(['Bash', 'Extra']);
    expect(kernel.sessionScope('plain')).toBeUndefined();
    // Another session with the same id ending does not take the sandboxed one's scope away.
    const namesake = kernel.createSession({ sessionId: 'scoped' });
    await namesake.shutdown();
    expect(kernel.sessionScope('scoped')?.replaceTools.map((tool) => tool.name)).toEqual(['Bash', 'Extra']);
    await replaced.shutdown();
    expect(kernel.sessionScope('scoped')).toBeUndefined();
    await kernel.shutdown();
  });

  it('removeTools takes contributed tools (replaced ones too) away for that session; sessionScope of a session object is its own, whoever shares its id', async () => {
    const kernel = await createKernel({ plugins: [scriptedProvider({ turns: [] }), toolsPlugin(named('Bash', 'host'), named('BashOutput', 'host'), named('Grep', 'host'))] });
    const sandboxed = kernel.createSession({ sessionId: 'shared', replaceTools: [named('Bash', 'sandbox')], removeTools: ['BashOutput'], tools: [named('Own', 'own')] });
    const copy = kernel.createSession({ sessionId: 'shared' });
    expect([...sandboxed.toolsByName.keys()]).toEqual(['Bash', 'Grep', 'Own']);
    expect([...copy.toolsByName.keys()]).toEqual(['Bash', 'BashOutput', 'Grep']);
    expect(kernel.createSession({ replaceTools: [named('Bash', 'sandbox')], removeTools: ['Bash'] }).toolsByName.has('Bash')).toBe(false);
    expect(kernel.sessionScope(sandboxed)).toMatchObject({ removeTools: ['BashOutput'] });
    expect(kernel.sessionScope(copy)).toBeUndefined();
    // By id: the newest open session with one.
    expect(kernel.sessionScope('shared')).toBe(kernel.sessionScope(sandboxed));
    await sandboxed.shutdown();
    expect(kernel.sessionScope(sandboxed)).toBeUndefined();
    await kernel.shutdown();
  });
});
