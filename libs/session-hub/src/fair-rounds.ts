import { definePlugin, type Plugin } from '@tessera/kernel';

export const FAIR_ROUNDS_PLUGIN_NAME = 'session-hub:fair-rounds';

/** Settles in the event loop's next check phase, after the I/O that was waiting (a new request). */
function afterPendingIo(): Promise<undefined> {
  return new Promise((resolve) => setImmediate(resolve, undefined));
}

/**
 * For a host that runs many sessions on one event loop (`tessera serve`, `tessera acp`, the MCP
 * server): before each model call, the session yields to the event loop. Without it a turn whose
 * model and tools answer without real I/O (a fast provider, cached reads) runs every round in one
 * go, and the requests that arrived meanwhile, new prompts among them, wait for whole turns; with
 * it they wait for a round. A turn pays one event-loop hop per round (microseconds beside a model
 * call), so it is not in the single-session CLI preset.
 */
export function fairRoundsPlugin(): Plugin {
  return definePlugin({
    name: FAIR_ROUNDS_PLUGIN_NAME,
    register({ hooks }) {
      hooks.beforeProviderRequest.tapPromise({ name: FAIR_ROUNDS_PLUGIN_NAME }, afterPendingIo);
    },
  });
}
