import { createKernel, defineTool, toolsPlugin, type Kernel } from '@tessera/kernel';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fairRoundsPlugin } from './fair-rounds.js';

const echo = defineTool({ name: 'Echo', description: 'echo', inputSchema: z.object({ text: z.string() }), execute: ({ text }) => ({ success: true, output: text }) });

/** Three rounds per turn, answered at once (no real I/O); each round's text names the session and the round. */
function threeRoundKernel(plugins: NonNullable<Parameters<typeof testPreset>[0]>['plugins'] = [], provider?: ScriptedProvider): Promise<Kernel> {
  return createKernel({
    plugins: testPreset({
      provider: provider ?? new ScriptedProvider({ turns: threeRounds }),
      plugins: [toolsPlugin(echo), ...plugins],
    }),
  });
}

const threeRounds: NonNullable<ConstructorParameters<typeof ScriptedProvider>[0]>['turns'] = (request) => {
  const first = request.messages[0];
  const tag = typeof first?.content === 'string' ? first.content : first?.content[0]?.type === 'text' ? first.content[0].text : '?';
  const round = request.messages.filter((message) => message.role === 'tool').length + 1;
  return round < 3 ? { text: `${tag}${round}`, toolCalls: [{ id: `${tag}-${round}`, name: 'Echo', input: { text: tag } }] } : { text: `${tag}${round}` };
};

/** Session A's prompt arrives first; B's one event-loop turn later (a second request). The order of their rounds' text. */
async function roundOrder(kernel: Kernel): Promise<string[]> {
  const order: string[] = [];
  const a = kernel.createSession({ onTextDelta: (delta) => order.push(delta) });
  const b = kernel.createSession({ onTextDelta: (delta) => order.push(delta) });
  const first = a.run('A');
  await new Promise((resolve) => setImmediate(resolve));
  await Promise.all([first, b.run('B')]);
  await Promise.all([a.shutdown(), b.shutdown()]);
  return order;
}

let kernel: Kernel | undefined;
afterEach(async () => {
  await kernel?.shutdown();
  kernel = undefined;
});

describe('fairRoundsPlugin', () => {
  it('without it, a turn with an instant model runs all its rounds before a prompt that came in meanwhile starts', async () => {
    kernel = await threeRoundKernel();
    expect(await roundOrder(kernel)).toEqual(['A1', 'A2', 'A3', 'B1', 'B2', 'B3']);
  });

  it('with it, a new prompt is answered at once, and the sessions take turns round by round', async () => {
    kernel = await threeRoundKernel([fairRoundsPlugin()]);
    expect(await roundOrder(kernel)).toEqual(['A1', 'B1', 'A2', 'B2', 'A3', 'B3']);
    // Three sessions, each arriving one loop iteration after the last: nobody's first round waits for another's later ones.
    const order: string[] = [];
    const sessions = ['X', 'Y', 'Z'].map(() => kernel!.createSession({ onTextDelta: (delta) => order.push(delta) }));
    const runs: Promise<string>[] = [];
    for (const [index, session] of sessions.entries()) {
      runs.push(session.run(['X', 'Y', 'Z'][index]!));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(runs);
    expect(order.indexOf('Z1')).toBeLessThan(order.indexOf('X3'));
    expect(order.filter((text) => text.endsWith('1'))).toEqual(['X1', 'Y1', 'Z1']);
    await Promise.all(sessions.map((session) => session.shutdown()));
    expect(kernel.describe().hooks.afterProviderResponse?.map((tap) => tap.name)).toContain('session-hub:fair-rounds');
  });

  it('an abort while a session waits in the queue ends the run: the waiting tool call is skipped, the model is not asked again', async () => {
    const provider = new ScriptedProvider({ turns: threeRounds });
    kernel = await threeRoundKernel([fairRoundsPlugin()], provider);
    const session = kernel.createSession();
    const controller = new AbortController();
    const running = session.run('A', { signal: controller.signal });
    // The first reply comes in the microtasks after this line, then the session waits in the queue; this runs before the queue does.
    setImmediate(() => controller.abort());
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(provider.callCount).toBe(1);
    expect(session.getHistory().filter((message) => message.role === 'assistant').map((message) => message.state)).toEqual(['complete']);
    // The reply's tool call waited in the queue; the abort came first, so it never ran.
    expect(JSON.stringify(session.getHistory().at(-1))).toContain('aborted');
    await session.shutdown();
  });
});
