// The three agent-loop contenders. Each is loaded on its own (dynamic imports)
// so that a child process running one contender never loads the others'
// modules, which keeps peak RSS per contender honest.
//
// Every contender exposes:
//   loop(rounds)          -> ms for one full run of the tool-round script
//   stream(deltas, size)  -> ms for one model call streaming deltas x size chars
// and throws if the run did not do exactly what the script asked.

import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { BENCH_DIR } from './common.mjs';

export const CONTENDERS = ['tessera', 'hand', 'pi'];
/**
 * Tessera without any observer (no hook taps beyond the preset's, no callbacks, no listener),
 * and the same with exactly one `session.subscribe` listener: their ratio is the cost of the
 * event stream. `tessera-interactive` runs the same script through an `InteractiveSession`
 * (events, tool states, timeline entries, one more save): its ratio to bare is the facade's cost.
 */
export const EVENT_STREAM_CONTENDERS = ['tessera-bare', 'tessera-subscribed', 'tessera-interactive'];

function expect(condition, contender, message) {
  if (!condition) throw new Error(`[${contender}] correctness check failed: ${message}`);
}

function makeChunks(deltas, size) {
  return new Array(deltas).fill('y'.repeat(size));
}

const OBSERVER = 'bench:observe-all';

async function tessera(mode = 'observed') {
  const [{ createKernel, definePlugin, toolsPlugin, Stage, InteractiveSession }, { InMemorySessionStore }, { testPreset }, workload] = await Promise.all([
    import('@tessera/kernel'),
    import('@tessera/kernel/testing'),
    import('@tessera/preset-test'),
    import('./workload.mjs'),
  ]);
  const script = workload.createScript();
  const counter = { calls: 0 };
  const echo = workload.createEchoTool(counter);

  // One no-op observer on every hook the kernel has. A synchronous tap returning
  // undefined is valid on every tapable hook type (sync, async series, bail,
  // waterfall) and is the cheapest legitimate observer.
  const noop = () => undefined;
  const observeEverything = definePlugin({
    name: OBSERVER,
    register({ hooks }) {
      for (const hook of Object.values(hooks)) hook.tap({ name: OBSERVER, stage: Stage.Observe }, noop);
    },
  });

  // The preset's own store type, passed in so that each run's record can be
  // dropped after the run (untimed): otherwise the store keeps every session of
  // every run and later runs pay for an ever larger heap. Subclassed only to
  // count saves (a correctness check: every run persists its session).
  const store = new (class extends InMemorySessionStore {
    saves = 0;
    save(record) {
      this.saves += 1;
      super.save(record);
    }
  })();
  const kernel = await createKernel({
    plugins: testPreset({ provider: script.provider, store, plugins: [toolsPlugin(echo), mode === 'observed' && observeEverything] }),
  });
  const finish = async (session) => {
    await session.shutdown();
    store.delete(session.sessionId);
  };
  const tapped = kernel.describe().hooks;
  if (mode === 'observed') {
    for (const name of Object.keys(kernel.hooks)) {
      expect(tapped[name]?.some((tap) => tap.name === OBSERVER), 'tessera', `observer missing on hook "${name}"`);
    }
  }

  let chunks;
  return {
    async loop(rounds) {
      script.startLoop(rounds);
      const executedBefore = counter.calls;
      let deltas = 0;
      const onTextDelta = () => {
        deltas += 1;
      };
      const savesBefore = store.saves;
      const t0 = performance.now();
      if (mode === 'interactive') {
        const interactive = new InteractiveSession({ kernel });
        interactive.on('text_delta', onTextDelta);
        const result = await interactive.submit('go');
        const ms = performance.now() - t0;
        const history = interactive.getMessages().length;
        const saved = store.saves - savesBefore;
        const sessionId = interactive.getSessionId();
        await interactive.shutdown();
        store.delete(sessionId);
        expect(script.problem() === undefined, 'tessera', script.problem());
        expect(result.response === workload.FINAL_TEXT, 'tessera', `final text ${JSON.stringify(result.response)}`);
        expect(counter.calls - executedBefore === rounds, 'tessera', `${counter.calls - executedBefore} echo executions, expected ${rounds}`);
        expect(deltas === rounds + 1, 'tessera', `${deltas} text deltas, expected ${rounds + 1}`);
        expect(history === 2 * rounds + 2, 'tessera', `${history} history messages, expected ${2 * rounds + 2}`);
        expect(result.toolSummaries.length === rounds, 'tessera', `${result.toolSummaries.length} tool summaries, expected ${rounds}`);
        expect(saved === 1, 'tessera', `session saved ${saved} times during submit(), expected 1`);
        return ms;
      }
      const session = kernel.createSession();
      if (mode === 'subscribed') {
        session.subscribe((event) => {
          if (event.type === 'text_delta') deltas += 1;
        });
      }
      const text = await session.run('go', mode === 'observed' ? { onTextDelta } : undefined);
      const ms = performance.now() - t0;
      if (mode === 'bare') deltas = rounds + 1; // nothing listens: the count cannot be observed
      const saved = store.saves - savesBefore;
      const history = session.getHistory().length;
      await finish(session);

      expect(script.problem() === undefined, 'tessera', script.problem());
      expect(text === workload.FINAL_TEXT, 'tessera', `final text ${JSON.stringify(text)}`);
      expect(counter.calls - executedBefore === rounds, 'tessera', `${counter.calls - executedBefore} echo executions, expected ${rounds}`);
      expect(script.calls() === rounds + 1, 'tessera', `${script.calls()} model calls, expected ${rounds + 1}`);
      expect(deltas === rounds + 1, 'tessera', `${deltas} text deltas, expected ${rounds + 1}`);
      expect(history === 2 * rounds + 2, 'tessera', `${history} history messages, expected ${2 * rounds + 2}`);
      expect(saved === 1, 'tessera', `session saved ${saved} times during run(), expected 1`);
      return ms;
    },
    async stream(deltas, size) {
      chunks ??= makeChunks(deltas, size);
      script.startStream(chunks);
      let chars = 0;
      const onTextDelta = (delta) => {
        chars += delta.length;
      };
      const savesBefore = store.saves;
      const t0 = performance.now();
      const session = kernel.createSession();
      const text = await session.run('go', { onTextDelta });
      const ms = performance.now() - t0;
      const saved = store.saves - savesBefore;
      await finish(session);

      expect(saved === 1, 'tessera', `session saved ${saved} times during run(), expected 1`);
      expect(chars === deltas * size, 'tessera', `${chars} streamed chars, expected ${deltas * size}`);
      expect(text.length === deltas * size, 'tessera', `final text has ${text.length} chars`);
      expect(script.calls() === 1, 'tessera', `${script.calls()} model calls, expected 1`);
      return ms;
    },
  };
}

async function hand() {
  const workload = await import('./workload.mjs');
  const script = workload.createScript();
  const counter = { calls: 0 };
  const tools = [workload.createEchoTool(counter)];

  let chunks;
  return {
    async loop(rounds) {
      script.startLoop(rounds);
      const executedBefore = counter.calls;
      let deltas = 0;
      const onTextDelta = () => {
        deltas += 1;
      };
      const t0 = performance.now();
      const { text, messages } = await workload.handLoop({ provider: script.provider, tools, prompt: 'go', onTextDelta });
      const ms = performance.now() - t0;

      expect(script.problem() === undefined, 'hand', script.problem());
      expect(text === workload.FINAL_TEXT, 'hand', `final text ${JSON.stringify(text)}`);
      expect(counter.calls - executedBefore === rounds, 'hand', `${counter.calls - executedBefore} echo executions, expected ${rounds}`);
      expect(script.calls() === rounds + 1, 'hand', `${script.calls()} model calls, expected ${rounds + 1}`);
      expect(deltas === rounds + 1, 'hand', `${deltas} text deltas, expected ${rounds + 1}`);
      expect(messages.length === 2 * rounds + 2, 'hand', `${messages.length} messages, expected ${2 * rounds + 2}`);
      return ms;
    },
    async stream(deltas, size) {
      chunks ??= makeChunks(deltas, size);
      script.startStream(chunks);
      let chars = 0;
      const onTextDelta = (delta) => {
        chars += delta.length;
      };
      const t0 = performance.now();
      const { text } = await workload.handLoop({ provider: script.provider, tools, prompt: 'go', onTextDelta });
      const ms = performance.now() - t0;

      expect(chars === deltas * size, 'hand', `${chars} streamed chars, expected ${deltas * size}`);
      expect(text.length === deltas * size, 'hand', `final text has ${text.length} chars`);
      expect(script.calls() === 1, 'hand', `${script.calls()} model calls, expected 1`);
      return ms;
    },
  };
}

async function pi() {
  const { runPiAgentLoop, runPiBigStream } = await import(pathToFileURL(join(BENCH_DIR, 'peers', 'pi-agent-loop.mjs')).href);
  return {
    async loop(rounds) {
      const t0 = performance.now();
      const result = await runPiAgentLoop({ rounds, deltasPerRound: 1, deltaText: 'x', finalText: 'done' });
      const ms = performance.now() - t0;
      expect(result.finalText === 'done', 'pi', `final text ${JSON.stringify(result.finalText)}`);
      expect(result.rounds === rounds, 'pi', `${result.rounds} successful echo results, expected ${rounds}`);
      expect(result.deltas === rounds + 1, 'pi', `${result.deltas} text deltas, expected ${rounds + 1}`);
      return ms;
    },
    async stream(deltas, size) {
      const t0 = performance.now();
      const chars = await runPiBigStream({ deltas, deltaSize: size });
      const ms = performance.now() - t0;
      expect(chars === deltas * size, 'pi', `${chars} streamed chars, expected ${deltas * size}`);
      return ms;
    },
  };
}

export async function loadContender(name) {
  switch (name) {
    case 'tessera':
      return tessera();
    case 'tessera-bare':
      return tessera('bare');
    case 'tessera-subscribed':
      return tessera('subscribed');
    case 'tessera-interactive':
      return tessera('interactive');
    case 'hand':
      return hand();
    case 'pi':
      return pi();
    default:
      throw new Error(`unknown contender "${name}" (expected ${CONTENDERS.join(', ')})`);
  }
}
