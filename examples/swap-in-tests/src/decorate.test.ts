// Way 3: `decorate`. The service stays whatever the composition bound; a plugin wraps it each
// time it is resolved. Use it to inject a fault or observe calls without replacing anything.
import { Provider, TesseraError, type ToolMessage } from '@tessera/contracts';
import { createKernel, defineTool, definePlugin, toolsPlugin, type Plugin } from '@tessera/kernel';
import { ScriptedProvider } from '@tessera/plugin-provider-scripted';
import { testPreset } from '@tessera/preset-test';
import { expect, it } from 'vitest';
import { z } from 'zod';

/**
 * Lets the bound model answer every call but the `round`-th, which fails as an overloaded API
 * would. It counts the calls it sees; in a test with one run, call 3 is round 3.
 */
function failOnRound(round: number): Plugin {
  return definePlugin({
    name: 'fail-on-round',
    register({ decorate }) {
      decorate(Provider, (model) => {
        let calls = 0;
        return {
          name: model.name,
          model: model.model,
          getModelInfo: model.getModelInfo?.bind(model),
          stream: (request) => {
            calls += 1;
            if (calls !== round) return model.stream(request);
            return Promise.reject(new TesseraError('Overloaded', { code: 'overloaded', category: 'provider', recoverable: true }));
          },
        };
      });
    },
  });
}

it('the third model call fails; the first two rounds and their tool results stay in history', async () => {
  const step = defineTool({
    name: 'step',
    description: 'Take one step',
    inputSchema: z.object({ n: z.number() }),
    execute: ({ n }) => ({ success: true, output: `step ${n} done` }),
  });
  // A scripted model that never stops asking for another step: only the fault ends the run.
  const scripted = new ScriptedProvider({ turns: ({ index }) => ({ toolCalls: [{ name: 'step', input: { n: index + 1 } }] }) });
  const kernel = await createKernel({ plugins: testPreset({ provider: scripted, plugins: [toolsPlugin(step), failOnRound(3)] }) });

  // maxTurns bounds the run should the fault ever stop firing.
  const session = kernel.createSession({ maxTurns: 5 });
  await expect(session.run('Walk.')).rejects.toMatchObject({ code: 'overloaded' });

  const steps = session.getHistory().filter((message): message is ToolMessage => message.role === 'tool');
  expect(steps.map((message) => message.content[0]!.content)).toEqual(['step 1 done', 'step 2 done']);
  // The scripted model is still bound underneath the wrapper: the third call never reached it.
  expect(scripted.callCount).toBe(2);
  expect(kernel.get(Provider)).not.toBe(scripted);
  expect(kernel.describe().decorated).toEqual({ Provider: ['fail-on-round'] });
  await kernel.shutdown();
});
