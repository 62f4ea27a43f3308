import { SessionStore } from '@tessera/contracts';
import { definePlugin, type Plugin } from '@tessera/kernel';
import { JsonlSessionStore, type JsonlSessionStoreOptions } from './jsonl-session-store.js';

/**
 * Provides `SessionStore` backed by JSONL session trees. Pass options, or a store instance
 * when the test needs to reach it. Replaces the in-memory store in `testPreset({ replace })`.
 */
export function jsonlSessionStore(options: JsonlSessionStoreOptions | JsonlSessionStore = {}): Plugin {
  const store = options instanceof JsonlSessionStore ? options : new JsonlSessionStore(options);
  return definePlugin({
    name: 'session-store-jsonl',
    provides: [SessionStore],
    register({ bind }) {
      bind(SessionStore).toConstantValue(store);
    },
    // Sessions save during kernel shutdown before plugins stop, so closing here loses nothing.
    async shutdown() {
      await store.close();
    },
  });
}
