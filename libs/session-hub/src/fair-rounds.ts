import { definePlugin, type Plugin } from '@tessera/kernel';

export const FAIR_ROUNDS_PLUGIN_NAME = 'session-hub:fair-rounds';

/**
 * Resumes waiting sessions one per event-loop iteration, first come first served: between two
 * of them the loop polls for I/O, so a request that arrived meanwhile is read and answered.
 */
class RoundPacer {
  /** Non-empty exactly while a pump is scheduled. */
  readonly #waiting: Array<(value: undefined) => void> = [];

  readonly #pump = (): void => {
    const next = this.#waiting.shift()!;
    // Re-armed before `next` runs: its round, and anything it queues, comes after the poll.
    if (this.#waiting.length > 0) setImmediate(this.#pump);
    next(undefined);
  };

  /** Settles when this caller's turn comes: after the rounds queued before it, each in its own loop iteration. */
  wait(): Promise<undefined> {
    return new Promise((resolve) => {
      if (this.#waiting.push(resolve) === 1) setImmediate(this.#pump);
    });
  }
}

/**
 * For a host that runs many sessions on one event loop (`tessera serve`, `tessera acp`, the MCP
 * server). A turn streams its first model reply as soon as its request is read; after each reply
 * (before its tools run, or before the turn ends) the session waits in a queue that resumes one
 * session per event-loop iteration, so the loop reads new requests between any two steps of
 * the sessions already running, and a new prompt's first text waits for no one's tools or later
 * rounds. Without it, a turn whose model and tools answer without real I/O (a fast provider,
 * cached reads) runs all its rounds in one go, and requests that arrived meanwhile wait for
 * whole turns of every session ahead of them. Costs a round one event-loop hop (microseconds
 * beside a model call); the single-session CLI preset does not include it, as there is nobody
 * to make way for.
 */
export function fairRoundsPlugin(): Plugin {
  const pacer = new RoundPacer();
  return definePlugin({
    name: FAIR_ROUNDS_PLUGIN_NAME,
    register({ hooks }) {
      hooks.afterProviderResponse.tapPromise({ name: FAIR_ROUNDS_PLUGIN_NAME }, async () => {
        await pacer.wait();
      });
    },
  });
}
